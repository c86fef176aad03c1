//===- CollapseBeforeSlice.cpp - Reshape whole tensors, then slice --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Bufferization makes a tensor.collapse_shape a view only where the
// source's layout provably allows it; a slice with a dynamic outer stride
// does not, so collapsing it copies it. Collapsing the whole tensor (an
// allocation of identity layout) and slicing that is a view twice.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/CollapseBeforeSlice/CollapseBeforeSlice.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SmallBitVector.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_COLLAPSEBEFORESLICEPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Whether `size` is the whole extent `dim` of `source`: equal static
/// extents, the value of `tensor.dim %source, dim`, or the value the op
/// that made `source` takes that extent from.
bool isWholeExtent(OpFoldResult size, Value source, int64_t dim) {
  auto type = cast<RankedTensorType>(source.getType());
  if (std::optional<int64_t> known = getConstantIntValue(size))
    return !type.isDynamicDim(dim) && *known == type.getDimSize(dim);
  auto dimOp =
      dyn_cast_or_null<tensor::DimOp>(cast<Value>(size).getDefiningOp());
  if (dimOp && dimOp.getSource() == source && dimOp.getConstantIndex() == dim)
    return true;
  // Canonicalisation folds a `tensor.dim` of these ops into what they take
  // their extents from: an expansion's output shape; any operand of a
  // concatenation along another dimension (a layer's start states,
  // [h0; y_0 .. y_{T-2}], sliced to T whole rows).
  if (auto expand = source.getDefiningOp<tensor::ExpandShapeOp>())
    return expand.getMixedOutputShape()[dim] == size;
  if (auto concat = source.getDefiningOp<tensor::ConcatOp>())
    return static_cast<int64_t>(concat.getDim()) != dim &&
           llvm::any_of(concat.getInputs(), [&](Value input) {
             return isWholeExtent(size, input, dim);
           });
  return false;
}

/// a · b, folded where both are constants.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult lhs,
                      OpFoldResult rhs) {
  std::optional<int64_t> l = getConstantIntValue(lhs),
                         r = getConstantIntValue(rhs);
  if (l && r)
    return b.getIndexAttr(*l * *r);
  if (l == 0 || r == 0)
    return b.getIndexAttr(0);
  if (l == 1)
    return rhs;
  if (r == 1)
    return lhs;
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, lhs),
                               getValueOrCreateConstantIndexOp(b, loc, rhs))
      .getResult();
}

/// a + b, folded where both are constants.
OpFoldResult add(OpBuilder &b, Location loc, OpFoldResult lhs,
                 OpFoldResult rhs) {
  std::optional<int64_t> l = getConstantIntValue(lhs),
                         r = getConstantIntValue(rhs);
  if (l && r)
    return b.getIndexAttr(*l + *r);
  if (l == 0)
    return rhs;
  if (r == 0)
    return lhs;
  return arith::AddIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, lhs),
                               getValueOrCreateConstantIndexOp(b, loc, rhs))
      .getResult();
}

/// The extent `dim` of `source`: static, or its `tensor.dim`.
OpFoldResult extentOf(OpBuilder &b, Location loc, Value source, int64_t dim) {
  auto type = cast<RankedTensorType>(source.getType());
  if (!type.isDynamicDim(dim))
    return b.getIndexAttr(type.getDimSize(dim));
  return tensor::DimOp::create(b, loc, source, dim).getResult();
}

/// collapse_shape(extract_slice(x)) -> extract_slice(collapse_shape(x)).
struct CollapseBeforeSlice : OpRewritePattern<tensor::CollapseShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::CollapseShapeOp collapse,
                                PatternRewriter &rewriter) const override {
    auto slice = collapse.getSrc().getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice)
      return rewriter.notifyMatchFailure(collapse, "not of a slice");
    Value source = slice.getSource();
    if (!slice.hasUnitStride())
      return rewriter.notifyMatchFailure(slice, "has non-unit strides");
    // A collapse to rank 0 (of a slice of ones) has no group to slice in.
    if (collapse.getReassociationIndices().empty())
      return rewriter.notifyMatchFailure(collapse, "collapses to rank 0");
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    Location loc = collapse.getLoc();

    // The collapse's groups in the source's dimensions: a dimension the
    // slice drops (of size 1) joins the group of the next one it keeps
    // (the last group where none follows), e.g. a layer's [T, B, N] view
    // [l, t0, 0, 0] of a store [L, D, B, N] collapsed to [T·B, N] is the
    // slice [l·D·B + t0·B] of the store collapsed to [L·D·B, N].
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    SmallVector<int64_t> keptDims;
    for (int64_t d = 0, e = offsets.size(); d < e; ++d)
      if (!dropped.test(d))
        keptDims.push_back(d);
    SmallVector<ReassociationIndices> groups;
    int64_t next = 0;
    for (const ReassociationIndices &group :
         collapse.getReassociationIndices()) {
      groups.emplace_back();
      for (int64_t last = keptDims[group.back()]; next <= last; ++next)
        groups.back().push_back(next);
    }
    for (int64_t e = offsets.size(); next < e; ++next)
      groups.back().push_back(next);

    SmallVector<OpFoldResult> newOffsets, newSizes;
    for (const ReassociationIndices &group : groups) {
      // Within a group: dimensions of size 1 (at any offset), then one that
      // may be sliced, then whole ones, whose extents multiply the offsets
      // and the size of the dimensions before them.
      unsigned outer = 0;
      while (outer + 1 < group.size() &&
             isConstantIntValue(sizes[group[outer]], 1))
        ++outer;
      for (int64_t d : ArrayRef(group).drop_front(outer + 1))
        if (!isConstantIntValue(offsets[d], 0) ||
            !isWholeExtent(sizes[d], source, d))
          return rewriter.notifyMatchFailure(
              slice, "slices an inner dimension of a collapsed group");
      OpFoldResult offset = rewriter.getIndexAttr(0);
      OpFoldResult inner = rewriter.getIndexAttr(1);
      for (int64_t k = group.size() - 1; k >= 0; --k) {
        int64_t d = group[k];
        if (k <= static_cast<int64_t>(outer)) {
          OpFoldResult term = multiply(rewriter, loc, offsets[d], inner);
          offset = add(rewriter, loc, offset, term);
        }
        // Above the sliced dimension the step is the source's extent.
        inner = multiply(rewriter, loc, inner,
                         k > static_cast<int64_t>(outer)
                             ? sizes[d]
                             : extentOf(rewriter, loc, source, d));
      }
      OpFoldResult size = sizes[group[outer]];
      for (int64_t d : ArrayRef(group).drop_front(outer + 1))
        size = multiply(rewriter, loc, size, sizes[d]);
      newOffsets.push_back(offset);
      newSizes.push_back(size);
    }

    Value whole =
        tensor::CollapseShapeOp::create(rewriter, loc, source, groups);
    SmallVector<OpFoldResult> strides(newOffsets.size(),
                                      rewriter.getIndexAttr(1));
    Value result = tensor::ExtractSliceOp::create(
        rewriter, loc, whole, newOffsets, newSizes, strides);
    if (result.getType() != collapse.getType())
      result =
          tensor::CastOp::create(rewriter, loc, collapse.getType(), result);
    rewriter.replaceOp(collapse, result);
    return success();
  }
};

struct CollapseBeforeSlicePass
    : lstm::impl::CollapseBeforeSlicePassBase<CollapseBeforeSlicePass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<CollapseBeforeSlice>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
