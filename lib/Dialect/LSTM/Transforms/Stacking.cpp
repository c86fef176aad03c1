//===- Stacking.cpp - Stacking per-gate values into one tensor ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/Transforms/Stacking.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

/// The slice of one source that `parts` are together, if they are adjacent
/// unit-stride slices along `dim`, in order, and equal elsewhere.
static Value sliceOfSource(OpBuilder &b, Location loc, int64_t dim,
                           ValueRange parts) {
  auto first = parts.front().getDefiningOp<tensor::ExtractSliceOp>();
  if (!first || first.getSourceType().getRank() != first.getType().getRank())
    return Value();
  Value source = first.getSource();
  SmallVector<OpFoldResult> offsets = first.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = first.getMixedSizes();
  std::optional<int64_t> begin = getConstantIntValue(offsets[dim]);
  std::optional<int64_t> end;
  if (begin)
    if (std::optional<int64_t> size = getConstantIntValue(sizes[dim]))
      end = *begin + *size;
  if (!end)
    return Value();
  // The first part is compared by index, not by value: a part may repeat
  // (two gates on the same weight block), and a repeat is not adjacent.
  for (auto [index, part] : llvm::enumerate(parts)) {
    auto slice = part.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || slice.getSource() != source ||
        slice.getType().getRank() != slice.getSourceType().getRank() ||
        !llvm::all_of(slice.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return Value();
    for (int64_t d = 0, e = offsets.size(); d < e; ++d) {
      if (d == dim)
        continue;
      if (slice.getMixedOffsets()[d] != offsets[d] ||
          slice.getMixedSizes()[d] != sizes[d])
        return Value();
    }
    if (index == 0)
      continue;
    std::optional<int64_t> offset =
        getConstantIntValue(slice.getMixedOffsets()[dim]);
    std::optional<int64_t> size =
        getConstantIntValue(slice.getMixedSizes()[dim]);
    if (!offset || !size || *offset != *end)
      return Value();
    *end += *size;
  }
  sizes[dim] = b.getIndexAttr(*end - *begin);
  // All of the source: the source itself.
  auto sourceType = cast<RankedTensorType>(source.getType());
  bool whole = true;
  for (int64_t d = 0, e = offsets.size(); d < e; ++d) {
    std::optional<int64_t> o =
        d == dim ? begin : getConstantIntValue(offsets[d]);
    std::optional<int64_t> n = getConstantIntValue(sizes[d]);
    whole &= o == 0 && n && !sourceType.isDynamicDim(d) &&
             *n == sourceType.getDimSize(d);
  }
  if (whole)
    return source;
  SmallVector<OpFoldResult> strides(offsets.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, source, offsets, sizes,
                                        strides);
}

Value lstm::buildStack(OpBuilder &b, Location loc, int64_t dim,
                       ValueRange parts) {
  if (parts.size() == 1)
    return parts.front();
  if (Value slice = sliceOfSource(b, loc, dim, parts))
    return slice;
  return tensor::ConcatOp::create(b, loc, dim, parts);
}
