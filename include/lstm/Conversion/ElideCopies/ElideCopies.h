//===- ElideCopies.h - Buffers written where they are copied ----*- C++ -*-===//

#ifndef LSTM_CONVERSION_ELIDECOPIES_ELIDECOPIES_H
#define LSTM_CONVERSION_ELIDECOPIES_ELIDECOPIES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lstm {

#define GEN_PASS_DECL_ELIDECOPIESPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_ELIDECOPIES_ELIDECOPIES_H
