//===- LayerAdjoint.cpp - The backward recurrence of an lstm.layer --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The adjoint of a layer is another lstm.layer that walks the sequence the
// other way. Its state is the cotangent of the forward state (dh, dc, ...);
// its cell is the adjoint of the forward cell, built op by op from the rules
// of AdjointOpInterface in a CellAdjointContext. Per step it reads:
//
// - the cotangents of the forward's outputs at that step (dy_t);
// - the forward's input slices x_t where the adjoint needs them;
// - the values the training forward saved for it (the "tape", cuDNN's
//   reserve space): the state the forward step started from and the result
//   of every gate the adjoint reads. Pointwise values in between are
//   recomputed from these in the backward step, where they are fused with the
//   rest of its pointwise work, rather than stored.
//
// The forward layer is rebuilt with the tape as extra output sequences.
//
// Only the recurrent chain stays in the backward loop. What a step
// contributes to values defined outside the layer (weights, biases,
// peepholes, the input sequence through the input weights) leaves the loop as
// output sequences and is summed after it, as cuDNN splits backward-data from
// backward-weights:
//
//     dW = dZ^T · X   (one GEMM over all T·B rows)     dX = dZ · W
//     db = sum over T·B of dZ                          dp = sum of dZ ⊙ c
//
// Steps past a sequence's length (the layer's `lengths`) are masked by the
// backward layer exactly as by the forward: its state (the cotangent) passes
// through them unchanged, and its outputs there are zero, so they contribute
// nothing to the sums after the loop.
//
// This file: the backward layer, and the forward values in its cell (from
// its input slices and the tape); the cotangents in its cell are
// CellCotangents.cpp's.
//
//===----------------------------------------------------------------------===//

#include "LayerAdjoint.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

//===----------------------------------------------------------------------===//
// Forward values in the backward step
//===----------------------------------------------------------------------===//

BlockArgument CellAdjointContext::addSequenceArgument(Input input,
                                                      Type sliceType,
                                                      Location loc) {
  inputs.push_back(input);
  return cell->insertArgument(inputs.size() - 1, sliceType, loc);
}

Value CellAdjointContext::inputSlice(unsigned i) {
  for (auto [k, input] : llvm::enumerate(inputs))
    if (input.kind == Input::ForwardInput && input.index == i)
      return cell->getArgument(k);
  Value slice = fwd.getInputSlices()[i];
  return addSequenceArgument({Input::ForwardInput, i}, slice.getType(),
                             slice.getLoc());
}

FailureOr<Value> CellAdjointContext::saved(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 2 || type.isDynamicDim(1))
    return emitError(v.getLoc())
           << "lstm-differentiate: the backward pass needs this value of the "
              "cell at every step, and only [B, N] tensors with a static N "
              "can be saved by the forward (this one is "
           << v.getType() << ")";
  auto [it, inserted] = tapeIndex.try_emplace(v, tape.size());
  if (inserted)
    tape.push_back(v);
  for (auto [k, input] : llvm::enumerate(inputs))
    if (input.kind == Input::Tape && input.index == it->second)
      return Value(cell->getArgument(k));
  return Value(
      addSequenceArgument({Input::Tape, it->second}, type, v.getLoc()));
}

Value CellAdjointContext::batch() {
  if (!batchSize) {
    // The first state has the batch as its leading extent; read it at the
    // start of the step, where everything can use it.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(cell);
    batchSize = tensor::DimOp::create(builder, fwd.getLoc(),
                                      cell->getArguments().back(), 0);
    // The states follow the sequences, the last argument is a state whose
    // position never changes relative to the end.
  }
  return batchSize;
}

FailureOr<Value> CellAdjointContext::getPrimal(Value v) {
  if (isCaptured(v))
    return v;
  if (Value p = primals.lookupOrNull(v))
    return p;
  if (std::optional<unsigned> i = inputSliceIndex(v))
    return inputSlice(*i);
  if (isa<BlockArgument>(v))
    return saved(v); // the state the forward step started from
  Operation *def = v.getDefiningOp();
  // The batch size is known without the value it was read from.
  if (auto dim = dyn_cast<tensor::DimOp>(def);
      dim && getConstantIntValue(dim.getIndex()) == 0 &&
      !isCaptured(dim.getSource()))
    return batch();
  // Gates hold the GEMMs and the nonlinearities: their results are saved.
  // Everything else is cheap pointwise or index work, recomputed.
  if (isa<GateOp>(def))
    return saved(v);
  if (def->getNumRegions() != 0 &&
      !def->hasTrait<OpTrait::IsIsolatedFromAbove>())
    return def->emitOpError(
        "would have to be recomputed by the backward step, which "
        "lstm-differentiate only does for ops without regions or with "
        "isolated ones");
  IRMapping mapping;
  for (Value operand : def->getOperands()) {
    FailureOr<Value> p = getPrimal(operand);
    if (failed(p))
      return failure();
    mapping.map(operand, *p);
  }
  Operation *clone = builder.clone(*def, mapping);
  for (auto [r, c] : llvm::zip(def->getResults(), clone->getResults()))
    primals.map(r, c);
  return primals.lookup(v);
}

