//===- WavefrontPlan.cpp - Which stacks lstm-wavefront can run ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A chain of layers runs as a wavefront when one batched cell can stand for
// all of them: the cells are the same ops in the same order, reading the
// same arguments and the same positions of each other, and differ only in
// the tensors they capture from above (their weights), which the rewrite
// stacks [L, ...].
//
//===----------------------------------------------------------------------===//

#include "WavefrontPlan.h"

#include "lstm/Dialect/LSTM/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "lstm-wavefront"

using namespace mlir;
using namespace mlir::lstm;

// Operand positions come from the ODS groups of lstm.gate (0 inputs,
// 1 weights, 2 addends, 3 biases, 4 peephole, 5 peephole state): an empty
// OperandRange has no begin index.

bool mlir::lstm::isInputWeight(Operation *op, unsigned j, Value inputArg) {
  auto gate = dyn_cast<GateOp>(op);
  if (!gate)
    return false;
  unsigned begin = gate.getODSOperandIndexAndLength(1).first;
  if (j < begin || j >= begin + gate.getWeights().size())
    return false;
  return gate.getInputs()[j - begin] == inputArg;
}

/// Whether the batched cell can hold a copy of `op` (see the pass
/// description for the list).
static bool isBatchable(Operation *op) {
  if (op->getNumRegions() != 0)
    return false;
  if (isa<GateOp, tensor::ExtractSliceOp>(op))
    return true;
  if (auto dim = dyn_cast<tensor::DimOp>(op))
    return matchPattern(dim.getIndex(), m_Constant());
  auto isTensor = [](Type t) { return isa<TensorType>(t); };
  bool touchesTensors = llvm::any_of(op->getOperandTypes(), isTensor) ||
                        llvm::any_of(op->getResultTypes(), isTensor);
  if (op->hasTrait<OpTrait::Elementwise>())
    return llvm::all_of(op->getResultTypes(),
                        [](Type t) { return isa<RankedTensorType>(t); });
  return !touchesTensors && isMemoryEffectFree(op);
}

/// Reports why the chain starting at `front` is left alone.
static LogicalResult reject(LayerOp front, const Twine &why) {
  LLVM_DEBUG(llvm::dbgs() << "lstm-wavefront: leaving the chain at "
                          << front.getLoc() << " alone: " << why << "\n");
  return failure();
}

/// The layers agree on what the loop carries: one direction, no lengths,
/// one input and one output each, states of the same types, cells of the
/// same length.
static LogicalResult checkLayers(ArrayRef<LayerOp> layers) {
  LayerOp ref = layers.back();
  size_t refCellSize = ref.getBody().front().getOperations().size();
  for (LayerOp layer : layers) {
    if (layer.getDirection() != ref.getDirection())
      return reject(layers.front(), "the layers run in different directions");
    if (layer.getLengths())
      return reject(layers.front(), "a layer has lengths");
    if (layer.getInputs().size() != 1 || layer.getOutputs().size() != 1)
      return reject(layers.front(),
                    "a layer has more than one input or output");
    if (layer.getInits().size() != ref.getInits().size() ||
        layer.getBody().front().getOperations().size() != refCellSize)
      return reject(layers.front(), "the cells differ in structure");
    for (auto [a, b] : llvm::zip(layer.getStateArgs(), ref.getStateArgs()))
      if (a.getType() != b.getType())
        return reject(layers.front(),
                      "the layers' states have different types");
  }
  return success();
}

/// The batched input is [x_t; previous outputs], so the input slice of the
/// reference is an output of the cell and layers 1 .. L-1 read slices of
/// one type. Layer 0's may differ (separateInput) when only gate products
/// read it; those products are then collected.
static LogicalResult checkInputs(WavefrontPlan &plan) {
  unsigned last = plan.layers.size() - 1;
  LayerOp front = plan.layers.front();
  LayerOp ref = plan.reference();
  Type refInputType = plan.inputArg(last).getType();
  if (refInputType != ref.getYield().getOutputs().front().getType())
    return reject(front, "a layer's input slice and output differ in type");
  for (unsigned l = 1; l < last; ++l)
    if (plan.inputArg(l).getType() != refInputType)
      return reject(front, "the layers' inputs differ in type");
  plan.separateInput = plan.inputArg(0).getType() != refInputType;
  if (!plan.separateInput)
    return success();
  for (unsigned l = 0; l <= last; ++l)
    for (OpOperand &use : plan.inputArg(l).getUses()) {
      auto gate = dyn_cast<GateOp>(use.getOwner());
      unsigned begin = gate ? gate.getODSOperandIndexAndLength(0).first : 0;
      if (!gate || use.getOperandNumber() < begin ||
          use.getOperandNumber() >= begin + gate.getInputs().size())
        return reject(front, "layer 0's input size differs and an input "
                             "slice is used by something else than a gate "
                             "product");
    }
  CellDependence deps(ref);
  for (const GateProduct &product : deps.getProducts())
    if (product.getOperand() == plan.inputArg(last))
      plan.inputProducts.push_back(product);
  return success();
}

namespace {
/// The ops of each layer's cell in order, and each op's position.
struct CellPositions {
  SmallVector<DenseMap<Operation *, unsigned>> position;
  SmallVector<SmallVector<Operation *>> ops;

  explicit CellPositions(const WavefrontPlan &plan)
      : position(plan.layers.size()), ops(plan.layers.size()) {
    for (unsigned l = 0, e = plan.layers.size(); l < e; ++l)
      for (Operation &op : plan.cell(l)) {
        position[l][&op] = ops[l].size();
        ops[l].push_back(&op);
      }
  }
};
} // namespace

