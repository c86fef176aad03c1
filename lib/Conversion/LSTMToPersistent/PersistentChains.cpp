//===- PersistentChains.cpp - The chains of layers one kernel runs -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The analysis half of a stack's kernel (PersistentStack.cpp): which layers
// form a chain, each reading the projection of the one before's output, and
// what must move for one kernel to replace them.
//
//===----------------------------------------------------------------------===//

#include "PersistentChains.h"

#include "lstm/Dialect/LSTM/Utils/Matmul.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

static bool isRowsByColumns(ArrayRef<ReassociationIndices> reassociation) {
  return reassociation.size() == 2 &&
         reassociation[0] == ReassociationIndices{0, 1} &&
         reassociation[1] == ReassociationIndices{2};
}

/// The link that makes `to`'s input `input`, or nullopt.
static std::optional<Link> matchLink(LayerOp to, unsigned input) {
  auto expand = to.getInputs()[input].getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || !expand->hasOneUse() ||
      !isRowsByColumns(expand.getReassociationIndices()))
    return std::nullopt;
  Operation *product = expand.getSrc().getDefiningOp();
  if (!product || !product->hasOneUse())
    return std::nullopt;
  Value projected, weight;
  bool transposed = false;
  if (auto gate = dyn_cast<GateOp>(product)) {
    if (gate.getActivation() != Activation::identity ||
        gate.getInputs().size() != 1 || !gate.getAddends().empty() ||
        !gate.getBiases().empty() || gate.getPeephole())
      return std::nullopt;
    projected = gate.getInputs().front();
    weight = gate.getWeights().front();
  } else if (auto operands = matchZeroFilledMatmul(product)) {
    std::tie(projected, weight) = *operands;
    transposed = true;
  } else {
    return std::nullopt;
  }
  auto collapse = projected.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || !isRowsByColumns(collapse.getReassociationIndices()))
    return std::nullopt;
  auto result = dyn_cast<OpResult>(collapse.getSrc());
  auto from = result ? dyn_cast<LayerOp>(result.getOwner()) : LayerOp();
  if (!from || result.getResultNumber() >= from.getOutputs().size() ||
      from->getBlock() != to->getBlock() || !from->isBeforeInBlock(to) ||
      from.isReverse() != to.isReverse())
    return std::nullopt;
  // (That the expansion restores the output's [T, B] is checked at run
  // time: StackKernel::build.)
  auto sequence = cast<RankedTensorType>(collapse.getSrc().getType());
  auto weightType = dyn_cast<RankedTensorType>(weight.getType());
  if (!weightType || weightType.getRank() != 2 ||
      !weightType.hasStaticShape() || sequence.isDynamicDim(2) ||
      weightType.getDimSize(transposed ? 0 : 1) != sequence.getDimSize(2))
    return std::nullopt;
  Link link{from,       unsigned(result.getResultNumber()),
            input,      weight,
            transposed, {expand, product}};
  if (collapse->hasOneUse())
    link.projection.push_back(collapse);
  return link;
}

SmallVector<Chain>
mlir::lstm::persistent::findChains(ArrayRef<LayerOp> layers) {
  llvm::SetVector<Operation *> candidates;
  for (LayerOp layer : layers)
    candidates.insert(layer);
  DenseMap<Operation *, Link> linkTo;
  DenseMap<Operation *, LayerOp> next;
  for (LayerOp to : layers)
    for (unsigned i = 0; i < to.getInputs().size() && !linkTo.count(to); ++i)
      if (std::optional<Link> link = matchLink(to, i);
          link && candidates.contains(link->from) && !next.count(link->from)) {
        next[link->from] = to;
        linkTo[to] = *link;
      }
  SmallVector<Chain> chains;
  for (LayerOp layer : layers) {
    if (linkTo.count(layer) || !next.count(layer))
      continue;
    Chain &chain = chains.emplace_back();
    chain.layers.push_back(layer);
    while (LayerOp to = next.lookup(chain.layers.back())) {
      chain.links.push_back(linkTo.lookup(to));
      chain.layers.push_back(to);
    }
  }
  return chains;
}

/// Values `op` reads: its operands and those its regions read from above.
static SmallVector<Value> valuesRead(Operation *op) {
  llvm::SetVector<Value> values(op->operand_begin(), op->operand_end());
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, values);
  return values.takeVector();
}

