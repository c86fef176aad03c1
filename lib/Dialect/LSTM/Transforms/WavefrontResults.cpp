//===- WavefrontResults.cpp - What a diagonal stores and the loop returns -===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The results side of lstm-wavefront's loop: what each diagonal carries on
// to the next (the states, with inactive layers keeping theirs, the
// outputs the next diagonal's layers read) and writes into the loop-carried
// stores (the last layer's output sequence, the outputs read outside the
// chain, a step starting state a row ahead), and how the loop's results
// replace the layers' (each layer's sequences as views of the stores, its
// finals as rows of the stacked states).
//
//===----------------------------------------------------------------------===//

#include "WavefrontBuilder.h"
#include "WavefrontTensors.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::wavefront;

/// The next states (inactive layers keep theirs), this diagonal's outputs,
/// and the output sequence with the last layer's output written in.
SmallVector<Value> WavefrontBuilder::buildNextIterArgs(Diagonal &diag,
                                                       ValueRange iterArgs) {
  // Operand positions of lstm.yield's ODS groups: 0 outputs, 1 state.
  YieldOp refYield = ref.getYield();
  unsigned yieldPos = refOps.size() - 1;
  unsigned stateBegin = refYield.getODSOperandIndexAndLength(1).first;
  unsigned outBegin = refYield.getODSOperandIndexAndLength(0).first;
  Value outs = operandOf(diag, refYield, yieldPos, outBegin + plan.linkOutput);
  // (Read from their store instead, they stay as they came in, and the
  // canonicaliser drops them.)
  Value carried = linkFromStore()    ? iterArgs[numStates]
                  : combinedPosition ? diag.linkProducts
                                     : outs;
  // The next diagonal's inputs, right after the cell (gathersAhead): before
  // the inactive layers' states are kept, so that nothing lies between the
  // cell's last kernel and the gather's.
  if (gathersAhead())
    carried = gatherInputs(
        layer0Time(arith::AddIOp::create(rewriter, loc, diag.d, c1)),
        takeRows(rewriter, loc, carried, 0, numLayers - 1,
                 prependExtent(carriedRowType(), numLayers - 1)));
  SmallVector<Value> next;
  for (unsigned k = 0; k < numStates; ++k)
    next.push_back(keepInactive(
        rewriter, loc, diag.d, seqLen, numLayers,
        operandOf(diag, refYield, yieldPos, stateBegin + k), iterArgs[k]));
  next.push_back(carried);
  // Where the link output is also a side output, the last layer's steps
  // are in its store (replaceLayers views them there): the sequence stays
  // as it came in, and the canonicaliser drops it.
  Value sequence = iterArgs[numStates + 1];
  if (storesOutputLate())
    sequence = diag.sequence;
  else if (!linkOutputStore())
    sequence = insertLastOutput(diag.d, outs, sequence);
  next.push_back(sequence);
  // The side outputs of all layers go to one step of their stores: the
  // diagonal's, counted from the last (reverse) so that every layer's steps
  // come in ascending order (sideOutputView). A stored state goes a row
  // ahead: the state this diagonal computes is the one the next diagonal's
  // step starts from.
  Value row = diag.row;
  Value rowAhead;
  for (auto [i, k] : llvm::enumerate(plan.sideOutputs)) {
    Value store = iterArgs[numStates + 2 + i];
    if (std::optional<unsigned> state = storedState(k)) {
      if (!rowAhead)
        rowAhead = arith::AddIOp::create(rewriter, loc, row, c1);
      next.push_back(
          insertStep(rewriter, loc,
                     operandOf(diag, refYield, yieldPos, stateBegin + *state),
                     store, rowAhead));
      continue;
    }
    next.push_back(insertStep(rewriter, loc,
                              operandOf(diag, refYield, yieldPos, outBegin + k),
                              store, row));
  }
  return next;
}

