//===- WavefrontBuilder.cpp - The diagonal loop of a chain ----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A stack of L layers run one after the other takes L·T sequential steps,
// each too small to fill a GPU. Cell (l, t) only needs (l-1, t) and
// (l, t-1), so the cells of a diagonal l + t = d are independent: the loop
// runs the L + T - 1 diagonals in order and, within a diagonal, all L
// layers' cells as one batched cell (batched gates over weights stacked
// [L, H, K], pointwise math on [L, B, H]). WavefrontPlan.cpp decides which
// chains qualify; this file builds the loop and its diagonal's cell,
// WavefrontResults.cpp what each diagonal stores and carries on and what
// the loop's results replace.
//
//===----------------------------------------------------------------------===//

#include "WavefrontBuilder.h"
#include "WavefrontTensors.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Transforms/Passes.h"
#include "lstm/Dialect/LSTM/Transforms/Transforms.h"
#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::wavefront;

using Slot = WavefrontSlot;

static Location fusedLoc(ArrayRef<LayerOp> layers) {
  SmallVector<Location> locs;
  for (LayerOp layer : layers)
    locs.push_back(layer.getLoc());
  return FusedLoc::get(LayerOp(layers.front()).getContext(), locs);
}

WavefrontBuilder::WavefrontBuilder(RewriterBase &rewriter,
                                   const WavefrontPlan &plan)
    : rewriter(rewriter), plan(plan), ref(plan.reference()),
      refInput(plan.inputArg(plan.layers.size() - 1)),
      loc(fusedLoc(plan.layers)), numLayers(plan.layers.size()),
      numStates(ref.getInits().size()), reverse(ref.isReverse()),
      outType(cast<RankedTensorType>(
          ref.getYield().getOutputs()[plan.linkOutput].getType())) {
  for (Operation &op : ref.getBody().front())
    refOps.push_back(&op);
}

/// Captured tensors stacked once per call; equal lists share one stack.
/// Layer 0's input weights are used on their own (separateInput).
void WavefrontBuilder::stackCaptured() {
  SmallVector<std::pair<SmallVector<Value>, Value>> stacks;
  auto stackOnce = [&](ArrayRef<Value> values) {
    for (auto &[key, stacked] : stacks)
      if (ArrayRef<Value>(key) == values)
        return stacked;
    Value stacked =
        stackValues(rewriter, loc, values, "a value the cell captures");
    stacks.push_back({SmallVector<Value>(values), stacked});
    return stacked;
  };
  for (const auto &[slot, values] : plan.captured) {
    bool inputWeight = plan.separateInput &&
                       isInputWeight(refOps[slot.first], slot.second, refInput);
    stackedSlots[slot] =
        stackOnce(ArrayRef<Value>(values).drop_front(inputWeight ? 1 : 0));
  }
}

/// Layer 0's products on x (another input size) do not depend on the
/// recurrence: one product over all T·B rows before the loop, as
/// lstm-hoist-input-projection makes for a single layer, of which each
/// diagonal takes its step, instead of a small product per diagonal.
void WavefrontBuilder::projectLayer0Inputs() {
  if (!plan.separateInput)
    return;
  for (auto [position, refOp] : llvm::enumerate(refOps)) {
    auto gate = dyn_cast<GateOp>(refOp);
    if (!gate)
      continue;
    unsigned wBegin = gate.getODSOperandIndexAndLength(1).first;
    for (unsigned k = 0, e = gate.getInputs().size(); k < e; ++k) {
      if (gate.getInputs()[k] != refInput)
        continue;
      Slot slot = {static_cast<unsigned>(position), wBegin + k};
      inputProjections[slot] = projectSequence(
          rewriter, gate.getLoc(), x, plan.captured.lookup(slot).front());
    }
  }
}

Value WavefrontBuilder::storeStep(Value d) {
  if (!reverse)
    return d;
  return arith::SubIOp::create(
      rewriter, loc,
      arith::AddIOp::create(
          rewriter, loc, lastStep,
          arith::ConstantIndexOp::create(rewriter, loc, numLayers - 1)),
      d);
}

