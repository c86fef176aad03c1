//===- Wavefront.cpp - Stacked layers as a layer-time wavefront -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A stack of L layers run one after the other takes L·T sequential steps,
// each too small to fill a GPU. Cell (l, t) only needs (l-1, t) and
// (l, t-1), so the cells of a diagonal l + t = d are independent: this pass
// runs the L + T - 1 diagonals in order and, within a diagonal, all L
// layers' cells as one batched cell (batched gates over weights stacked
// [L, H, K], pointwise math on [L, B, H]). WavefrontPlan.cpp decides which
// chains qualify, WavefrontBuilder.cpp builds the loop; this file is the
// pass: which chains it rewrites at which batch sizes.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"

#include "WavefrontPlan.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Transforms/Transforms.h"
#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMWAVEFRONTPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

namespace {
struct LSTMWavefrontPass
    : lstm::impl::LSTMWavefrontPassBase<LSTMWavefrontPass> {
  using Base::Base;

  /// The chain as a wavefront at the batch sizes where it pays: above the
  /// persistent kernels' bound (persistent) and, for a chain that stores
  /// outputs, up to the bound of side-output-max-product; as layers
  /// elsewhere. Statically where the batch size is known, else through
  /// scf.if on it.
  void rewriteChain(RewriterBase &rewriter, ArrayRef<LayerOp> chain) {
    std::optional<ChainLink> link = linkBetween(chain[0], chain[1]);
    if (link && link->projection && !productLinks)
      return;
    // The loop goes where the last layer is: what the chain does not read
    // but runs between its layers goes after it first.
    sinkIndependentOpsBelowChain(rewriter, chain);
    if (fewerProductsOnly) {
      FailureOr<WavefrontPlan> plan = planWavefront(chain);
      if (failed(plan) || !wavefrontRunsFewerProducts(*plan))
        return;
    }
    int64_t most = wavefrontMaxBatch(chain, sideOutputMaxProduct);
    if (most < 1)
      return;
    int64_t least = persistent ? persistentStackMaxBatch(chain) : 0;
    auto input =
        cast<RankedTensorType>(LayerOp(chain.front()).getInputs()[0].getType());
    if (!input.isDynamicDim(1)) {
      int64_t batch = input.getDimSize(1);
      if (batch > least && batch <= most)
        (void)wavefrontLayers(rewriter, chain);
      return;
    }
    bool bounded = most != std::numeric_limits<int64_t>::max();
    if (least >= most)
      return;
    if (least < 1) {
      if (bounded)
        (void)wavefrontUpToBatch(rewriter, chain, most);
      else
        (void)wavefrontLayers(rewriter, chain);
      return;
    }
    // Layers for the kernels up to `least`; above it the wavefront, up to
    // `most` where it is bounded.
    (void)wavefrontAboveBatch(rewriter, chain, least, most);
  }

  void runOnOperation() override {
    // Layers that statically run no step (T or B of 0) are what they
    // compute before anything else looks at them (EmptyLayers.h).
    replaceEmptyLayers(getOperation());
    // The layers' cells without repeated computations (a backward cell
    // assembles its gates' gradients twice: for its product and for its
    // output, which the product on the link output is recognised by), then
    // the layers as the canonicaliser leaves them: a sequence that a cell
    // does not read would otherwise be gathered a diagonal at a time, and
    // an output that yields the same value as another (the backward cell's
    // dG, once for the input weights' gradient and once for the recurrent
    // weights', the same value after CSE) stored twice.
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance;
    SmallVector<Operation *> layers;
    getOperation()->walk([&](LayerOp layer) {
      eliminateCommonSubExpressions(rewriter, dominance, layer);
      layers.push_back(layer);
    });
    RewritePatternSet patterns(&getContext());
    LayerOp::getCanonicalizationPatterns(patterns, &getContext());
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(layers, std::move(patterns), config);
    for (const SmallVector<LayerOp> &chain : findLayerChains(getOperation()))
      rewriteChain(rewriter, chain);
  }
};
} // namespace
