//===- HoistByThreads.cpp - Hoisted projections, or the steps' ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A hoisted input projection pays where many threads split its one large
// GEMM; on one CPU thread the layer measured 5-11% faster with its input
// products in the steps (on two, 0-3%), where a step's two products go to
// results that the cell reads while they are in cache, and no [T, B, N]
// projection goes out to memory and back. The thread count is known only
// at run time (a library's caller sets it), so a hoisted layer becomes both
// forms under an `scf.if` on it.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/HoistedInputs.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMHOISTBYTHREADSPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

/// Moves the products of `projection`, an `identity` gate whose only use is
/// as an addend of a gate of the same type, into that gate: `g(... + p)`
/// with `p = x·Wᵀ + b` is `g(x·Wᵀ + ... + b)`, the form the layer had
/// before hoisting, whose lowering accumulates both products into one
/// result. A sum reassociated: rounding may differ in the last bit.
static void mergeIntoUser(RewriterBase &rewriter, GateOp projection) {
  if (projection.getActivation() != Activation::identity ||
      !projection.getAddends().empty() || projection.getPeephole() ||
      !projection->hasOneUse())
    return;
  auto user = dyn_cast<GateOp>(*projection->getUsers().begin());
  if (!user || user.getType() != projection.getType() ||
      !llvm::is_contained(user.getAddends(), projection.getResult()))
    return;
  SmallVector<Value> inputs(projection.getInputs()),
      weights(projection.getWeights()), addends;
  llvm::append_range(inputs, user.getInputs());
  llvm::append_range(weights, user.getWeights());
  for (Value addend : user.getAddends())
    if (addend != projection.getResult())
      addends.push_back(addend);
  SmallVector<Value> biases(user.getBiases());
  llvm::append_range(biases, projection.getBiases());
  rewriter.modifyOpInPlace(user, [&] {
    user.getInputsMutable().assign(inputs);
    user.getWeightsMutable().assign(weights);
    user.getAddendsMutable().assign(addends);
    user.getBiasesMutable().assign(biases);
  });
  rewriter.eraseOp(projection);
}

/// Computes each hoisted input of `layer` in its steps: the layer reads the
/// sequence the projection was made from instead, and its cell projects
/// the step's slice of it, at the start of the step.
static void projectInSteps(RewriterBase &rewriter, LayerOp layer) {
  Block &cell = layer.getBody().front();
  for (unsigned i = 0, e = layer.getInputs().size(); i < e; ++i) {
    std::optional<HoistedInput> hoisted =
        matchHoistedInput(layer.getInputs()[i]);
    if (!hoisted)
      continue;
    auto sequenceType = cast<RankedTensorType>(hoisted->sequence.getType());
    auto stepType = RankedTensorType::get(sequenceType.getShape().drop_front(),
                                          sequenceType.getElementType());
    BlockArgument projected = cell.getArgument(i);
    BlockArgument step;
    rewriter.modifyOpInPlace(layer, [&] {
      layer.getInputsMutable()[i].set(hoisted->sequence);
      step = cell.insertArgument(i, stepType, layer.getLoc());
    });
    // The gate on the step's rows: each collapse of the sequence is the
    // step's slice.
    IRMapping rows;
    for (Value operand : hoisted->gate->getOperands())
      if (auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>())
        rows.map(collapse.getResult(), step);
    rewriter.setInsertionPointToStart(&cell);
    auto gate = cast<GateOp>(rewriter.clone(*hoisted->gate, rows));
    gate.getResult().setType(cast<RankedTensorType>(projected.getType()));
    rewriter.replaceAllUsesWith(projected, gate.getResult());
    rewriter.modifyOpInPlace(layer, [&] { cell.eraseArgument(i + 1); });
    mergeIntoUser(rewriter, gate);
  }
}

/// Whether `hoisted` is computed for `layer` only, next to it: then the
/// first branch computes it, and the second does not. A projection that
/// is read elsewhere too, or made outside the layer's block (a loop's
/// layer reading a projection made before the loop), stays where it is.
static bool belongsTo(const HoistedInput &hoisted, LayerOp layer) {
  return hoisted.expand->hasOneUse() && hoisted.gate->hasOneUse() &&
         hoisted.expand->getBlock() == layer->getBlock() &&
         hoisted.gate->getBlock() == layer->getBlock();
}