/// Loop-carried: the stacked states, the previous diagonal's outputs and
/// the last layer's output sequence. Each layer's lowering would have
/// checked that its initial states have the batch size of its input; the
/// stacked loop checks it for them.
SmallVector<Value> WavefrontBuilder::buildIterInits() {
  SmallVector<Value> iterInits;
  for (unsigned k = 0; k < numStates; ++k) {
    SmallVector<Value> inits;
    for (LayerOp layer : plan.layers) {
      inits.push_back(layer.getInits()[k]);
      lstm::assertSameExtent(rewriter, layer.getLoc(), inits.back(), 0, x, 1,
                             "lstm.layer: initial state #" + Twine(k) +
                                 " has a different batch size than the "
                                 "input");
    }
    iterInits.push_back(
        stackValues(rewriter, loc, inits, "initial state #" + Twine(k)));
  }
  // The previous diagonal's outputs, or with the link's products combined,
  // its link products.
  auto outsType = prependExtent(carriedRowType(), numLayers);
  SmallVector<Value> dynamic;
  if (outsType.isDynamicDim(1))
    dynamic.push_back(batch);
  if (outsType.isDynamicDim(2))
    dynamic.push_back(tensor::DimOp::create(rewriter, loc, x, 2));
  Value outs = tensor::EmptyOp::create(rewriter, loc, outsType.getShape(),
                                       outsType.getElementType(), dynamic);
  Value zero = arith::ConstantOp::create(
      rewriter, loc, rewriter.getZeroAttr(outsType.getElementType()));
  Value zeros = linalg::FillOp::create(rewriter, loc, zero, outs).getResult(0);
  if (gathersAhead()) {
    // The first diagonal's inputs: x at layer 0's first step and zeros
    // (none when T = 0, where that step does not exist and no diagonal
    // runs).
    Value any = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt,
                                      seqLen, c0);
    auto first = scf::IfOp::create(rewriter, loc, zeros.getType(), any,
                                   /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(first.thenBlock());
    Value below = takeRows(rewriter, loc, zeros, 0, numLayers - 1,
                           prependExtent(carriedRowType(), numLayers - 1));
    scf::YieldOp::create(rewriter, loc, gatherInputs(layer0Time(c0), below));
    rewriter.setInsertionPointToStart(first.elseBlock());
    scf::YieldOp::create(rewriter, loc, zeros);
    zeros = first.getResult(0);
  }
  iterInits.push_back(zeros);

  auto seqType =
      cast<RankedTensorType>(ref.getOutputs()[plan.linkOutput].getType());
  dynamic.clear();
  if (seqType.isDynamicDim(0))
    dynamic.push_back(seqLen);
  if (seqType.isDynamicDim(1))
    dynamic.push_back(batch);
  iterInits.push_back(tensor::EmptyOp::create(
      rewriter, loc, seqType.getShape(), seqType.getElementType(), dynamic));

  // The side outputs, [L, L + T - 1, B, N] each: diagonal by diagonal, as
  // the batched cell makes them, each layer's in a sequence of its own that
  // runs L - 1 steps longer than the layer (replaceLayers takes the layer's
  // steps out of it).
  Value numRows = arith::AddIOp::create(
      rewriter, loc, seqLen,
      arith::ConstantIndexOp::create(rewriter, loc, numLayers - 1));
  // A stored state is written a row ahead (storedState), and the link
  // outputs that the first diagonal reads a row behind (linkFromStore) are
  // zeros after the last row: one more row.
  Value numRowsAhead = arith::AddIOp::create(rewriter, loc, numRows, c1);
  for (unsigned k : plan.sideOutputs) {
    auto storeType =
        prependExtent(prependExtent(ref.getYield().getOutputs()[k].getType(),
                                    ShapedType::kDynamic),
                      numLayers);
    bool linkRow = linkFromStore() && k == plan.linkOutput;
    SmallVector<Value> sizes = {storedState(k) || linkRow ? numRowsAhead
                                                          : numRows};
    if (storeType.isDynamicDim(2))
      sizes.push_back(batch);
    Value store = tensor::EmptyOp::create(rewriter, loc, storeType.getShape(),
                                          storeType.getElementType(), sizes);
    if (linkRow)
      store = insertStep(rewriter, loc, iterInits[numStates], store, numRows);
    iterInits.push_back(store);
  }
  return iterInits;
}

/// L + T - 1 diagonals, none when T = 0 (layer 0 would read x[-1]).
Value WavefrontBuilder::buildDiagonalCount() {
  Value numDiagonals = arith::AddIOp::create(
      rewriter, loc, seqLen,
      arith::ConstantIndexOp::create(rewriter, loc, numLayers - 1));
  Value empty = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                      seqLen, c0);
  return arith::SelectOp::create(rewriter, loc, empty, c0, numDiagonals);
}

