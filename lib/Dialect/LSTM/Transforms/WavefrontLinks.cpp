//===- WavefrontLinks.cpp - A backward stack's wavefront
//-------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What the diagonal loop needs beyond a forward stack's for the backward of
// one (lstm-wavefront's product-links): layers that pass each other their
// outputs through a product (a layer's input gradient dG·W is the output
// gradient of the layer below), made a diagonal at a time and, where the
// cell multiplies the same output by its own weight, in the same product;
// and the other sequences every layer reads (its saved activations), laid
// out so that a diagonal reads every layer's step as one view.
//
//===----------------------------------------------------------------------===//

#include "WavefrontBuilder.h"
#include "WavefrontTensors.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Transforms/Stacking.h"
#include "lstm/Dialect/LSTM/Transforms/Transforms.h"
#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "lstm/Utils/AssembledTensors.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::wavefront;

using Slot = WavefrontSlot;

/// A link through a product takes the previous diagonal's output of layers
/// 0 .. L-2 against their weights, one batched product: the weights `[G, I]`
/// stacked and transposed once per call.
void WavefrontBuilder::stackLinkWeights() {
  if (plan.projections.empty())
    return;
  SmallVector<Value> weights;
  for (ProjectedLink link : plan.projections)
    weights.push_back(link.weight());
  Value stacked = stackValues(rewriter, loc, weights, "the link's weight");
  auto type = cast<RankedTensorType>(stacked.getType());
  Value init = tensor::EmptyOp::create(rewriter, loc,
                                       ArrayRef<int64_t>{type.getDimSize(0),
                                                         type.getDimSize(2),
                                                         type.getDimSize(1)},
                                       type.getElementType());
  linkWeights = linalg::TransposeOp::create(rewriter, loc, stacked, init,
                                            ArrayRef<int64_t>{0, 2, 1})
                    .getResult()
                    .front();
  combinedPosition = findLinkOutputProduct();
  if (!combinedPosition)
    return;
  auto gate = cast<GateOp>(refOps[*combinedPosition]);
  Value own = stackedSlots.lookup(
      {*combinedPosition, gate.getODSOperandIndexAndLength(1).first});
  auto linkType = cast<RankedTensorType>(linkWeights.getType());
  Value zero = arith::ConstantOp::create(
      rewriter, loc, rewriter.getZeroAttr(linkType.getElementType()));
  auto zeros = [&](ArrayRef<int64_t> shape) {
    Value empty = tensor::EmptyOp::create(rewriter, loc, shape,
                                          linkType.getElementType());
    return linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
  };
  // The gate reads columns [c, c + K') of the link output: its weights get
  // zero columns for the others, so that it reads the link output whole.
  auto ownType = cast<RankedTensorType>(own.getType());
  int64_t ownWidth = ownType.getDimSize(2);
  int64_t after = linkType.getDimSize(2) - combinedColumn - ownWidth;
  SmallVector<Value> ownColumns;
  if (combinedColumn > 0)
    ownColumns.push_back(
        zeros({numLayers, ownType.getDimSize(1), combinedColumn}));
  ownColumns.push_back(own);
  if (after > 0)
    ownColumns.push_back(zeros({numLayers, ownType.getDimSize(1), after}));
  if (ownColumns.size() > 1)
    own = buildStack(rewriter, loc, 2, ownColumns);
  Value pad = zeros({1, linkType.getDimSize(1), linkType.getDimSize(2)});
  Value padded = buildStack(rewriter, loc, 0, {linkWeights, pad});
  combinedWeights = buildStack(rewriter, loc, 1, {own, padded});
}

