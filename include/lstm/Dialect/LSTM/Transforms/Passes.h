//===- Passes.h - Rewrites of the lstm dialect ------------------*- C++ -*-===//

#ifndef LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_H
#define LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir::lstm {

#define GEN_PASS_DECL
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_H