scf::ForOp WavefrontBuilder::build() {
  // Everything the chain reads is defined before its last layer.
  rewriter.setInsertionPoint(ref);
  x = LayerOp(plan.layers.front()).getInputs().front();
  seqLen = tensor::DimOp::create(rewriter, loc, x, 0);
  batch = tensor::DimOp::create(rewriter, loc, x, 1);
  c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
  c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
  lastStep = arith::SubIOp::create(rewriter, loc, seqLen, c1);

  stackCaptured();
  projectLayer0Inputs();
  stackLinkWeights();
  storeOtherSequences();
  SmallVector<Value> iterInits = buildIterInits();
  Value upper = buildDiagonalCount();
  auto loop = scf::ForOp::create(
      rewriter, loc, c0, upper, c1, iterInits,
      [&](OpBuilder &, Location, Value d, ValueRange iterArgs) {
        buildDiagonal(d, iterArgs);
      });
  // Tells the schedule report (and readers) what the loop is.
  rewriter.modifyOpInPlace(loop, [&] {
    loop->setAttr(kWavefrontLayersAttr, rewriter.getI64IntegerAttr(numLayers));
    loop->setAttr(
        kWavefrontDirectionAttr,
        rewriter.getStringAttr(stringifyDirection(ref.getDirection())));
  });
  finalSequence = loop.getResults()[numStates + 1];
  if (storesOutputLate()) {
    // The last diagonal's output (no diagonal when T = 0).
    rewriter.setInsertionPointAfter(loop);
    Value any = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt,
                                      upper, c0);
    auto last = scf::IfOp::create(rewriter, loc, finalSequence.getType(), any,
                                  /*withElseRegion=*/true);
    rewriter.setInsertionPointToStart(last.thenBlock());
    scf::YieldOp::create(
        rewriter, loc,
        insertLastOutput(arith::SubIOp::create(rewriter, loc, upper, c1),
                         loop.getResults()[numStates], finalSequence));
    rewriter.setInsertionPointToStart(last.elseBlock());
    scf::YieldOp::create(rewriter, loc, finalSequence);
    finalSequence = last.getResult(0);
  }
  replaceLayers(loop);
  return loop;
}

Value WavefrontBuilder::layer0Time(Value d) {
  // Layer 0 runs step min(d, T-1): past the end it is inactive and only
  // needs an in-bounds slice.
  Value step0 = arith::MinSIOp::create(rewriter, loc, d, lastStep);
  return reverse
             ? arith::SubIOp::create(rewriter, loc, lastStep, step0).getResult()
             : step0;
}

Value WavefrontBuilder::gatherInputs(Value time0, Value below) {
  Value x0 = extractStep(rewriter, loc, x, time0,
                         cast<RankedTensorType>(plan.inputArg(0).getType()));
  return prependRow(rewriter, loc, x0, below);
}

Value WavefrontBuilder::operandOf(Diagonal &diag, Operation *refOp,
                                  unsigned position, unsigned j) {
  if (Value stacked = stackedSlots.lookup({position, j}))
    return stacked;
  return diag.map.lookupOrDefault(refOp->getOperand(j));
}

