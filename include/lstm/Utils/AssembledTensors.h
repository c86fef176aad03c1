//===- AssembledTensors.h - Tensors built from column pieces ----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A backward cell assembles its gates' gradients from the pointwise
// results of each gate: `tensor.insert_slice`s of whole rows into the
// columns of a `tensor.empty`. Cho's GRU's assembles two such values, the
// gradients of all three gates and of two of them, the second the first's
// leading columns. These helpers find the pieces of such a value and
// whether one is a slice of another.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_UTILS_ASSEMBLEDTENSORS_H
#define LSTM_UTILS_ASSEMBLEDTENSORS_H

#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::lstm {

/// A value that fills the columns [offset, offset + width) of the last
/// dimension of an assembled tensor, and the whole of every other.
struct ColumnPiece {
  Value value;
  int64_t offset, width;
};

/// The static extent of `v`'s last dimension, if it has one.
std::optional<int64_t> getColumnWidth(Value v);

/// Whether `size` is all of dimension `d` of `v`: its static extent, a
/// `tensor.dim` of `v` there, or the size that the `tensor.empty` at the
/// root of `v`'s chain of `tensor.insert_slice`s was made with.
bool isWholeExtent(OpFoldResult size, Value v, int64_t d);

/// The pieces of `v`, sorted by column and disjoint: those of a chain of
/// `tensor.insert_slice`s, each of whole extents but in the last
/// dimension, ending in `v` and starting from a `tensor.empty`, or from
/// another value that is then a piece of all columns below the others; or
/// `v` itself as one piece. Columns no piece covers are left out (an
/// empty tensor's are undefined). None if the inserts overlap.
std::optional<SmallVector<ColumnPiece>> getColumnPieces(Value v);

/// Whether `pieces` cover the columns [0, width) without a gap.
bool coverColumns(ArrayRef<ColumnPiece> pieces, int64_t width);

/// The column at which `part` is a slice of `whole` in the last dimension
/// (both of the same extents in every other): `part` is a
/// `tensor.extract_slice` of `whole` there, or every piece of `part`, which
/// its pieces cover, is a piece of `whole` at that column plus its own
/// offset.
std::optional<int64_t> getSliceColumn(Value part, Value whole);

} // namespace mlir::lstm

#endif // LSTM_UTILS_ASSEMBLEDTENSORS_H