//===----------------------------------------------------------------------===//
// The backward cell
//===----------------------------------------------------------------------===//

LogicalResult CellAdjointContext::build(ArrayRef<Value> outputCotangents) {
  YieldOp yield = fwd.getYield();
  Block &forward = fwd.getBody().front();
  unsigned numStates = fwd.getInits().size();
  SmallVector<BlockArgument> stateCotangents(
      cell->getArguments().take_back(numStates));

  // Seeds: the cotangent of the new state is the backward state; that of a
  // step's output is the slice of the output's cotangent.
  for (auto [next, ds] : llvm::zip(yield.getState(), stateCotangents))
    if (isActive(next) && failed(addCotangent(next, ds)))
      return failure();
  for (auto [j, pair] :
       llvm::enumerate(llvm::zip(yield.getOutputs(), outputCotangents))) {
    auto [out, dY] = pair;
    if (!dY || !isActive(out))
      continue;
    BlockArgument dy =
        addSequenceArgument({Input::OutputCotangent, static_cast<unsigned>(j)},
                            out.getType(), out.getLoc());
    if (failed(addCotangent(out, dy)))
      return failure();
  }

  for (Operation &op : llvm::reverse(forward.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value r) { return cotangents.has(r); }))
      continue;
    if (llvm::none_of(op.getOperands(), [&](Value v) { return isActive(v); }))
      continue;
    auto rule = dyn_cast<AdjointOpInterface>(&op);
    if (!rule)
      return op.emitOpError("has no derivative (lstm-differentiate)");
    if (failed(rule.buildAdjoint(*this)) || materializationFailed)
      return failure();
  }

  // What reaches the input slices leaves the loop step by step.
  for (auto [i, slice] : llvm::enumerate(fwd.getInputSlices())) {
    if (!cotangents.has(slice))
      continue;
    Value c = getCotangent(slice);
    if (!c)
      return failure();
    FailureOr<SequenceRef> rows = output(c);
    if (failed(rows))
      return failure();
    Deferred item{Deferred::InputRows, fwd.getInputs()[i], *rows};
    item.inputIndex = i;
    deferred.push_back(item);
  }
  if (failed(resolveBroadcasts()))
    return failure();
  // The cotangent of the state the step started from is the next backward
  // state.
  for (BlockArgument state : fwd.getStateArgs()) {
    Value c = cotangents.has(state) ? getCotangent(state) : Value();
    if (!c) {
      FailureOr<Value> zeros = buildSplat(state, 0.0);
      if (failed(zeros))
        return failure();
      c = *zeros;
    }
    nextStates.push_back(c);
  }
  YieldOp::create(builder, fwd.getLoc(), outputs, nextStates);
  return success();
}

//===----------------------------------------------------------------------===//
// FunctionAdjointContext::differentiateLayer
//===----------------------------------------------------------------------===//