// The body builder of scf.for runs with the rewriter itself, inserting into
// the loop body, so the ops below are created through it.
void WavefrontBuilder::buildDiagonal(Value d, ValueRange iterArgs) {
  Diagonal diag;
  diag.d = d;
  // The previous diagonal's last-layer output, first (storesOutputLate; at
  // d = 0 the carried zeros go to a row that a later diagonal overwrites).
  if (storesOutputLate())
    diag.sequence =
        insertLastOutput(arith::SubIOp::create(rewriter, loc, d, c1),
                         iterArgs[numStates], iterArgs[numStates + 1]);
  diag.row = storeStep(d);
  diag.time0 = layer0Time(d);
  // Layers 1 .. L-1 read the previous diagonal's outputs of 0 .. L-2
  // (times their links' weights where the links are products).
  auto belowType = prependExtent(carriedRowType(), numLayers - 1);
  if (gathersAhead()) {
    // Gathered by the diagonal before (before the loop for the first).
    diag.map.map(refInput, iterArgs[numStates]);
  } else if (linkFromStore()) {
    // The previous diagonal's row of the store: the next one up (reverse),
    // for the first diagonal the zeros after the last.
    Value store = iterArgs[*linkOutputStore()];
    Value rowBehind = arith::AddIOp::create(rewriter, loc, diag.row, c1);
    Value outs = extractStoreStep(rewriter, loc, store, rowBehind,
                                  prependExtent(outType, numLayers));
    diag.prevBelow = takeRows(rewriter, loc, outs, 0, numLayers - 1, belowType);
  } else {
    diag.prevBelow = takeRows(rewriter, loc, iterArgs[numStates], 0,
                              numLayers - 1, belowType);
  }
  if (linkWeights && !combinedPosition)
    diag.prevBelow = GateOp::create(
        rewriter, loc, prependExtent(plan.linkType(), numLayers - 1),
        Activation::identity, ValueRange{diag.prevBelow},
        ValueRange{linkWeights}, ValueRange{}, ValueRange{}, Value(), Value());
  // The other sequences: this diagonal's step of their stores.
  for (auto [i, store] : llvm::enumerate(otherSequences))
    diag.map.map(
        ref.getInputSlices()[i + 1],
        extractStoreStep(
            rewriter, loc, store, diag.row,
            prependExtent(ref.getInputSlices()[i + 1].getType(), numLayers)));
  // Layer 0 reads x_t (with another input size, only through the
  // projections made before the loop).
  if (!plan.separateInput && !gathersAhead())
    diag.map.map(refInput, gatherInputs(diag.time0, diag.prevBelow));
  for (auto [arg, state] :
       llvm::zip(ref.getStateArgs(), iterArgs.take_front(numStates)))
    diag.map.map(arg, state);

  for (auto [position, refOp] : llvm::enumerate(refOps)) {
    if (refOp->hasTrait<OpTrait::IsTerminator>())
      break;
    Operation *batched = nullptr;
    if (auto gate = dyn_cast<GateOp>(refOp))
      batched = combinedPosition == position
                    ? batchCombinedGate(diag, gate, position)
                    : batchGate(diag, gate, position);
    else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(refOp))
      batched = batchSlice(diag, slice, position);
    else if (auto insert = dyn_cast<tensor::InsertSliceOp>(refOp))
      batched = batchInsert(diag, insert, position);
    else if (auto empty = dyn_cast<tensor::EmptyOp>(refOp))
      batched = batchEmpty(diag, empty, position);
    else
      batched = batchOp(diag, refOp, position);
    if (batched)
      diag.map.map(refOp->getResults(), batched->getResults());
  }
  scf::YieldOp::create(rewriter, loc, buildNextIterArgs(diag, iterArgs));
}

Operation *WavefrontBuilder::batchGate(Diagonal &diag, GateOp gate,
                                       unsigned position) {
  Location opLoc = gate.getLoc();
  SmallVector<Value> inputs, weights, addends, biases;
  unsigned inBegin = gate.getODSOperandIndexAndLength(0).first;
  unsigned wBegin = gate.getODSOperandIndexAndLength(1).first;
  auto resultType = cast<RankedTensorType>(gate.getType());
  for (unsigned k = 0, e = gate.getInputs().size(); k < e; ++k) {
    Value weight = operandOf(diag, gate, position, wBegin + k);
    if (!plan.separateInput || gate.getInputs()[k] != refInput) {
      inputs.push_back(operandOf(diag, gate, position, inBegin + k));
      weights.push_back(weight);
      continue;
    }
    // Layer 0's product on x_t: its step of the projection made before the
    // loop; layers 1 .. L-1's as one batched product; stacked as an addend.
    Value head = extractStep(rewriter, opLoc,
                             inputProjections.lookup({position, wBegin + k}),
                             diag.time0, resultType);
    Value tail = GateOp::create(
        rewriter, opLoc, prependExtent(resultType, numLayers - 1),
        Activation::identity, ValueRange{diag.prevBelow}, ValueRange{weight},
        ValueRange{}, ValueRange{}, Value(), Value());
    addends.push_back(prependRow(rewriter, opLoc, head, tail));
  }
  unsigned aBegin = gate.getODSOperandIndexAndLength(2).first;
  for (unsigned a = 0, e = gate.getAddends().size(); a < e; ++a)
    addends.push_back(operandOf(diag, gate, position, aBegin + a));
  unsigned bBegin = gate.getODSOperandIndexAndLength(3).first;
  for (unsigned j = 0, e = gate.getBiases().size(); j < e; ++j)
    biases.push_back(operandOf(diag, gate, position, bBegin + j));
  Value peephole, peepholeState;
  if (gate.getPeephole()) {
    unsigned pBegin = gate.getODSOperandIndexAndLength(4).first;
    peephole = operandOf(diag, gate, position, pBegin);
    peepholeState = operandOf(diag, gate, position, pBegin + 1);
  }
  // A gate that only passed the input products on (the combined GEMM of
  // lstm-combine-gate-gemms) is the stack itself.
  if (inputs.empty() && addends.size() == 1 && biases.empty() && !peephole &&
      gate.getAddends().empty() &&
      gate.getActivation() == Activation::identity) {
    diag.map.map(gate.getResult(), addends.front());
    return nullptr;
  }
  return GateOp::create(rewriter, opLoc, prependExtent(resultType, numLayers),
                        gate.getActivation(), inputs, weights, addends, biases,
                        peephole, peepholeState);
}