/// Output `k` is the state a step starts from (a training forward saves
/// c_{t-1}): stored as it is, it would be a copy of the loop-carried state
/// each diagonal. Instead each diagonal stores the state it computes, a row
/// ahead, where the cell writes it as it computes it; what lands in a row
/// from a layer that was not running yet is overwritten by its initial
/// state after the loop (replaceLayers). Forward wavefronts only.
std::optional<unsigned> WavefrontBuilder::storedState(unsigned k) const {
  if (reverse)
    return std::nullopt;
  LayerOp layer = ref;
  auto arg = dyn_cast<BlockArgument>(layer.getYield().getOutputs()[k]);
  if (!arg)
    return std::nullopt;
  for (auto [s, stateArg] : llvm::enumerate(layer.getStateArgs()))
    if (arg == stateArg)
      return s;
  return std::nullopt;
}

/// A backward stack's link output is its gates' gradients dG, which the
/// loop also stores for the weights' gradients: each diagonal can read the
/// previous one's there, a row behind, instead of carrying a copy. Where
/// the cell assembles dG from pieces (Cho's GRU's three gates from two
/// pointwise parts), a carried copy is what keeps the pieces from being
/// computed in the store's row (lstm-write-results-in-place), and costs a
/// copy kernel a diagonal. Reverse wavefronts (the row behind is the one
/// after, and the first diagonal's an extra row of zeros after the last);
/// not where the link products are combined with the cell's (the carried
/// values are then those products).
bool WavefrontBuilder::linkFromStore() const {
  return reverse && linkOutputStore() && !combinedPosition;
}