LogicalResult FunctionAdjointContext::differentiateLayer(LayerOp fwd) {
  Location loc = fwd.getLoc();
  SmallVector<Value> outputCotangents, finalCotangents;
  bool any = false;
  for (Value out : fwd.getOutputs()) {
    outputCotangents.push_back(getCotangent(out));
    any |= static_cast<bool>(outputCotangents.back());
  }
  for (Value final : fwd.getFinals()) {
    finalCotangents.push_back(getCotangent(final));
    any |= static_cast<bool>(finalCotangents.back());
  }
  if (!any)
    return success();
  WalkResult nested = fwd.getBody().walk([](LayerOp inner) {
    inner.emitOpError("is nested in the cell of another layer, which "
                      "lstm-differentiate does not differentiate");
    return WalkResult::interrupt();
  });
  if (nested.wasInterrupted())
    return failure();

  // The backward cell: its states are the cotangents of the forward states;
  // the sequences it reads are inserted before them as it is built.
  auto cell = std::make_unique<Block>();
  for (Value init : fwd.getInits())
    cell->addArgument(init.getType(), init.getLoc());
  // (The block has no region yet: the builder gets the context itself.)
  OpBuilder cellBuilder(builder.getContext());
  cellBuilder.setInsertionPointToEnd(cell.get());
  CellAdjointContext ctx(*this, builder, fwd, cell.get(), cellBuilder);
  if (failed(ctx.build(outputCotangents)))
    return failure();

  SmallVector<Value> tapeSequences;
  LayerOp forward = addTapeOutputs(builder, fwd, ctx.tape, tapeSequences);
  auto resolve = [&](SequenceRef ref, LayerOp backward) -> Value {
    switch (ref.kind) {
    case SequenceRef::ForwardInput:
      return forward.getInputs()[ref.index];
    case SequenceRef::Tape:
      return tapeSequences[ref.index];
    case SequenceRef::BackwardOutput:
      return backward.getOutputs()[ref.index];
    }
    llvm_unreachable("unknown sequence");
  };

  SmallVector<Value> sequences;
  for (const CellAdjointContext::Input &input : ctx.inputs) {
    switch (input.kind) {
    case CellAdjointContext::Input::ForwardInput:
      sequences.push_back(forward.getInputs()[input.index]);
      break;
    case CellAdjointContext::Input::Tape:
      sequences.push_back(tapeSequences[input.index]);
      break;
    case CellAdjointContext::Input::OutputCotangent:
      sequences.push_back(outputCotangents[input.index]);
      break;
    }
  }
  SmallVector<Value> inits;
  for (auto [init, c] : llvm::zip(forward.getInits(), finalCotangents)) {
    if (c) {
      inits.push_back(c);
      continue;
    }
    FailureOr<Value> zeros = buildSplat(init, 0.0);
    if (failed(zeros))
      return failure();
    inits.push_back(*zeros);
  }
  auto first = cast<RankedTensorType>(forward.getInputs().front().getType());
  SmallVector<Type> outputTypes;
  for (Value v : ctx.outputs) {
    auto step = cast<RankedTensorType>(v.getType());
    outputTypes.push_back(RankedTensorType::get(
        {first.getDimSize(0), step.getDimSize(0), step.getDimSize(1)},
        step.getElementType()));
  }
  auto backward = LayerOp::create(
      builder, loc, outputTypes, forward.getInits().getTypes(),
      forward.isReverse() ? Direction::forward : Direction::reverse, sequences,
      inits, forward.getLengths());
  backward.getBody().push_back(cell.release());

  // After the loop: the sums over all steps.
  llvm::DenseMap<Value, Value> sums;
  for (const Deferred &item : ctx.deferred) {
    Value rows = resolve(item.rows, backward);
    switch (item.kind) {
    case Deferred::InputProduct: {
      Value product =
          buildMatmul(builder, loc, collapseLeadingDims(builder, loc, rows),
                      item.weight, false, false);
      cotangents.add(item.target,
                     expandLeadingDim(builder, loc, product, item.target));
      break;
    }
    case Deferred::Weight: {
      Value operand = resolve(item.operand, backward);
      cotangents.add(item.target,
                     buildMatmul(builder, loc,
                                 collapseLeadingDims(builder, loc, rows),
                                 collapseLeadingDims(builder, loc, operand),
                                 /*transposeLhs=*/true, false));
      break;
    }
    case Deferred::Broadcast: {
      // One sum per output sequence, sliced by the gates that share it.
      Value &sum = sums[rows];
      if (!sum)
        sum = buildColumnSums(builder, loc,
                              collapseLeadingDims(builder, loc, rows));
      Value v = sum;
      if (item.columnOffset) {
        int64_t width =
            cast<RankedTensorType>(item.rowsValue.getType()).getDimSize(1);
        v = tensor::ExtractSliceOp::create(
            builder, loc, sum,
            ArrayRef<OpFoldResult>{builder.getIndexAttr(*item.columnOffset)},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(width)},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
        if (v.getType() != item.target.getType())
          v = tensor::CastOp::create(builder, loc, item.target.getType(), v);
      }
      cotangents.add(item.target, v);
      break;
    }
    case Deferred::InputRows:
      cotangents.add(item.target, rows);
      break;
    case Deferred::Captured:
      cotangents.add(item.target, buildSumOverLeadingDim(builder, loc, rows));
      break;
    }
  }
  for (auto [init, c] : llvm::zip(forward.getInits(), backward.getFinals()))
    if (isActive(init))
      cotangents.add(init, c);
  return success();
}
