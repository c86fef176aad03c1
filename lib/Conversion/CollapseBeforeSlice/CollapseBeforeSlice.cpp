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

namespace mlir::lstm {
#define GEN_PASS_DEF_COLLAPSEBEFORESLICEPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Whether `size` is the whole extent `dim` of `source`: equal static
/// extents, or the value of `tensor.dim %source, dim`.
bool isWholeExtent(OpFoldResult size, Value source, int64_t dim) {
  auto type = cast<RankedTensorType>(source.getType());
  if (std::optional<int64_t> known = getConstantIntValue(size))
    return !type.isDynamicDim(dim) && *known == type.getDimSize(dim);
  auto dimOp =
      dyn_cast_or_null<tensor::DimOp>(cast<Value>(size).getDefiningOp());
  if (!dimOp || dimOp.getSource() != source)
    return false;
  std::optional<int64_t> index = dimOp.getConstantIndex();
  return index && *index == dim;
}

/// a · b, folded where both are constants.
OpFoldResult multiply(OpBuilder &b, Location loc, OpFoldResult lhs,
                      OpFoldResult rhs) {
  std::optional<int64_t> l = getConstantIntValue(lhs),
                         r = getConstantIntValue(rhs);
  if (l && r)
    return b.getIndexAttr(*l * *r);
  if (l == 1)
    return rhs;
  if (r == 1)
    return lhs;
  return arith::MulIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, lhs),
                               getValueOrCreateConstantIndexOp(b, loc, rhs))
      .getResult();
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
    auto sourceType = cast<RankedTensorType>(source.getType());
    if (sourceType.getRank() != slice.getType().getRank() ||
        !slice.hasUnitStride())
      return rewriter.notifyMatchFailure(
          slice, "drops dimensions or has non-unit strides");
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
    Location loc = collapse.getLoc();

    SmallVector<OpFoldResult> newOffsets, newSizes;
    for (ReassociationIndices group : collapse.getReassociationIndices()) {
      // The group's outer dimension may be sliced; the inner ones must be
      // whole, and their extents multiply the outer offset and size.
      OpFoldResult inner = rewriter.getIndexAttr(1);
      for (int64_t d : ArrayRef(group).drop_front()) {
        if (!isConstantIntValue(offsets[d], 0) ||
            !isWholeExtent(sizes[d], source, d))
          return rewriter.notifyMatchFailure(
              slice, "slices an inner dimension of a collapsed group");
        inner = multiply(rewriter, loc, inner, sizes[d]);
      }
      newOffsets.push_back(
          multiply(rewriter, loc, offsets[group.front()], inner));
      newSizes.push_back(multiply(rewriter, loc, sizes[group.front()], inner));
    }

    Value whole = tensor::CollapseShapeOp::create(
        rewriter, loc, source, collapse.getReassociationIndices());
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
