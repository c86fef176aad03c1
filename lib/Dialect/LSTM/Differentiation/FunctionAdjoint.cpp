//===- FunctionAdjoint.cpp - The adjoint of a function body ---------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "FunctionAdjoint.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

bool lstm::detail::isFloatLike(Type type) {
  return isa<FloatType>(getElementTypeOrSelf(type));
}

//===----------------------------------------------------------------------===//
// ActivityAnalysis
//===----------------------------------------------------------------------===//

ActivityAnalysis::ActivityAnalysis(func::FuncOp func) {
  for (BlockArgument arg : func.getArguments())
    if (isFloatLike(arg.getType()))
      active.insert(arg);
  visitBlock(func.getBody().front());
}

void ActivityAnalysis::visitBlock(Block &block) {
  for (Operation &op : block) {
    if (auto layer = dyn_cast<LayerOp>(op))
      visitLayer(layer);
    else
      visitOp(&op);
  }
}

void ActivityAnalysis::visitOp(Operation *op) {
  bool reads = llvm::any_of(op->getOperands(),
                            [&](Value v) { return active.contains(v); });
  // Values a region uses from above count as operands.
  op->walk([&](Operation *nested) {
    if (nested != op)
      for (Value v : nested->getOperands())
        reads |= active.contains(v);
  });
  if (!reads)
    return;
  for (Value r : op->getResults())
    if (isFloatLike(r.getType()))
      active.insert(r);
}

void ActivityAnalysis::visitLayer(LayerOp layer) {
  for (auto [seq, slice] : llvm::zip(layer.getInputs(), layer.getInputSlices()))
    if (active.contains(seq))
      active.insert(slice);
  for (auto [init, state] : llvm::zip(layer.getInits(), layer.getStateArgs()))
    if (active.contains(init) && isFloatLike(state.getType()))
      active.insert(state);
  // A state is active when its update is: iterate to the fixed point (at
  // most one round per state).
  YieldOp yield = layer.getYield();
  Block &cell = layer.getBody().front();
  for (bool changed = true; changed;) {
    changed = false;
    visitBlock(cell);
    for (auto [next, state] : llvm::zip(yield.getState(), layer.getStateArgs()))
      if (active.contains(next) && !active.contains(state) &&
          isFloatLike(state.getType())) {
        active.insert(state);
        changed = true;
      }
  }
  for (auto [out, result] : llvm::zip(yield.getOutputs(), layer.getOutputs()))
    if (active.contains(out))
      active.insert(result);
  // The final state is the last update, or the initial state when no step
  // runs (T = 0, or a sequence of length 0 with lengths).
  for (auto [next, init, final] :
       llvm::zip(yield.getState(), layer.getInits(), layer.getFinals()))
    if ((active.contains(next) || active.contains(init)) &&
        isFloatLike(final.getType()))
      active.insert(final);
}

//===----------------------------------------------------------------------===//
// FunctionAdjointContext
//===----------------------------------------------------------------------===//

Value FunctionAdjointContext::getCotangent(Value v) {
  CotangentAccumulator::Builders builders{
      [](Value p) -> FailureOr<Value> { return p; },
      [&](Value like, bool zeroed) -> FailureOr<Value> {
        if (zeroed)
          return buildSplat(like, 0.0);
        auto type = cast<RankedTensorType>(like.getType());
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d)
          if (type.isDynamicDim(d))
            sizes.push_back(
                tensor::DimOp::create(builder, like.getLoc(), like, d));
        return tensor::EmptyOp::create(builder, like.getLoc(), type.getShape(),
                                       type.getElementType(), sizes)
            .getResult();
      }};
  FailureOr<Value> c = cotangents.materialize(builder, v.getLoc(), v, builders);
  return succeeded(c) ? *c : Value();
}

LogicalResult FunctionAdjointContext::addCotangent(Value v, Value c) {
  cotangents.add(v, c);
  return success();
}

LogicalResult FunctionAdjointContext::addSliceCotangent(
    Value v, Value c, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, ArrayRef<OpFoldResult> strides) {
  cotangents.addSlice(v, {c, llvm::to_vector(offsets), llvm::to_vector(sizes),
                          llvm::to_vector(strides)});
  return success();
}

/// Batched gates only exist in the loops of lstm-wavefront, which the
/// differentiation does not take.
static LogicalResult checkUnbatched(Value v, Value rows) {
  if (cast<RankedTensorType>(rows.getType()).getRank() == 2)
    return success();
  return emitError(v.getLoc(), "lstm-differentiate: batched gate operands "
                               "are not differentiated (run "
                               "lstm-differentiate before lstm-wavefront)");
}

LogicalResult FunctionAdjointContext::addProductCotangent(Value operand,
                                                          Value dz,
                                                          Value weight) {
  if (failed(checkUnbatched(operand, dz)))
    return failure();
  cotangents.add(operand, buildMatmul(builder, operand.getLoc(), dz, weight,
                                      /*transposeLhs=*/false,
                                      /*transposeRhs=*/false));
  return success();
}

LogicalResult FunctionAdjointContext::addWeightCotangent(Value weight, Value dz,
                                                         Value operand) {
  if (failed(checkUnbatched(weight, dz)))
    return failure();
  cotangents.add(weight, buildMatmul(builder, weight.getLoc(), dz, operand,
                                     /*transposeLhs=*/true,
                                     /*transposeRhs=*/false));
  return success();
}

LogicalResult FunctionAdjointContext::addBroadcastCotangent(Value v,
                                                            Value rows) {
  if (failed(checkUnbatched(v, rows)))
    return failure();
  cotangents.add(v, buildSumOverLeadingDim(builder, v.getLoc(), rows));
  return success();
}

FailureOr<Value> FunctionAdjointContext::buildBroadcastProduct(Value rows,
                                                               Value v) {
  if (failed(checkUnbatched(v, rows)))
    return failure();
  return buildBroadcastMul(builder, v.getLoc(), rows, v);
}

FailureOr<Value> FunctionAdjointContext::buildSplat(Value like, double c) {
  SmallVector<Value> sizes;
  if (auto type = dyn_cast<RankedTensorType>(like.getType()))
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(builder, like.getLoc(), like, d));
  return buildSplatValue(builder, like.getLoc(), like.getType(), sizes, c);
}