FailureOr<SmallVector<Operation *>>
mlir::lstm::persistent::prepareChain(RewriterBase &rewriter, Chain &chain) {
  // The extents of a layer's results are those of its first input (T and
  // B; the batch for the finals): read there, where an expansion's are its
  // operands, they need not wait for the kernel.
  for (LayerOp layer : ArrayRef(chain.layers).drop_back()) {
    Value seq0 = layer.getInputs().front();
    for (OpResult result : layer->getResults()) {
      bool sequence = result.getResultNumber() < layer.getOutputs().size();
      for (Operation *user : llvm::make_early_inc_range(result.getUsers())) {
        auto dim = dyn_cast<tensor::DimOp>(user);
        std::optional<int64_t> d = dim ? dim.getConstantIndex() : std::nullopt;
        if (!d || (sequence ? *d > 1 : *d != 0))
          continue;
        int64_t inputDim = sequence ? *d : 1;
        rewriter.setInsertionPoint(dim);
        OpFoldResult extent;
        if (auto expand = seq0.getDefiningOp<tensor::ExpandShapeOp>())
          extent = expand.getMixedOutputShape()[inputDim];
        else
          extent = tensor::DimOp::create(rewriter, dim.getLoc(), seq0, inputDim)
                       .getResult();
        rewriter.replaceOp(dim, getValueOrCreateConstantIndexOp(
                                    rewriter, dim.getLoc(), extent));
      }
    }
  }
  llvm::SetVector<Operation *> dead, layers;
  for (LayerOp layer : chain.layers)
    layers.insert(layer);
  for (const Link &link : chain.links)
    dead.insert(link.projection.begin(), link.projection.end());
  // With them the pure ops between the layers that only they read (a
  // product's zero-filled init and its extents).
  LayerOp first = chain.layers.front(), last = chain.layers.back();
  for (Operation *op = last->getPrevNode(); op != first; op = op->getPrevNode())
    if (!dead.contains(op) && !layers.contains(op) && isPure(op) &&
        !op->use_empty() && llvm::all_of(op->getUsers(), [&](Operation *user) {
          return dead.contains(user);
        }))
      dead.insert(op);
  // The ops between the first layer and the last that depend on a layer's
  // results (the shared collapses among them): they must move.
  llvm::SetVector<Operation *> moved;
  DenseSet<Value> computed;
  for (LayerOp layer : ArrayRef(chain.layers).drop_back())
    computed.insert(layer->result_begin(), layer->result_end());
  for (Operation *op = first->getNextNode(); op != last;
       op = op->getNextNode()) {
    bool reads = llvm::any_of(valuesRead(op),
                              [&](Value v) { return computed.contains(v); });
    if (layers.contains(op) && reads)
      return failure();
    if (layers.contains(op) || dead.contains(op))
      continue;
    if (reads || llvm::any_of(valuesRead(op), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && moved.contains(def);
        })) {
      moved.insert(op);
      computed.insert(op->result_begin(), op->result_end());
    }
  }
  // The last layer reads none of them.
  for (Value v : valuesRead(last))
    if (computed.contains(v))
      return failure();

  // What the projections read of the ops that move (a collapse that the
  // weight gradients also read, its extents): pure ops, copied for them.
  llvm::SetVector<Operation *> copied;
  SmallVector<Operation *> worklist(dead.begin(), dead.end());
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value v : valuesRead(op)) {
      Operation *def = v.getDefiningOp();
      if (!def || !moved.contains(def) || copied.contains(def))
        continue;
      if (!isPure(def))
        return failure();
      copied.insert(def);
      worklist.push_back(def);
    }
  }
  SmallVector<Operation *> copies(copied.begin(), copied.end());
  llvm::sort(copies,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  IRMapping mapping;
  for (Operation *original : copies) {
    rewriter.setInsertionPointAfter(original);
    Operation *copy = rewriter.clone(*original, mapping);
    for (auto [from, to] :
         llvm::zip(original->getResults(), copy->getResults()))
      rewriter.replaceUsesWithIf(from, to, [&](OpOperand &use) {
        return dead.contains(use.getOwner());
      });
    dead.insert(copy);
  }
  Operation *after = last;
  for (Operation *op : moved) {
    rewriter.moveOpAfter(op, after);
    after = op;
  }
  SmallVector<Operation *> ops(dead.begin(), dead.end());
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ops;
}

SmallVector<LayerOp>
mlir::lstm::persistent::branchChain(RewriterBase &rewriter, const Chain &chain,
                                    ArrayRef<Operation *> dead,
                                    Value condition) {
  LayerOp last = chain.layers.back();
  Location loc = last.getLoc();
  SmallVector<Operation *> ops(dead.begin(), dead.end());
  for (LayerOp layer : chain.layers)
    ops.push_back(layer);
  llvm::sort(ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  SmallVector<Value> results;
  SmallVector<Type> types;
  for (LayerOp layer : chain.layers)
    for (Value r : layer->getResults()) {
      results.push_back(r);
      types.push_back(r.getType());
    }
  rewriter.setInsertionPoint(last);
  auto branch = scf::IfOp::create(rewriter, loc, types, condition,
                                  /*withElseRegion=*/true);
  rewriter.setInsertionPointToStart(branch.thenBlock());
  auto thenYield = scf::YieldOp::create(rewriter, loc, results);
  for (Operation *op : ops)
    rewriter.moveOpBefore(op, thenYield);
  for (auto [r, replacement] : llvm::zip(results, branch.getResults()))
    rewriter.replaceUsesWithIf(r, replacement, [&](OpOperand &use) {
      return !branch->isAncestor(use.getOwner());
    });
  rewriter.setInsertionPointToStart(branch.elseBlock());
  IRMapping mapping;
  for (Operation *op : ops)
    rewriter.clone(*op, mapping);
  return llvm::map_to_vector(chain.layers, [&](LayerOp layer) {
    return cast<LayerOp>(mapping.lookup(layer.getOperation()));
  });
}
