//===- ProductExtents.h - A product's extents before its loops -*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The f32 contractions that lstm-split-tf32-gemms and
// lstm-transpose-loop-weights rewrite, and their extents, read where a
// step's product runs or built before the loops around it: what
// lstm-split-tf32-gemms tests before it splits a step's weights, and
// lstm-transpose-loop-weights asks the runtime about before it transposes
// them.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_PRODUCTEXTENTS_H
#define LSTM_CONVERSION_UTILS_PRODUCTEXTENTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SmallVector.h"

#include <array>
#include <optional>

namespace mlir::lstm {

/// A contraction's loop dimensions: its rows (m), columns (n), reduction
/// (k) and batch, and where the reduction is in each input.
struct Contraction {
  unsigned m, n, k;
  SmallVector<unsigned> batch;
  std::array<int64_t, 2> reductionPositions;
};

/// `op` as a contraction on tensors of f32 inputs into an f32 accumulator
/// with one row, column and reduction dimension (and any batch); nothing
/// if it is not one.
std::optional<Contraction> matchF32Contraction(linalg::LinalgOp op);

/// The extent of the product's loop dimension `dim` as an input's size,
/// read at `b`'s insertion point; a null Value where no input has it.
Value extentHere(OpBuilder &b, linalg::LinalgOp op, unsigned dim);

/// The same extent built at `b`'s insertion point from the function's
/// arguments: as the loops around the product keep it where ValueBounds
/// proves that they do, else as the loops' states have it at their start
/// (not a proof: the product's own test must hold too); a null Value where
/// it cannot be built either way.
Value extentBeforeLoops(OpBuilder &b, linalg::LinalgOp op, unsigned dim);

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_UTILS_PRODUCTEXTENTS_H
