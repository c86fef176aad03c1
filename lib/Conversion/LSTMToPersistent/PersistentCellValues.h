//===- PersistentCellValues.h - How a cell assembles and slices values ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Helpers of planPersistentLayer (PersistentPlan.cpp): the tensor-level
// forms in which a cell builds and reads the values a persistent kernel
// computes element by element.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCELLVALUES_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCELLVALUES_H

#include "PersistentPlan.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <map>
#include <optional>

namespace mlir::lstm::persistent {

/// Whether `v` is defined outside the cell of `layer`.
inline bool isDefinedAboveLayer(Value v, LayerOp layer) {
  return !layer.getBody().isAncestor(v.getParentRegion());
}

/// A concatenation being assembled by insert_slices: the value's pieces
/// by column offset, and its width.
struct PartialConcat {
  int64_t width = 0;
  std::map<int64_t, Computed> pieces;
};

/// Whether `op` is an elementwise arith or math op on [B, W] f32 tensors,
/// all of one type, that no lstm.pointwise holds (lstm-fuse-elementwise
/// leaves a group of one op as it is).
bool isLoneElementwise(Operation *op);

/// The concatenation `partial` if its pieces are `width` (N) wide and
/// cover its columns, else nullopt.
std::optional<Concat> completeConcat(const PartialConcat &partial,
                                     int64_t width);

/// The concatenation that `insert` extends, or nullopt: a whole N-wide
/// pointwise result written at a static column into every row of a
/// partial concatenation.
std::optional<PartialConcat>
extendConcat(tensor::InsertSliceOp insert, int64_t width,
             const DenseMap<Value, Computed> &computed,
             const DenseMap<Value, PartialConcat> &partials);

/// The column offset and width of a slice [0, c] [B, w] [1, 1] of a
/// [B, M] value, or nullopt.
std::optional<std::pair<int64_t, int64_t>>
columnRange(tensor::ExtractSliceOp slice);

/// The column offset of a slice [0, c] [B, width] [1, 1] of a [B, M] value,
/// or nullopt.
std::optional<int64_t> columnSlice(tensor::ExtractSliceOp slice, int64_t width);

/// The concatenation that `slice` takes of a concatenation: whole rows,
/// columns of whole N-wide pieces (Cho's GRU's [dr dz] of dG = [dr dz dn]);
/// or nullopt.
std::optional<PartialConcat>
sliceConcat(tensor::ExtractSliceOp slice, int64_t width,
            const DenseMap<Value, PartialConcat> &partials);

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCELLVALUES_H