/// Clones `layer`, with the hoisted projections that belong to it, at the
/// rewriter's insertion point.
static LayerOp cloneWithProjections(RewriterBase &rewriter, LayerOp layer) {
  IRMapping mapping;
  for (Value input : layer.getInputs()) {
    std::optional<HoistedInput> hoisted = matchHoistedInput(input);
    if (!hoisted || !belongsTo(*hoisted, layer) || mapping.contains(input))
      continue;
    for (Value operand : hoisted->gate->getOperands())
      if (auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>();
          collapse && !mapping.contains(collapse.getResult()))
        rewriter.clone(*collapse, mapping);
    rewriter.clone(*hoisted->gate, mapping);
    rewriter.clone(*hoisted->expand, mapping);
  }
  return cast<LayerOp>(rewriter.clone(*layer, mapping));
}

/// Erases `op` and then the ops that defined its operands, where nothing
/// else uses them (what a hoisted projection was made of).
static void eraseWithUnusedOperands(RewriterBase &rewriter, Operation *op) {
  SmallVector<Operation *> worklist = {op};
  while (!worklist.empty()) {
    Operation *next = worklist.pop_back_val();
    if (!next->use_empty() || !isPure(next))
      continue;
    SmallVector<Operation *> defs;
    for (Value operand : next->getOperands())
      if (Operation *def = operand.getDefiningOp())
        defs.push_back(def);
    rewriter.eraseOp(next);
    for (Operation *def : defs)
      if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp, GateOp>(def))
        worklist.push_back(def);
  }
}

/// Rewrites `layer` into `scf.if threads >= minThreads` with the layer as
/// it is (hoisted) in the first branch and with its projections in its
/// steps in the second.
static void versionLayer(RewriterBase &rewriter, LayerOp layer, Value hoist) {
  Location loc = layer.getLoc();
  rewriter.setInsertionPoint(layer);
  auto choice = scf::IfOp::create(rewriter, loc, layer->getResultTypes(), hoist,
                                  /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(choice.thenBlock());
  LayerOp hoisted = cloneWithProjections(rewriter, layer);
  scf::YieldOp::create(rewriter, loc, hoisted->getResults());
  rewriter.setInsertionPointToStart(choice.elseBlock());
  LayerOp inSteps = cast<LayerOp>(rewriter.clone(*layer));
  scf::YieldOp::create(rewriter, loc, inSteps->getResults());
  projectInSteps(rewriter, inSteps);

  SmallVector<Operation *> projections;
  for (Value input : layer.getInputs())
    if (std::optional<HoistedInput> projection = matchHoistedInput(input);
        projection && belongsTo(*projection, layer))
      projections.push_back(projection->expand);
  rewriter.replaceOp(layer, choice.getResults());
  for (Operation *projection : projections)
    eraseWithUnusedOperands(rewriter, projection);
}

namespace {
struct LSTMHoistByThreadsPass
    : public lstm::impl::LSTMHoistByThreadsPassBase<LSTMHoistByThreadsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(requireThreadsFunction(getOperation(), threadsFunction,
                                      getArgument())))
      return signalPassFailure();
    if (minThreads <= 1)
      return; // every thread count keeps the projections hoisted
    SmallVector<LayerOp> layers;
    getOperation()->walk([&](LayerOp layer) {
      if (llvm::any_of(layer.getInputs(), [](Value input) {
            return matchHoistedInput(input).has_value();
          }))
        layers.push_back(layer);
    });
    if (layers.empty())
      return;
    IRRewriter rewriter(&getContext());
    FailureOr<func::FuncOp> threads = declareThreadsFunction(
        rewriter, getOperation(), threadsFunction, getArgument());
    if (failed(threads))
      return signalPassFailure();
    for (LayerOp layer : layers) {
      rewriter.setInsertionPoint(layer);
      Location loc = layer.getLoc();
      Value hoist = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge,
          buildThreadCount(rewriter, loc, *threads),
          arith::ConstantIndexOp::create(rewriter, loc, minThreads));
      versionLayer(rewriter, layer, hoist);
    }
  }
};
} // namespace
