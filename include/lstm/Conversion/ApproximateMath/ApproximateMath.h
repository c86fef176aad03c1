//===- ApproximateMath.h - f32 math functions as polynomials ----*- C++ -*-===//

#ifndef LSTM_CONVERSION_APPROXIMATEMATH_APPROXIMATEMATH_H
#define LSTM_CONVERSION_APPROXIMATEMATH_APPROXIMATEMATH_H

#include "mlir/Pass/Pass.h"

namespace mlir::lstm {

#define GEN_PASS_DECL_APPROXIMATEMATHPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_APPROXIMATEMATH_APPROXIMATEMATH_H
