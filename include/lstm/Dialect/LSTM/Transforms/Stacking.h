//===- Stacking.h - Stacking per-gate values into one tensor ----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The passes that combine gates stack their weights and biases along the
// rows. Cells usually take those per-gate blocks as slices of one stacked
// parameter (nn.LSTM's weight_ih is [4H, I]); stacking them again in order is
// the parameter itself, and copying it at every call would cost a kernel per
// block on the GPU.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_TRANSFORMS_STACKING_H
#define LSTM_DIALECT_LSTM_TRANSFORMS_STACKING_H

#include "mlir/IR/Builders.h"

namespace mlir::lstm {

/// `parts` concatenated along dimension `dim`: the single part itself; a
/// slice of their common source when they are, in order, adjacent unit-stride
/// slices of it that agree on every other dimension (the source itself when
/// they cover it, after folding); a `tensor.concat` otherwise.
Value buildStack(OpBuilder &b, Location loc, int64_t dim, ValueRange parts);

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_STACKING_H
