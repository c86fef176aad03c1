//===- Matmul.h - Recognising a plain matrix product -------------*- C++
//-*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// lstm-differentiate writes a layer's input gradient dX = dG · W as a
// linalg contraction over all steps; the passes that link a stack's
// backward layers through it (lstm-wavefront's product-links, the
// persistent stack kernels) recognise it here.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_UTILS_MATMUL_H
#define LSTM_DIALECT_LSTM_UTILS_MATMUL_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <utility>

namespace mlir::lstm {

/// The operands {A, B} of `op` if it is the product A · B of two matrices
/// into a zero-filled [M, N] on tensors: linalg.matmul, or a linalg op of
/// its indexing maps, iterators and contraction body.
std::optional<std::pair<Value, Value>> matchZeroFilledMatmul(Operation *op);

/// The linalg.fill that makes `value` a tensor of (floating-point) zeros, if
/// one does.
linalg::FillOp getZeroFill(Value value);

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_UTILS_MATMUL_H