std::optional<unsigned> WavefrontBuilder::findLinkOutputProduct() {
  Value link = ref.getYield().getOutputs()[plan.linkOutput];
  auto linkType = cast<RankedTensorType>(linkWeights.getType());
  for (auto [position, op] : llvm::enumerate(refOps)) {
    auto gate = dyn_cast<GateOp>(op);
    if (!gate || gate.getActivation() != Activation::identity ||
        gate.getInputs().size() != 1 || !gate.getAddends().empty() ||
        !gate.getBiases().empty() || gate.getPeephole())
      continue;
    // The link output, or whole columns of it computed in the cell before
    // the gate (Cho's GRU's [dr dz] of dG): the combined product reads it
    // whole, batched as the cell's ops are.
    Value input = gate.getInputs()[0];
    std::optional<int64_t> column;
    Operation *def = link.getDefiningOp();
    if (input == link)
      column = 0;
    else if (def && def->getBlock() == gate->getBlock() &&
             def->isBeforeInBlock(gate))
      column = getSliceColumn(input, link);
    if (!column)
      continue;
    Value own =
        stackedSlots.lookup({static_cast<unsigned>(position),
                             gate.getODSOperandIndexAndLength(1).first});
    auto ownType = own ? dyn_cast<RankedTensorType>(own.getType()) : nullptr;
    if (!ownType || !ownType.hasStaticShape() || linkType.isDynamicDim(2) ||
        *column + ownType.getDimSize(2) > linkType.getDimSize(2))
      continue;
    combinedColumn = *column;
    return position;
  }
  return std::nullopt;
}

/// The gate of findLinkOutputProduct with the links' products appended to
/// its weight: its own columns are its result, the rest the diagonal's
/// link products.
Operation *WavefrontBuilder::batchCombinedGate(Diagonal &diag, GateOp gate,
                                               unsigned position) {
  Location opLoc = gate.getLoc();
  auto resultType = prependExtent(gate.getType(), numLayers);
  auto weightType = cast<RankedTensorType>(combinedWeights.getType());
  auto combinedType = RankedTensorType::get(
      {numLayers, resultType.getDimSize(1), weightType.getDimSize(1)},
      resultType.getElementType());
  // The link output whole (findLinkOutputProduct): the gate's input, or
  // the cell's value that the input takes columns of.
  Value link = ref.getYield().getOutputs()[plan.linkOutput];
  Value input = gate.getInputs()[0] == link
                    ? operandOf(diag, gate, position,
                                gate.getODSOperandIndexAndLength(0).first)
                    : diag.map.lookup(link);
  Value combined =
      GateOp::create(rewriter, opLoc, combinedType, Activation::identity,
                     ValueRange{input}, ValueRange{combinedWeights},
                     ValueRange{}, ValueRange{}, Value(), Value());
  auto columns = [&](int64_t begin, int64_t width) {
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, opLoc, combined);
    sizes[2] = rewriter.getIndexAttr(width);
    SmallVector<OpFoldResult> offsets(3, rewriter.getIndexAttr(0));
    offsets[2] = rewriter.getIndexAttr(begin);
    return tensor::ExtractSliceOp::create(
        rewriter, opLoc, combined, offsets, sizes,
        SmallVector<OpFoldResult>(3, rewriter.getIndexAttr(1)));
  };
  int64_t own = resultType.getDimSize(2);
  diag.linkProducts = columns(own, weightType.getDimSize(1) - own).getResult();
  return columns(0, own);
}

