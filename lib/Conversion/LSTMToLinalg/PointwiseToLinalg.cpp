//===- PointwiseToLinalg.cpp - lstm.pointwise to one linalg.generic -------===//
//
// An `lstm.pointwise` is the fused pointwise work of a step: it becomes one
// `linalg.generic` over [B, N] whose body is the op's region, so that
// bufferization and the GPU lowering see a single loop nest (one kernel).
// Rank-2 operands are read at (b, n), rank-1 operands at (n).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

struct PointwiseOpLowering : OpRewritePattern<PointwiseOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(PointwiseOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();

    // The verifier guarantees a [B, N] operand: it gives both extents.
    Value rows;
    for (Value v : op.getInputs())
      if (cast<RankedTensorType>(v.getType()).getRank() == 2) {
        rows = v;
        break;
      }
    if (!rows)
      return rewriter.notifyMatchFailure(op, "no [B, N] operand");

    AffineExpr bd, nd;
    bindDims(ctx, bd, nd);
    auto rowMap = AffineMap::get(2, 0, {bd, nd}, ctx);
    auto vecMap = AffineMap::get(2, 0, {nd}, ctx);
    SmallVector<AffineMap> maps;
    for (auto [i, v] : llvm::enumerate(op.getInputs())) {
      if (cast<RankedTensorType>(v.getType()).getRank() == 2) {
        assertSameExtent(rewriter, loc, v, 0, rows, 0,
                         "lstm.pointwise: operand #" + Twine(i) +
                             " has a different batch size than the others");
        assertSameExtent(rewriter, loc, v, 1, rows, 1,
                         "lstm.pointwise: operand #" + Twine(i) +
                             " has a different number of columns than the "
                             "others");
        maps.push_back(rowMap);
      } else {
        assertSameExtent(rewriter, loc, v, 0, rows, 1,
                         "lstm.pointwise: operand #" + Twine(i) +
                             " does not have one element per column");
        maps.push_back(vecMap);
      }
    }

    SmallVector<Value> outs;
    for (Type type : op.getResultTypes()) {
      auto t = cast<RankedTensorType>(type);
      outs.push_back(tensor::EmptyOp::create(
          rewriter, loc, t.getShape(), t.getElementType(),
          dynamicSizes(rewriter, loc, t, {{rows, 0}, {rows, 1}})));
      maps.push_back(rowMap);
    }

    auto generic = linalg::GenericOp::create(
        rewriter, loc, op.getResultTypes(), op.getInputs(), outs, maps,
        {utils::IteratorType::parallel, utils::IteratorType::parallel});
    // The region is already the scalar body: move it, give it the (unused)
    // arguments of the outputs and swap the terminator.
    Region &body = generic.getRegion();
    rewriter.inlineRegionBefore(op.getBody(), body, body.end());
    Block &block = body.front();
    for (Type type : op.getResultTypes())
      block.addArgument(getElementTypeOrSelf(type), loc);
    auto yield = cast<PointwiseYieldOp>(block.getTerminator());
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<linalg::YieldOp>(yield, yield.getValues());
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void mlir::lstm::populatePointwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<PointwiseOpLowering>(patterns.getContext());
}