SmallVector<OpFoldResult>
WavefrontBuilder::prependMixed(Diagonal &diag, SmallVector<OpFoldResult> values,
                               OpFoldResult first) {
  for (OpFoldResult &v : values)
    if (auto value = dyn_cast<Value>(v))
      v = diag.map.lookupOrDefault(value);
  values.insert(values.begin(), first);
  return values;
}

Operation *WavefrontBuilder::batchSlice(Diagonal &diag,
                                        tensor::ExtractSliceOp slice,
                                        unsigned position) {
  return tensor::ExtractSliceOp::create(
      rewriter, slice.getLoc(), prependExtent(slice.getType(), numLayers),
      operandOf(diag, slice, position, 0),
      prependMixed(diag, slice.getMixedOffsets(), rewriter.getIndexAttr(0)),
      prependMixed(diag, slice.getMixedSizes(),
                   rewriter.getIndexAttr(numLayers)),
      prependMixed(diag, slice.getMixedStrides(), rewriter.getIndexAttr(1)));
}

/// Every layer's slice inserted into its row: the backward cell assembles
/// its gates' gradients into one tensor this way.
Operation *WavefrontBuilder::batchInsert(Diagonal &diag,
                                         tensor::InsertSliceOp insert,
                                         unsigned position) {
  Value source = operandOf(diag, insert, position, 0);
  Value dest = operandOf(diag, insert, position, 1);
  // A rank-reducing insert stays one: its dropped unit extents keep their
  // positions behind the layers' extent.
  return tensor::InsertSliceOp::create(
      rewriter, insert.getLoc(), source, dest,
      prependMixed(diag, insert.getMixedOffsets(), rewriter.getIndexAttr(0)),
      prependMixed(diag, insert.getMixedSizes(),
                   rewriter.getIndexAttr(numLayers)),
      prependMixed(diag, insert.getMixedStrides(), rewriter.getIndexAttr(1)));
}

Operation *WavefrontBuilder::batchEmpty(Diagonal &diag, tensor::EmptyOp empty,
                                        unsigned position) {
  SmallVector<Value> sizes;
  for (unsigned j = 0, e = empty->getNumOperands(); j < e; ++j)
    sizes.push_back(operandOf(diag, empty, position, j));
  auto type = prependExtent(empty.getType(), numLayers);
  return tensor::EmptyOp::create(rewriter, empty.getLoc(), type.getShape(),
                                 type.getElementType(), sizes);
}

/// tensor.dim of a constant dimension, elementwise ops on batched operands
/// and ops without tensors.
Operation *WavefrontBuilder::batchOp(Diagonal &diag, Operation *refOp,
                                     unsigned position) {
  Location opLoc = refOp->getLoc();
  if (auto dim = dyn_cast<tensor::DimOp>(refOp)) {
    APInt index;
    (void)matchPattern(dim.getIndex(), m_ConstantInt(&index));
    Value shifted = arith::ConstantIndexOp::create(rewriter, opLoc,
                                                   index.getSExtValue() + 1);
    return tensor::DimOp::create(rewriter, opLoc,
                                 operandOf(diag, refOp, position, 0), shifted);
  }
  Operation *batched = rewriter.clone(*refOp, diag.map);
  rewriter.modifyOpInPlace(batched, [&] {
    for (unsigned j = 0, e = refOp->getNumOperands(); j < e; ++j)
      batched->setOperand(j, operandOf(diag, refOp, position, j));
    for (OpResult result : batched->getResults())
      if (isa<RankedTensorType>(result.getType()))
        result.setType(prependExtent(result.getType(), numLayers));
  });
  return batched;
}

FailureOr<scf::ForOp> mlir::lstm::wavefrontLayers(RewriterBase &rewriter,
                                                  ArrayRef<LayerOp> layers) {
  FailureOr<WavefrontPlan> plan = planWavefront(layers);
  if (failed(plan))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  return WavefrontBuilder(rewriter, *plan).build();
}