/// Each other sequence of the layers, laid out as the side outputs' stores
/// are: one step of the store holds what every layer reads on a diagonal.
/// The steps outside a layer's run are zeros (the inactive layers compute
/// on them, and their results are dropped).
void WavefrontBuilder::storeOtherSequences() {
  if (plan.numInputs == 1)
    return;
  Value numSteps = arith::AddIOp::create(
      rewriter, loc, seqLen,
      arith::ConstantIndexOp::create(rewriter, loc, numLayers - 1));
  for (unsigned i = 1; i < plan.numInputs; ++i) {
    auto seqType = cast<RankedTensorType>(ref.getInputs()[i].getType());
    auto storeType = prependExtent(
        prependExtent(RankedTensorType::get(seqType.getShape().drop_front(),
                                            seqType.getElementType()),
                      ShapedType::kDynamic),
        numLayers);
    SmallVector<Value> sizes = {numSteps};
    for (int64_t d = 1; d < seqType.getRank(); ++d)
      if (seqType.isDynamicDim(d))
        sizes.push_back(
            d == 1 ? batch
                   : tensor::DimOp::create(rewriter, loc, ref.getInputs()[i], d)
                         .getResult());
    Value store = tensor::EmptyOp::create(rewriter, loc, storeType.getShape(),
                                          storeType.getElementType(), sizes);
    Value zero = arith::ConstantOp::create(
        rewriter, loc, rewriter.getZeroAttr(storeType.getElementType()));
    SmallVector<OpFoldResult> storeSizes =
        tensor::getMixedSizes(rewriter, loc, store);
    SmallVector<OpFoldResult> ones(4, rewriter.getIndexAttr(1));
    auto insertRows = [&](Value rows, unsigned l, OpFoldResult step,
                          OpFoldResult count) {
      SmallVector<OpFoldResult> offsets = {rewriter.getIndexAttr(l), step,
                                           rewriter.getIndexAttr(0),
                                           rewriter.getIndexAttr(0)};
      SmallVector<OpFoldResult> rowSizes = {rewriter.getIndexAttr(1), count,
                                            storeSizes[2], storeSizes[3]};
      store = tensor::InsertSliceOp::create(rewriter, loc, rows, store, offsets,
                                            rowSizes, ones);
    };
    for (auto [l, layer] : llvm::enumerate(plan.layers)) {
      Value seq = LayerOp(layer).getInputs()[i];
      // What the layer's lowering would check (assertLayerExtents, whose
      // messages these are): layer 0's input #0 is x, the others' as long
      // and as wide as it.
      assertSameExtent(rewriter, LayerOp(layer).getLoc(), seq, 0, x, 0,
                       "lstm.layer: input #" + Twine(i) +
                           " has a different sequence length than input #0");
      assertSameExtent(rewriter, LayerOp(layer).getLoc(), seq, 1, x, 1,
                       "lstm.layer: input #" + Twine(i) +
                           " has a different batch size than input #0");
      int64_t before = storeFirstStep(l), after = numLayers - 1 - before;
      insertRows(seq, l, rewriter.getIndexAttr(before), seqLen);
      for (auto [step, count] :
           {std::pair<OpFoldResult, int64_t>{rewriter.getIndexAttr(0), before},
            {arith::AddIOp::create(
                 rewriter, loc, seqLen,
                 arith::ConstantIndexOp::create(rewriter, loc, before))
                 .getResult(),
             after}}) {
        if (count == 0)
          continue;
        auto padType = RankedTensorType::get(
            {count, storeType.getDimSize(2), storeType.getDimSize(3)},
            storeType.getElementType());
        SmallVector<Value> padSizes;
        for (int64_t d : {2, 3})
          if (storeType.isDynamicDim(d))
            padSizes.push_back(cast<Value>(storeSizes[d]));
        Value pad =
            linalg::FillOp::create(
                rewriter, loc, zero,
                tensor::EmptyOp::create(rewriter, loc, padType.getShape(),
                                        padType.getElementType(), padSizes)
                    .getResult())
                .getResult(0);
        insertRows(pad, l, step, rewriter.getIndexAttr(count));
      }
    }
    otherSequences.push_back(store);
  }
}

/// A link's product over whole sequences, now that the layer it fed is
/// gone. Its rows, if something else reads them too, go after the view of
/// the store they now read.
void WavefrontBuilder::eraseLinkProduct(ProjectedLink link) {
  rewriter.eraseOp(link.expand);
  Operation *fill = link.product.getDpsInits()[0].getDefiningOp();
  rewriter.eraseOp(link.product);
  if (fill->use_empty())
    rewriter.eraseOp(fill);
  if (link.rows->use_empty()) {
    rewriter.eraseOp(link.rows);
    return;
  }
  Operation *def = link.rows.getSrc().getDefiningOp();
  Block *block = link.rows->getBlock();
  if (!def || def->getBlock() != block || !link.rows->isBeforeInBlock(def))
    return;
  // The rows and what reads them before the view (e.g. their extent, which
  // the product's result was sized by) move after it, in order.
  llvm::SetVector<Operation *> moving;
  moving.insert(link.rows);
  for (unsigned i = 0; i < moving.size(); ++i)
    for (Operation *user : moving[i]->getUsers())
      if (Operation *op = block->findAncestorOpInBlock(*user);
          op && op->isBeforeInBlock(def))
        moving.insert(op);
  SmallVector<Operation *> ordered(moving.begin(), moving.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered) {
    rewriter.moveOpAfter(op, def);
    def = op;
  }
}
