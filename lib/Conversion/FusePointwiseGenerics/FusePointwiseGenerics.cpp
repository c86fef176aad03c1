//===- FusePointwiseGenerics.cpp - Fuse a step's pointwise generics -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Upstream's elementwise fusion (linalg-fuse-elementwise-ops) merges a
// producer into any linalg.generic consumer, a contraction included, as soon
// as the producer has one use. For a cell whose GEMM reads a pointwise value
// (Cho's GRU: R_n (r ⊙ h)) that is a loss twice over: the fused body
// recomputes the producer (a sigmoid, say) once per reduction step, K times
// per output element, and the contraction, no longer a plain GEMM, is not
// given to cuBLAS. Whether the producer has another use is no guard: a
// tensor.dim of it (a run-time check's) is one, and folding such dims away
// changes what fuses. Nor is a contraction a place for a reshape: see
// below. This pass applies the same patterns with a consumer condition:
// only generics whose loops are all parallel take producers and reshapes
// in.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/FusePointwiseGenerics/FusePointwiseGenerics.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_FUSEPOINTWISEGENERICSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Upstream's condition: the producer has no other use.
static bool hasOneUse(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  return producer && producer->hasOneUse();
}

/// Fuses a producer with one use into a consumer without reduction loops.
static bool isFusible(OpOperand *operand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  return hasOneUse(operand) && consumer &&
         consumer.getNumLoops() == consumer.getNumParallelLoops();
}

struct FusePointwiseGenericsPass
    : lstm::impl::FusePointwiseGenericsPassBase<FusePointwiseGenericsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, isFusible);
    // Reshapes fold into pointwise generics only: folded into a GEMM over
    // [T·B] rows (the hoisted input projection, a weight gradient), the
    // collapse_shape of its [T, B, K] operand would split its rows into two
    // loops, a reduction over both of them for a weight gradient, which is
    // no GEMM cuBLAS is given (a generated kernel, 150 ms instead of 9 for
    // the large configuration's dW).
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, isFusible);
    tensor::populateBubbleUpExpandShapePatterns(patterns);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    linalg::populateConstantFoldLinalgOperations(patterns, hasOneUse);
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
