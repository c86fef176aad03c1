//===- PersistentStacks.cpp - Wavefront or persistent kernels, by batch ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A stack can run two fast ways on the GPU, and they exclude each other:
// one persistent kernel per layer (lstm-to-persistent), which needs the
// layers as layers with their input projections hoisted, or the wavefront
// loop over the diagonals, which batches the layers' per-step GEMMs and
// leaves no layer behind. The persistent kernels win at small batches,
// where a step is latency; their cost model gives up above a batch size
// (and then the layers ran one after the other, without the wavefront: 1.6x
// slower for appleyard's GRU). Here the wavefront pass asks that cost model
// about the layers of a chain, as lstm-optimize will leave them, and keeps
// the layers for the kernels up to that batch size: statically where the
// batch size is known, else in one branch of an scf.if on it, the wavefront
// in the other.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Transforms.h"

#include "WavefrontPlan.h"
#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

#include <limits>

using namespace mlir;
using namespace mlir::lstm;

/// What lstm-to-persistent's cost model says of `layer` once its input
/// projections are hoisted and its pointwise work fused (the form
/// `lstm-optimize{wavefront=false}` leaves): the largest batch size it runs
/// the layer at, 0 for none. Judged on a copy, in a function of its own
/// whose arguments are what the layer reads from outside; constants come
/// along as constants (the cost model reads, e.g., the index of a
/// `tensor.dim` in the cell, which the training forward's layers capture).
static int64_t persistentMaxBatch(LayerOp layer) {
  MLIRContext *ctx = layer.getContext();
  Location loc = layer.getLoc();
  llvm::SetVector<Value> outside(layer->operand_begin(), layer->operand_end());
  getUsedValuesDefinedAbove(layer.getBody(), outside);
  SmallVector<Value> arguments, constants;
  for (Value v : outside) {
    Operation *def = v.getDefiningOp();
    (def && def->hasTrait<OpTrait::ConstantLike>() ? constants : arguments)
        .push_back(v);
  }

  OwningOpRef<ModuleOp> scratch = ModuleOp::create(loc);
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(scratch->getBody());
  SmallVector<Type> argTypes =
      llvm::map_to_vector(arguments, [](Value v) { return v.getType(); });
  auto func = func::FuncOp::create(
      b, loc, "persistent_cost",
      b.getFunctionType(argTypes, layer->getResultTypes()));
  Block *entry = func.addEntryBlock();
  IRMapping map;
  map.map(arguments, entry->getArguments());
  b.setInsertionPointToEnd(entry);
  for (Value v : constants)
    b.clone(*v.getDefiningOp(), map);
  Operation *copy = b.clone(*layer, map);
  func::ReturnOp::create(b, loc, copy->getResults());

  IRRewriter rewriter(ctx);
  // Hoisting replaces the layer (it gains an `ins` sequence).
  (void)hoistInputProjections(rewriter, cast<LayerOp>(copy));
  LayerOp hoisted;
  func.walk([&](LayerOp op) { hoisted = op; });
  if (!hoisted || failed(fuseElementwise(rewriter, hoisted.getBody().front())))
    return 0;
  return choosePersistent(hoisted).maxBatch;
}

int64_t mlir::lstm::persistentStackMaxBatch(ArrayRef<LayerOp> layers) {
  int64_t most = std::numeric_limits<int64_t>::max();
  for (LayerOp layer : layers) {
    most = std::min(most, persistentMaxBatch(layer));
    if (most < 1)
      return 0;
  }
  return most;
}

namespace {
/// A chain split on the batch size: the scf.if, the copy of the chain in its
/// then branch (B <= bound) and the chain itself, moved to its else branch.
struct BatchSplit {
  scf::IfOp choice;
  SmallVector<LayerOp> thenLayers;
  SmallVector<LayerOp> elseLayers;
};
} // namespace

