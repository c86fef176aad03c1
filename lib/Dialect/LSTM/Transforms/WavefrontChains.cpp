//===- WavefrontChains.cpp - Which layers form chains ---------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A chain is a sequence of layers, each reading an output of the one before
// as its first input: directly (a stack's forward), or through a product
// over all steps (a stack's backward, where layer l's input gradient
// dG_l · W_l is the output gradient of layer l-1).
//
// lstm-wavefront puts its loop where the chain's last layer is, so every
// value the chain reads must be defined before that layer and every use of
// a layer's results must come after it. A backward stack interleaves its
// layers with work on their results (the weight gradients of layer l are
// computed before layer l-1 runs): that work moves below the chain, in
// order, when nothing the chain reads depends on it.
//
//===----------------------------------------------------------------------===//

#include "WavefrontPlan.h"

#include "lstm/Dialect/LSTM/Transforms/Transforms.h"
#include "lstm/Dialect/LSTM/Utils/Matmul.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::lstm;

/// `input` as `expand(collapse(output) · W)`, each step's rows of the
/// output against a weight defined outside every layer.
static std::optional<ProjectedLink> matchProjectedLink(Value input,
                                                       Value output) {
  SmallVector<ReassociationIndices> rows = {{0, 1}, {2}};
  auto expand = input.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || expand.getReassociationIndices() != rows)
    return std::nullopt;
  auto product = expand.getSrc().getDefiningOp<linalg::LinalgOp>();
  std::optional<std::pair<Value, Value>> operands =
      matchZeroFilledMatmul(product);
  if (!operands || !product->hasOneUse())
    return std::nullopt;
  auto collapse = operands->first.getDefiningOp<tensor::CollapseShapeOp>();
  if (!collapse || collapse.getSrc() != output ||
      collapse.getReassociationIndices() != rows)
    return std::nullopt;
  auto weight = dyn_cast<RankedTensorType>(operands->second.getType());
  if (!weight || !weight.hasStaticShape())
    return std::nullopt;
  return ProjectedLink{collapse, product, expand};
}

std::optional<ChainLink> mlir::lstm::linkBetween(LayerOp layer, LayerOp next) {
  if (next.getInputs().empty())
    return std::nullopt;
  Value input = next.getInputs()[0];
  for (auto [k, output] : llvm::enumerate(layer.getOutputs())) {
    if (input == output)
      return ChainLink{static_cast<unsigned>(k), std::nullopt};
    if (std::optional<ProjectedLink> projection =
            matchProjectedLink(input, output))
      return ChainLink{static_cast<unsigned>(k), projection};
  }
  return std::nullopt;
}

/// The layers that read an output of `layer`: directly, or through the
/// ops of a product (collapse, product, expand).
static SmallVector<LayerOp> readersOf(LayerOp layer) {
  SmallVector<LayerOp> readers;
  SmallVector<Value> worklist(layer.getOutputs());
  unsigned depth = 0;
  // The ops of a projected link are three deep.
  while (!worklist.empty() && depth++ < 4) {
    SmallVector<Value> next;
    for (Value v : worklist)
      for (Operation *user : v.getUsers()) {
        if (auto reader = dyn_cast<LayerOp>(user))
          readers.push_back(reader);
        else if (isa<tensor::CollapseShapeOp, linalg::GenericOp,
                     tensor::ExpandShapeOp>(user))
          llvm::append_range(next, user->getResults());
      }
    worklist = std::move(next);
  }
  return readers;
}

/// The layer that reads an output of `layer` as its first input (directly
/// or through a product), when it is the only such layer.
static LayerOp nextInChain(LayerOp layer) {
  LayerOp next;
  for (LayerOp candidate : readersOf(layer)) {
    if (candidate == next || candidate->getBlock() != layer->getBlock() ||
        !linkBetween(layer, candidate))
      continue;
    if (next)
      return {};
    next = candidate;
  }
  return next;
}

SmallVector<SmallVector<LayerOp>> mlir::lstm::findLayerChains(Operation *root) {
  SmallVector<LayerOp> all;
  root->walk([&](LayerOp layer) { all.push_back(layer); });
  // Chains start at layers that do not continue another chain.
  llvm::SmallPtrSet<Operation *, 8> continuing;
  for (LayerOp layer : all)
    if (LayerOp next = nextInChain(layer))
      continuing.insert(next);
  SmallVector<SmallVector<LayerOp>> chains;
  for (LayerOp layer : all) {
    if (continuing.contains(layer))
      continue;
    SmallVector<LayerOp> chain = {layer};
    while (LayerOp next = nextInChain(chain.back()))
      chain.push_back(next);
    if (chain.size() >= 2)
      chains.push_back(std::move(chain));
  }
  return chains;
}

void mlir::lstm::sinkIndependentOpsBelowChain(RewriterBase &rewriter,
                                              ArrayRef<LayerOp> layers) {
  Operation *first = layers.front(), *last = layers.back();
  Block *block = first->getBlock();
  if (last->getBlock() != block)
    return;
  llvm::SmallPtrSet<Operation *, 8> chain;
  for (LayerOp layer : layers)
    chain.insert(layer);
  SmallVector<Operation *> between;
  for (Operation *op = first->getNextNode(); op && op != last;
       op = op->getNextNode())
    if (!chain.contains(op))
      between.push_back(op);
  if (between.empty())
    return;

  // What the chain reads, transitively, among the ops between its layers
  // (values used inside an op's regions count as its operands).
  llvm::SmallPtrSet<Operation *, 16> needed;
  SmallVector<Operation *> worklist(layers.begin(), layers.end());
  auto reads = [](Operation *op) {
    llvm::SetVector<Value> values(op->operand_begin(), op->operand_end());
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, values);
    return values;
  };
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    for (Value v : reads(op)) {
      Operation *def = v.getDefiningOp();
      if (!def)
        continue;
      def = block->findAncestorOpInBlock(*def);
      if (!def || chain.contains(def) || !first->isBeforeInBlock(def) ||
          !def->isBeforeInBlock(last) || !needed.insert(def).second)
        continue;
      worklist.push_back(def);
    }
  }

  SmallVector<Operation *> moved;
  for (Operation *op : between)
    if (!needed.contains(op)) {
      // Only ops without effects change places with the layers.
      if (!isMemoryEffectFree(op))
        return;
      moved.push_back(op);
    }
  Operation *after = last;
  for (Operation *op : moved) {
    rewriter.moveOpAfter(op, after);
    after = op;
  }
}
