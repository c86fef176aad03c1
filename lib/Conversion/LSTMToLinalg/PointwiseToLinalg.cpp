//===- PointwiseToLinalg.cpp - lstm.pointwise to one linalg.generic -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// An `lstm.pointwise` is the fused pointwise work of a step: it becomes one
// `linalg.generic` over [B, N] (or [L, B, N] for the batched cell of a
// wavefront) whose body is the op's region, so that bufferization and the
// GPU lowering see a single loop nest (one kernel). Operands of the results'
// rank are read at (l, b, n), the others, without the batch, at (l, n).
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

struct PointwiseOpLowering : OpConversionPattern<PointwiseOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(PointwiseOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();

    // The verifier guarantees an operand of the results' rank: it gives
    // every extent. Operands one rank lower lack the batch extent.
    int64_t rank = cast<RankedTensorType>(op.getResult(0).getType()).getRank();
    int64_t batchDim = rank - 2;
    ValueRange inputs = adaptor.getInputs();
    Value full;
    for (Value v : inputs)
      if (cast<RankedTensorType>(v.getType()).getRank() == rank) {
        full = v;
        break;
      }
    if (!full)
      return rewriter.notifyMatchFailure(op, "no operand of the results' rank");

    auto fullMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
    auto broadcastMap = fullMap.dropResult(batchDim);
    static const char *dimNames[2][3] = {
        {"batch size", "number of columns"},
        {"number of layers", "batch size", "number of columns"}};
    SmallVector<AffineMap> maps;
    for (auto [i, v] : llvm::enumerate(inputs)) {
      bool isFull = cast<RankedTensorType>(v.getType()).getRank() == rank;
      int64_t dim = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (!isFull && d == batchDim)
          continue;
        std::string what = isFull ? "has a different " +
                                        std::string(dimNames[rank - 2][d]) +
                                        " than the others"
                                  : "does not have the others' " +
                                        std::string(dimNames[rank - 2][d]);
        assertSameExtent(rewriter, loc, v, dim++, full, d,
                         "lstm.pointwise: operand #" + Twine(i) + " " + what);
      }
      maps.push_back(isFull ? fullMap : broadcastMap);
    }

    SmallVector<std::pair<Value, int64_t>> extents;
    for (int64_t d = 0; d < rank; ++d)
      extents.push_back({full, d});
    SmallVector<Value> outs;
    for (Type type : op.getResultTypes()) {
      auto t = cast<RankedTensorType>(type);
      outs.push_back(tensor::EmptyOp::create(
          rewriter, loc, t.getShape(), t.getElementType(),
          dynamicSizes(rewriter, loc, t, extents)));
      maps.push_back(fullMap);
    }

    auto generic = linalg::GenericOp::create(
        rewriter, loc, op.getResultTypes(), inputs, outs, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel));
    // The region is already the scalar body: merge it into the generic's
    // block (whose extra arguments, the outputs' elements, it does not
    // read) and swap the terminator.
    SmallVector<Type> argTypes;
    SmallVector<Location> argLocs;
    for (Value v : llvm::concat<Value>(inputs, outs)) {
      argTypes.push_back(getElementTypeOrSelf(v.getType()));
      argLocs.push_back(loc);
    }
    Block *block =
        rewriter.createBlock(&generic.getRegion(), {}, argTypes, argLocs);
    Block &cell = op.getBody().front();
    auto yield = cast<PointwiseYieldOp>(cell.getTerminator());
    rewriter.setInsertionPoint(yield);
    rewriter.replaceOpWithNewOp<linalg::YieldOp>(yield, yield.getValues());
    rewriter.mergeBlocks(&cell, block,
                         block->getArguments().take_front(inputs.size()));
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void mlir::lstm::populatePointwiseToLinalgPatterns(
    RewritePatternSet &patterns) {
  patterns.add<PointwiseOpLowering>(patterns.getContext());
}
