//===- CombineGateGemms.cpp - One GEMM per shared gate operand ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The gates of a cell mostly multiply the same operands (x_t, h_{t-1}) by
// different weights. G small GEMMs on one operand waste the matrix units
// that one [B, K] x [K, G·H] GEMM keeps busy, so the products of a group are
// combined against the stacked weight and each gate takes its columns of the
// result back as an addend.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"
#include "lstm/Dialect/LSTM/Transforms/Stacking.h"
#include "lstm/Dialect/LSTM/Transforms/Transforms.h"

#include "lstm/Dialect/LSTM/Analysis/CellDependence.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMCOMBINEGATEGEMMSPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

/// Keeps the products whose weight is defined above `layer`: only those can
/// be packed once before the time loop. Returns an empty group when fewer
/// than two gates remain.
static SmallVector<GateProduct> packableProducts(LayerOp layer,
                                                 ArrayRef<GateProduct> group) {
  SmallVector<GateProduct> kept;
  llvm::SmallPtrSet<Operation *, 8> gates;
  for (const GateProduct &product : group) {
    if (layer.getBody().isAncestor(product.getWeight().getParentRegion()))
      continue;
    kept.push_back(product);
    gates.insert(product.gate);
  }
  if (gates.size() < 2)
    kept.clear();
  return kept;
}

/// Rewrites one combinable group of `layer`: packs the weights before the
/// layer, computes the combined product before the group's first gate, and
/// hands each gate its slice as an addend. The moved products are appended to
/// `removed` as (gate, index) and left in place, so that the indices of other
/// groups' products stay valid until all groups are done.
static void combineGroup(RewriterBase &rewriter, LayerOp layer,
                         ArrayRef<GateProduct> group,
                         SmallVectorImpl<GateProduct> &removed) {
  Location loc = layer.getLoc();
  rewriter.setInsertionPoint(layer);

  SmallVector<Value> weights;
  int64_t rows = 0;
  for (const GateProduct &product : group) {
    weights.push_back(product.getWeight());
    rows += cast<RankedTensorType>(product.getWeight().getType()).getDimSize(0);
  }
  Value packed = buildStack(rewriter, loc, /*dim=*/0, weights);

  // Every gate of the group reads the operand, so it is defined before the
  // first of them; the combined product goes right before that gate.
  Operation *first = group.front().gate;
  for (const GateProduct &product : group)
    if (product.gate->isBeforeInBlock(first))
      first = product.gate;
  rewriter.setInsertionPoint(first);
  Value operand = group.front().getOperand();
  auto operandType = cast<RankedTensorType>(operand.getType());
  auto combinedType = RankedTensorType::get({operandType.getDimSize(0), rows},
                                            operandType.getElementType());
  Value combined = GateOp::create(rewriter, first->getLoc(), combinedType,
                                  Activation::identity, ValueRange{operand},
                                  ValueRange{packed}, ValueRange{},
                                  ValueRange{}, Value(), Value())
                       .getResult();

  // Slice k is columns [offset_k, offset_k + H_k) of the combined result.
  OpFoldResult batch =
      tensor::getMixedSize(rewriter, first->getLoc(), combined, 0);
  int64_t offset = 0;
  for (GateProduct product : group) {
    int64_t height =
        cast<RankedTensorType>(product.getWeight().getType()).getDimSize(0);
    auto sliceType = RankedTensorType::get({operandType.getDimSize(0), height},
                                           operandType.getElementType());
    Value slice = tensor::ExtractSliceOp::create(
        rewriter, product.gate.getLoc(), sliceType, combined,
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                               rewriter.getIndexAttr(offset)},
        ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(height)},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                               rewriter.getIndexAttr(1)});
    rewriter.modifyOpInPlace(
        product.gate, [&] { product.gate.getAddendsMutable().append(slice); });
    removed.push_back(product);
    offset += height;
  }
}

LogicalResult mlir::lstm::combineGateGemms(RewriterBase &rewriter,
                                           LayerOp layer) {
  // The groups are decided on the original cell; rewriting one group does
  // not change which values the others depend on.
  CellDependence deps(layer);
  SmallVector<SmallVector<GateProduct>> groups;
  for (const SmallVector<GateProduct> &group : deps.getCombinableGroups())
    if (SmallVector<GateProduct> kept = packableProducts(layer, group);
        !kept.empty())
      groups.push_back(std::move(kept));
  if (groups.empty())
    return failure();

  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<GateProduct> removed;
  for (const SmallVector<GateProduct> &group : groups)
    combineGroup(rewriter, layer, group, removed);
  eraseGateProducts(rewriter, removed);
  return success();
}

namespace {
struct LSTMCombineGateGemmsPass
    : lstm::impl::LSTMCombineGateGemmsPassBase<LSTMCombineGateGemmsPass> {
  void runOnOperation() override {
    // Layers that statically run no step (T or B of 0) are what they
    // compute before anything else looks at them (EmptyLayers.h).
    replaceEmptyLayers(getOperation());
    SmallVector<LayerOp> layers;
    getOperation()->walk([&](LayerOp layer) { layers.push_back(layer); });
    IRRewriter rewriter(&getContext());
    for (LayerOp layer : layers)
      (void)combineGateGemms(rewriter, layer);
  }
};

} // namespace