/// The last layer runs step d - (L-1). Before it starts, its output goes
/// to its first step's row, which step 0 then overwrites.
Value WavefrontBuilder::insertLastOutput(Value d, Value outs, Value sequence) {
  Value stepLast = arith::MaxSIOp::create(
      rewriter, loc,
      arith::SubIOp::create(
          rewriter, loc, d,
          arith::ConstantIndexOp::create(rewriter, loc, numLayers - 1)),
      c0);
  Value timeLast =
      reverse
          ? arith::SubIOp::create(rewriter, loc, lastStep, stepLast).getResult()
          : stepLast;
  Value lastOut = takeRows(rewriter, loc, outs, numLayers - 1, 1, outType);
  SmallVector<OpFoldResult> offsets = {timeLast, rewriter.getIndexAttr(0),
                                       rewriter.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {
      rewriter.getIndexAttr(1), tensor::getMixedSize(rewriter, loc, lastOut, 0),
      tensor::getMixedSize(rewriter, loc, lastOut, 1)};
  SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
  return tensor::InsertSliceOp::create(rewriter, loc, lastOut, sequence,
                                       offsets, sizes, strides);
}

/// The copy of the last layer's output into the sequence goes to the
/// start of the next diagonal, where the loop-carried outputs it reads
/// are, beside the gather of the layers' inputs from the same outputs: the
/// two copies are one launch once lowered (lstm-merge-gpu-launches) where
/// after the cell the copy was a launch of its own. Where the link output
/// is a side output, the sequence is a view of its store (no copy; also
/// where the loop reads the outputs from there, linkFromStore); where the
/// loop carries the link products instead of the outputs, the copy stays
/// after the cell.
bool WavefrontBuilder::storesOutputLate() const {
  return !linkOutputStore() && !combinedPosition;
}

/// Where the loop carries the link products (a backward stack, its
/// cell's product through its own recurrent weights and the links' as one,
/// combinedPosition), that product is not the cell's last work: Cho's GRU
/// computes its state's gradient after it, from it. Gathering the next
/// diagonal's inputs (x at the next step and the products) right after
/// the cell, rather than at the start of the next diagonal, puts the
/// gather's copies beside that last pointwise kernel, independent of it:
/// one launch once lowered (lstm-merge-gpu-launches) where the gather was
/// a launch of its own. Where the product is the cell's last work (the
/// LSTM's backward step) the gather would be a launch either way, and it
/// stays at the start (at the end it measured 1% slower on an H100 under
/// TF32). Not where layer 0's input is projected before the loop
/// (separateInput: the cell reads no gathered input).
bool WavefrontBuilder::gathersAhead() const {
  if (!combinedPosition || plan.separateInput)
    return false;
  // Some op after the product computes a tensor (rather than viewing or
  // assembling one): the launch the gather can join.
  return llvm::any_of(
      ArrayRef(refOps).drop_front(*combinedPosition + 1), [](Operation *op) {
        return !isa<tensor::ExtractSliceOp, tensor::InsertSliceOp,
                    tensor::EmptyOp, tensor::DimOp, tensor::CastOp>(op) &&
               llvm::any_of(op->getResultTypes(), llvm::IsaPred<TensorType>);
      });
}

std::optional<unsigned> WavefrontBuilder::linkOutputStore() const {
  auto it = llvm::find(plan.sideOutputs, plan.linkOutput);
  if (it == plan.sideOutputs.end())
    return std::nullopt;
  return numStates + 2 + (it - plan.sideOutputs.begin());
}

/// Layer `l`'s sequence out of a side output's store [L, L + T - 1, B, N]:
/// from step l (forward; layer l runs step t on diagonal l + t) or
/// L - 1 - l (reverse; the steps count the diagonals from the last).
Value WavefrontBuilder::sideOutputView(Value store, unsigned l,
                                       RankedTensorType type) {
  return rowSteps(rewriter, loc, store, l, storeFirstStep(l),
                  tensor::getMixedSize(rewriter, loc, x, 0), type);
}

/// The last layer's link output is the loop's sequence, the side outputs
/// views of their stores; each layer's finals are its rows of the stacked
/// states.
void WavefrontBuilder::replaceLayers(scf::ForOp loop) {
  rewriter.setInsertionPointAfter(loop);
  // The stores; a stored state's first row of each layer is its initial
  // state (storedState).
  SmallVector<Value> stores;
  for (auto [i, k] : llvm::enumerate(plan.sideOutputs)) {
    Value store = loop.getResults()[numStates + 2 + i];
    if (std::optional<unsigned> state = storedState(k))
      for (auto [l, layer] : llvm::enumerate(plan.layers))
        store =
            insertLayerStep(rewriter, loc, LayerOp(layer).getInits()[*state],
                            store, l, storeFirstStep(l));
    stores.push_back(store);
  }
  for (auto [i, k] : llvm::enumerate(plan.sideOutputs))
    for (auto [l, layer] : llvm::enumerate(plan.layers)) {
      Value output = LayerOp(layer).getOutputs()[k];
      // Read by no one but the next layer, which the loop replaces.
      bool onlyLinks = llvm::all_of(output.getUsers(), [&](Operation *user) {
        return l + 1 < plan.layers.size() &&
               user == LayerOp(plan.layers[l + 1]).getOperation();
      });
      if (onlyLinks || (layer == ref && k == plan.linkOutput))
        continue;
      rewriter.replaceAllUsesWith(
          output, sideOutputView(stores[i], l,
                                 cast<RankedTensorType>(output.getType())));
    }
  Value linkOutput = ref.getOutputs()[plan.linkOutput];
  rewriter.replaceAllUsesWith(
      linkOutput,
      linkOutputStore()
          ? sideOutputView(stores[*linkOutputStore() - numStates - 2],
                           numLayers - 1,
                           cast<RankedTensorType>(linkOutput.getType()))
          : finalSequence);
  for (auto [l, layer] : llvm::enumerate(plan.layers))
    for (auto [k, final] : llvm::enumerate(LayerOp(layer).getFinals()))
      rewriter.replaceAllUsesWith(
          final, takeRows(rewriter, loc, loop.getResults()[k], l, 1,
                          cast<RankedTensorType>(final.getType())));
  // Last to first: a link's product reads the layer before it.
  for (int64_t l = numLayers - 1; l >= 0; --l) {
    rewriter.eraseOp(plan.layers[l]);
    if (l > 0 && !plan.projections.empty())
      eraseLinkProduct(plan.projections[l - 1]);
  }
}
