//===- LayerTape.cpp - What a training forward saves of a layer -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The tape of a layer (cuDNN's reserve space): the values of its cell that
// the backward layer reads at every step, as sequences the rebuilt forward
// layer returns. A value the cell already yields as an output is that
// output; the state a step started from, when the cell also yields its new
// value as an output, is that output one step behind the initial state,
// rebuilt in the backward instead of saved a second time.
//
//===----------------------------------------------------------------------===//

#include "FunctionAdjoint.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::lstm;

/// The index of the output through which `fwd`'s cell yields the new value
/// of state `v` (a state argument of the cell), when the sequence of the
/// states the steps started from can be rebuilt from that output: each step
/// starts from the previous step's output, except the first, which starts
/// from the init. With lengths, a forward layer's steps past a sequence's end
/// read a zero output instead of the held state, which the backward masks
/// anyway; a reverse layer's sequences start at different steps, so it saves
/// the state.
static std::optional<unsigned> startStateOutput(LayerOp fwd, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  unsigned numInputs = fwd.getInputs().size();
  if (!arg || arg.getOwner() != &fwd.getBody().front() ||
      arg.getArgNumber() < numInputs)
    return std::nullopt;
  if (fwd.isReverse() && fwd.getLengths())
    return std::nullopt;
  YieldOp yield = fwd.getYield();
  Value next = yield.getState()[arg.getArgNumber() - numInputs];
  auto it = llvm::find(yield.getOutputs(), next);
  if (it == yield.getOutputs().end())
    return std::nullopt;
  return std::distance(yield.getOutputs().begin(), it);
}

/// The states `layer`'s steps started from, `[T, B, N]` in the order of the
/// sequence, from the sequence `outputs` of the new states and the initial
/// state `init`: `[init, y_0, ..., y_{T-2}]` for a forward layer,
/// `[y_1, ..., y_{T-1}, init]` for a reverse one. Built in the backward, so
/// that the training forward saves the outputs once instead of a second,
/// shifted copy.
static Value buildStartStates(OpBuilder &b, Location loc, LayerOp layer,
                              Value init, Value outputs) {
  auto initType = cast<RankedTensorType>(init.getType());
  auto firstType =
      RankedTensorType::get({1, initType.getDimSize(0), initType.getDimSize(1)},
                            initType.getElementType());
  SmallVector<OpFoldResult> firstShape = {
      b.getIndexAttr(1), tensor::getMixedSize(b, loc, init, 0),
      tensor::getMixedSize(b, loc, init, 1)};
  Value first = tensor::ExpandShapeOp::create(
      b, loc, firstType, init, ArrayRef<ReassociationIndices>{{0, 1}, {2}},
      firstShape);
  bool reverse = layer.isReverse();
  SmallVector<Value> parts = {first, outputs};
  if (reverse)
    std::swap(parts[0], parts[1]);
  Value all = tensor::ConcatOp::create(b, loc, /*dim=*/0, parts);
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(reverse ? 1 : 0),
                                       b.getIndexAttr(0), b.getIndexAttr(0)};
  // T rows of the concatenation, each whole (its own extents, so that a
  // product collapsing the slice to [T·B, N] sees a view of whole rows:
  // lstm-collapse-before-slice).
  SmallVector<OpFoldResult> sizes = {tensor::getMixedSize(b, loc, outputs, 0),
                                     tensor::getMixedSize(b, loc, all, 1),
                                     tensor::getMixedSize(b, loc, all, 2)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  Value states =
      tensor::ExtractSliceOp::create(b, loc, all, offsets, sizes, strides);
  if (states.getType() != outputs.getType())
    states = tensor::CastOp::create(b, loc, outputs.getType(), states);
  return states;
}

LayerOp lstm::detail::addTapeOutputs(OpBuilder &b, LayerOp fwd,
                                     ArrayRef<Value> tape,
                                     SmallVectorImpl<Value> &tapeSequences) {
  YieldOp yield = fwd.getYield();
  // Per tape value: the output that holds it, and whether it is the start
  // state rebuilt from that output.
  SmallVector<std::pair<int64_t, bool>> outputOf;
  SmallVector<Value> extra;
  for (Value v : tape) {
    auto it = llvm::find(yield.getOutputs(), v);
    if (it != yield.getOutputs().end()) {
      outputOf.push_back(
          {std::distance(yield.getOutputs().begin(), it), false});
      continue;
    }
    if (std::optional<unsigned> out = startStateOutput(fwd, v)) {
      outputOf.push_back({*out, true});
      continue;
    }
    outputOf.push_back({fwd.getOutputs().size() + extra.size(), false});
    extra.push_back(v);
  }
  LayerOp layer = fwd;
  if (!extra.empty()) {
    auto first = cast<RankedTensorType>(fwd.getInputs().front().getType());
    SmallVector<Type> outputTypes(fwd.getOutputs().getTypes());
    for (Value v : extra) {
      auto step = cast<RankedTensorType>(v.getType());
      outputTypes.push_back(RankedTensorType::get(
          {first.getDimSize(0), step.getDimSize(0), step.getDimSize(1)},
          step.getElementType()));
    }
    OpBuilder rebuild(fwd);
    layer = LayerOp::create(rebuild, fwd.getLoc(), outputTypes,
                            fwd.getFinals().getTypes(), fwd.getDirection(),
                            fwd.getInputs(), fwd.getInits(), fwd.getLengths());
    layer->setDiscardableAttrs(fwd->getDiscardableAttrDictionary());
    layer.getBody().takeBody(fwd.getBody());
    layer.getYield().getOutputsMutable().append(extra);
    unsigned numOutputs = fwd.getOutputs().size();
    for (auto [old, now] :
         llvm::zip(fwd.getOutputs(), layer.getOutputs().take_front(numOutputs)))
      old.replaceAllUsesWith(now);
    for (auto [old, now] : llvm::zip(fwd.getFinals(), layer.getFinals()))
      old.replaceAllUsesWith(now);
    fwd.erase();
  }
  unsigned numInputs = layer.getInputs().size();
  for (auto [v, where] : llvm::zip(tape, outputOf)) {
    auto [index, shifted] = where;
    Value outputs = layer.getOutputs()[index];
    if (!shifted) {
      tapeSequences.push_back(outputs);
      continue;
    }
    unsigned state = cast<BlockArgument>(v).getArgNumber() - numInputs;
    tapeSequences.push_back(buildStartStates(b, layer.getLoc(), layer,
                                             layer.getInits()[state], outputs));
  }
  return layer;
}
