//===- TF32.h - Rounding fp32 values to TF32 --------------------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// TF32 keeps fp32's sign and exponent and the top 10 bits of its mantissa:
// the persistent kernels' mma.sync operands and lstm-split-tf32-gemms's
// parts of a cuBLAS product's operands round to it the same way.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_TF32_H
#define LSTM_CONVERSION_UTILS_TF32_H

#include "mlir/IR/Builders.h"

namespace mlir::lstm {

/// `value` (f32) rounded to TF32 (to nearest, ties away from zero, as PTX's
/// cvt.rna: half of the 13 dropped bits' weight added to the magnitude, then
/// those bits cleared), as the i32 of its bits (an mma.sync operand;
/// bitcast it for the f32 value).
Value roundToTF32(OpBuilder &b, Location loc, Value value);

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_UTILS_TF32_H
