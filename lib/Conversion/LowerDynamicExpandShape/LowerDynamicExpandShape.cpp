//===- LowerDynamicExpandShape.cpp - expand_shape as reinterpret_cast -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// LLVM 22's expand-strided-metadata crashes on a memref.expand_shape with
// more than one dynamic extent in one reassociation group
// (llvm/llvm-project#186830, fixed for LLVM 23): it infers the sizes of a
// group from the source instead of reading `output_shape`. Splitting a
// [T·B, N] buffer back into [T, B, N] with T and B dynamic is exactly that
// case (lstm-hoist-input-projection emits it, and linalg's reshape
// propagation moves such reshapes onto other buffers). On a contiguous
// buffer the expanded view is a plain row-major reinterpret_cast whose
// sizes are the op's `output_shape`, which every later pass handles.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/LowerDynamicExpandShape/LowerDynamicExpandShape.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_LOWERDYNAMICEXPANDSHAPEPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Whether some reassociation group of `op` has several dynamic extents.
static bool hasGroupWithSeveralDynamicExtents(memref::ExpandShapeOp op) {
  MemRefType type = op.getResultType();
  for (const ReassociationIndices &group : op.getReassociationIndices())
    if (llvm::count_if(group, [&](int64_t d) { return type.isDynamicDim(d); }) >
        1)
      return true;
  return false;
}

struct ExpandShapeToReinterpretCast : OpRewritePattern<memref::ExpandShapeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(memref::ExpandShapeOp op,
                                PatternRewriter &rewriter) const override {
    if (!hasGroupWithSeveralDynamicExtents(op))
      return rewriter.notifyMatchFailure(op, "handled upstream");
    // Identity layouts are contiguous, row-major and at offset 0: the
    // expanded view is fully described by its sizes.
    if (!op.getSrcType().getLayout().isIdentity() ||
        !op.getResultType().getLayout().isIdentity())
      return rewriter.notifyMatchFailure(op, "source is not contiguous");

    Location loc = op.getLoc();
    SmallVector<OpFoldResult> sizes = op.getMixedOutputShape();
    SmallVector<OpFoldResult> strides(sizes.size());
    // stride[i] = size[i+1] * stride[i+1]; constant where the trailing sizes
    // are, as the result type's (identity) strides are.
    OpFoldResult stride = rewriter.getIndexAttr(1);
    for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
      strides[i] = stride;
      std::optional<int64_t> a = getConstantIntValue(stride);
      std::optional<int64_t> b = getConstantIntValue(sizes[i]);
      if (a && b) {
        stride = rewriter.getIndexAttr(*a * *b);
        continue;
      }
      stride = arith::MulIOp::create(
                   rewriter, loc,
                   getValueOrCreateConstantIndexOp(rewriter, loc, stride),
                   getValueOrCreateConstantIndexOp(rewriter, loc, sizes[i]))
                   .getResult();
    }
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, op.getResultType(), op.getSrc(), rewriter.getIndexAttr(0), sizes,
        strides);
    return success();
  }
};

struct LowerDynamicExpandShapePass
    : lstm::impl::LowerDynamicExpandShapePassBase<LowerDynamicExpandShapePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandShapeToReinterpretCast>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