/// Whether `op` (of some layer's cell) is the same op as `refOp` of the
/// reference cell: name, attributes, properties, operand count and result
/// types.
static bool isSameOp(Operation *op, Operation *refOp) {
  return op->getName() == refOp->getName() &&
         op->getRawDictionaryAttrs() == refOp->getRawDictionaryAttrs() &&
         op->getName().compareOpProperties(op->getPropertiesStorage(),
                                           refOp->getPropertiesStorage()) &&
         op->getNumOperands() == refOp->getNumOperands() &&
         op->getResultTypes() == refOp->getResultTypes();
}

/// Matches operand `j` of layer `l`'s op at `position` with the reference
/// cell's: the same block argument, the same result of the op at the same
/// position, or a value captured from above (recorded in `plan.captured`
/// when it is a tensor; other captured values must be the same value).
static LogicalResult matchOperand(WavefrontPlan &plan,
                                  const CellPositions &cells, unsigned l,
                                  unsigned position, unsigned j) {
  unsigned last = plan.layers.size() - 1;
  LayerOp front = plan.layers.front();
  Operation *refOp = cells.ops[last][position];
  Block &refCell = plan.cell(last);
  Value rv = refOp->getOperand(j);
  Value lv = cells.ops[l][position]->getOperand(j);
  if (auto arg = dyn_cast<BlockArgument>(rv);
      arg && arg.getOwner() == &refCell) {
    auto larg = dyn_cast<BlockArgument>(lv);
    if (!larg || larg.getOwner() != &plan.cell(l) ||
        larg.getArgNumber() != arg.getArgNumber())
      return reject(front, "the cells differ in structure");
    return success();
  }
  if (Operation *def = rv.getDefiningOp(); def && def->getBlock() == &refCell) {
    Operation *ldef = lv.getDefiningOp();
    if (!ldef || ldef->getBlock() != &plan.cell(l) ||
        cells.position[l].lookup(ldef) != cells.position[last].lookup(def) ||
        cast<OpResult>(lv).getResultNumber() !=
            cast<OpResult>(rv).getResultNumber())
      return reject(front, "the cells differ in structure");
    return success();
  }
  // Captured from above.
  if (plan.cell(l).getParent()->isAncestor(lv.getParentRegion()))
    return reject(front, "the cells differ in structure");
  bool inputWeight = plan.separateInput && l == 0 &&
                     isInputWeight(refOp, j, plan.inputArg(last));
  if (lv.getType() != rv.getType() && !inputWeight)
    return reject(front, "a captured value differs in type between layers");
  if (!isa<RankedTensorType>(rv.getType())) {
    if (lv != rv)
      return reject(front, "a captured value that is not a tensor differs "
                           "between layers");
    return success();
  }
  plan.captured[{position, j}].push_back(lv);
  return success();
}

/// The cells are the reference cell op for op, every op batchable; collects
/// the captured tensors.
static LogicalResult matchCells(WavefrontPlan &plan) {
  CellPositions cells(plan);
  unsigned numLayers = plan.layers.size();
  for (auto [position, refOp] : llvm::enumerate(cells.ops[numLayers - 1])) {
    if (!refOp->hasTrait<OpTrait::IsTerminator>() && !isBatchable(refOp))
      return reject(plan.layers.front(),
                    "the cell has an op that cannot be batched: " +
                        refOp->getName().getStringRef());
    for (unsigned l = 0; l < numLayers; ++l) {
      if (!isSameOp(cells.ops[l][position], refOp))
        return reject(plan.layers.front(), "the cells differ in structure");
      for (unsigned j = 0, e = refOp->getNumOperands(); j < e; ++j)
        if (failed(matchOperand(plan, cells, l, position, j)))
          return failure();
    }
  }
  return success();
}

/// The loop replaces the finals where the last layer was: they must not be
/// used before it.
static LogicalResult checkFinalsUsedAfter(ArrayRef<LayerOp> layers) {
  Operation *last = layers.back();
  for (LayerOp layer : layers)
    for (Value final : layer.getFinals())
      for (Operation *user : final.getUsers()) {
        Operation *ancestor = last->getBlock()->findAncestorOpInBlock(*user);
        if (!ancestor || !last->isBeforeInBlock(ancestor))
          return reject(layers.front(),
                        "a layer's final state is used before the last layer");
      }
  return success();
}

FailureOr<WavefrontPlan> mlir::lstm::planWavefront(ArrayRef<LayerOp> layers) {
  if (layers.size() < 2)
    return failure();
  WavefrontPlan plan;
  plan.layers.assign(layers.begin(), layers.end());
  if (failed(checkLayers(layers)) || failed(checkInputs(plan)) ||
      failed(matchCells(plan)) || failed(checkFinalsUsedAfter(layers)))
    return failure();
  return plan;
}

/// The layer that reads `layer`'s only output as its only input, when that
/// is the output's only use.
static LayerOp nextInChain(LayerOp layer) {
  if (layer.getOutputs().size() != 1 || !layer.getOutputs()[0].hasOneUse())
    return {};
  Operation *user = *layer.getOutputs()[0].getUsers().begin();
  auto next = dyn_cast<LayerOp>(user);
  if (!next || next->getBlock() != layer->getBlock() ||
      next.getInputs().size() != 1 ||
      next.getInputs()[0] != layer.getOutputs()[0])
    return {};
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