/// Moves the ops from the first layer of `layers` to the last into the else
/// branch of an `scf.if %B <= bound`, and a copy of them into its then
/// branch; the results that later ops use become the if's.
static BatchSplit splitAtBatch(RewriterBase &rewriter, ArrayRef<LayerOp> layers,
                               int64_t bound) {
  Operation *first = layers.front(), *last = layers.back();
  Block *block = first->getBlock();
  // The ops from the first layer to the last (the chain and what lies
  // between its layers: their weights' slices), and their results that ops
  // after the last layer use: what the branches yield.
  SmallVector<Operation *> range;
  for (Operation *op = first;; op = op->getNextNode()) {
    range.push_back(op);
    if (op == last)
      break;
  }
  SmallVector<Value> escaping;
  for (Operation *op : range)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            Operation *ancestor = block->findAncestorOpInBlock(*user);
            return ancestor && last->isBeforeInBlock(ancestor);
          }))
        escaping.push_back(result);

  Location loc = first->getLoc();
  rewriter.setInsertionPoint(first);
  Value batch = tensor::DimOp::create(
      rewriter, loc, LayerOp(layers.front()).getInputs().front(), 1);
  Value small = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ule, batch,
      arith::ConstantIndexOp::create(rewriter, loc, bound));
  rewriter.setInsertionPointAfter(last);
  auto choice =
      scf::IfOp::create(rewriter, loc, ValueRange(escaping).getTypes(), small,
                        /*withElseRegion=*/true);
  BatchSplit split{choice, {}, SmallVector<LayerOp>(layers)};
  rewriter.setInsertionPointToStart(choice.thenBlock());
  IRMapping map;
  for (Operation *op : range)
    rewriter.clone(*op, map);
  scf::YieldOp::create(
      rewriter, loc,
      llvm::map_to_vector(escaping, [&](Value v) { return map.lookup(v); }));
  for (LayerOp layer : layers)
    split.thenLayers.push_back(cast<LayerOp>(map.lookup(layer.getOperation())));
  rewriter.setInsertionPointToStart(choice.elseBlock());
  auto yield = scf::YieldOp::create(rewriter, loc, escaping);
  for (Operation *op : range)
    rewriter.moveOpBefore(op, yield);
  for (auto [value, result] : llvm::zip(escaping, choice.getResults()))
    rewriter.replaceUsesWithIf(value, result, [&](OpOperand &use) {
      return !choice->isProperAncestor(use.getOwner());
    });
  return split;
}

FailureOr<scf::IfOp> mlir::lstm::wavefrontAboveBatch(RewriterBase &rewriter,
                                                     ArrayRef<LayerOp> layers,
                                                     int64_t maxBatch,
                                                     int64_t wavefrontUpTo) {
  if (layers.size() < 2 || failed(planWavefront(layers)))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  BatchSplit split = splitAtBatch(rewriter, layers, maxBatch);
  // The layers, for the persistent kernels, in the then branch;
  // lstm-to-persistent adds its kernels' other run-time conditions here.
  split.choice->setAttr(kPersistentStackAttr, rewriter.getUnitAttr());
  // Planned above: the rewrite does not fail.
  if (wavefrontUpTo == std::numeric_limits<int64_t>::max()
          ? failed(wavefrontLayers(rewriter, split.elseLayers))
          : failed(
                wavefrontUpToBatch(rewriter, split.elseLayers, wavefrontUpTo)))
    return failure();
  return yieldWholeTensorsOfViews(rewriter, split.choice);
}

FailureOr<scf::IfOp> mlir::lstm::wavefrontUpToBatch(RewriterBase &rewriter,
                                                    ArrayRef<LayerOp> layers,
                                                    int64_t maxBatch) {
  if (layers.size() < 2 || failed(planWavefront(layers)))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  BatchSplit split = splitAtBatch(rewriter, layers, maxBatch);
  // Planned above (on the originals, which the copy matches).
  if (failed(wavefrontLayers(rewriter, split.thenLayers)))
    return failure();
  return yieldWholeTensorsOfViews(rewriter, split.choice);
}
