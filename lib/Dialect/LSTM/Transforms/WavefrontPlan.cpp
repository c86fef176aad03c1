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
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#include <limits>

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
  if (isa<GateOp, tensor::ExtractSliceOp, tensor::InsertSliceOp,
          tensor::EmptyOp>(op))
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

RankedTensorType WavefrontPlan::linkType() const {
  auto out = cast<RankedTensorType>(
      LayerOp(reference()).getYield().getOutputs()[linkOutput].getType());
  if (projections.empty())
    return out;
  auto weight = cast<RankedTensorType>(
      ProjectedLink(projections.front()).weight().getType());
  return RankedTensorType::get({out.getDimSize(0), weight.getDimSize(1)},
                               out.getElementType());
}

/// The layers agree on what the loop carries: one direction, no lengths,
/// the same inputs (the first the previous layer's output at one position,
/// directly or through a product), outputs and states of the same types,
/// cells of the same length.
static LogicalResult checkLayers(WavefrontPlan &plan) {
  ArrayRef<LayerOp> layers = plan.layers;
  LayerOp ref = layers.back();
  size_t refCellSize = ref.getBody().front().getOperations().size();
  plan.numInputs = ref.getInputs().size();
  for (auto [l, constLayer] : llvm::enumerate(layers)) {
    LayerOp layer = constLayer;
    if (layer.getDirection() != ref.getDirection())
      return reject(layers.front(), "the layers run in different directions");
    if (layer.getLengths())
      return reject(layers.front(), "a layer has lengths");
    if (layer.getInputs().size() != plan.numInputs)
      return reject(layers.front(), "the layers read different numbers of "
                                    "sequences");
    for (unsigned i = 1; i < plan.numInputs; ++i)
      if (layer.getInputs()[i].getType() != ref.getInputs()[i].getType())
        return reject(layers.front(), "the layers' other sequences differ in "
                                      "type");
    if (l + 1 < layers.size()) {
      std::optional<ChainLink> link = linkBetween(layer, layers[l + 1]);
      if (!link)
        return reject(layers.front(),
                      "a layer does not read the previous one's output");
      if (l == 0)
        plan.linkOutput = link->output;
      else if (link->output != plan.linkOutput)
        return reject(layers.front(), "the layers pass on different outputs");
      if (l > 0 && link->projection.has_value() != !plan.projections.empty())
        return reject(layers.front(), "some links are products, some not");
      if (link->projection) {
        if (!plan.projections.empty() &&
            link->projection->weight().getType() !=
                plan.projections.front().weight().getType())
          return reject(layers.front(),
                        "the links' products have weights of different types");
        plan.projections.push_back(*link->projection);
      }
    }
    if (layer.getOutputs().size() != ref.getOutputs().size())
      return reject(layers.front(), "the layers have different outputs");
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

/// Whether `use` is the next layer of the chain reading `layers[l]`'s link
/// output, or the first op of the product that passes it on.
static bool isChainLink(const WavefrontPlan &plan, unsigned l, OpOperand &use) {
  if (l + 1 >= plan.layers.size() ||
      use.get() != LayerOp(plan.layers[l]).getOutputs()[plan.linkOutput])
    return false;
  if (!plan.projections.empty())
    return use.getOwner() ==
           ProjectedLink(plan.projections[l]).rows.getOperation();
  return use.getOwner() == LayerOp(plan.layers[l + 1]).getOperation();
}

/// Whether output `k` of layer `l` is read by something else than the
/// chain's link (where the link is a product, its rows may be shared).
static bool isReadOutsideChain(const WavefrontPlan &plan, unsigned l,
                               unsigned k) {
  for (OpOperand &use : LayerOp(plan.layers[l]).getOutputs()[k].getUses()) {
    if (!isChainLink(plan, l, use))
      return true;
    if (!plan.projections.empty() &&
        !ProjectedLink(plan.projections[l]).rows->hasOneUse())
      return true;
  }
  return false;
}

/// The outputs that are read outside the chain, at some layer. The loop
/// stores them [L, L + T - 1, B, N], which needs a static N.
static LogicalResult collectSideOutputs(WavefrontPlan &plan) {
  unsigned last = plan.layers.size() - 1;
  LayerOp ref = plan.reference();
  for (unsigned k = 0, e = ref.getOutputs().size(); k < e; ++k) {
    bool read = false;
    for (unsigned l = 0; l <= last; ++l)
      if (!(l == last && k == plan.linkOutput))
        read |= isReadOutsideChain(plan, l, k);
    if (!read)
      continue;
    if (cast<RankedTensorType>(ref.getYield().getOutputs()[k].getType())
            .isDynamicDim(1))
      return reject(plan.layers.front(),
                    "an output read outside the chain has a dynamic size");
    plan.sideOutputs.push_back(k);
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
  if (refInputType != plan.linkType())
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
    // Equal constants count as one value (the layers of a training forward
    // each have their own).
    Attribute lc, rc;
    if (lv != rv && !(matchPattern(lv, m_Constant(&lc)) &&
                      matchPattern(rv, m_Constant(&rc)) && lc == rc))
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

/// The loop replaces the layers' finals and outputs where the last layer
/// was: they must not be used before it (but for the chain's links).
static LogicalResult checkResultsUsedAfter(const WavefrontPlan &plan) {
  Operation *last = plan.reference();
  auto usedBefore = [&](OpOperand &use) {
    Operation *ancestor =
        last->getBlock()->findAncestorOpInBlock(*use.getOwner());
    return !ancestor || !last->isBeforeInBlock(ancestor);
  };
  for (auto [l, layer] : llvm::enumerate(plan.layers)) {
    for (Value final : LayerOp(layer).getFinals())
      for (OpOperand &use : final.getUses())
        if (usedBefore(use))
          return reject(plan.layers.front(), "a layer's final state is used "
                                             "before the last layer");
    for (Value output : LayerOp(layer).getOutputs())
      for (OpOperand &use : output.getUses())
        if (!isChainLink(plan, l, use) && usedBefore(use))
          return reject(plan.layers.front(),
                        "a layer's output is used before the last layer");
  }
  return success();
}

/// (T + L - 1) · (P + P_link) against L · T · (P - P_in), with P the
/// products of a cell, P_in those on its input slice and P_link 1 where the
/// links are products (each diagonal computes them for the next; layers
/// compute them after their loops, one product over all steps); for a
/// dynamic T, P + P_link against L · (P - P_in). For the LSTM (one product
/// on the input, one on the state once combined) that takes three layers
/// or more; for Cho's GRU (a second, dependent recurrent product) two; for
/// the LSTM's backward (one product on the state, the input gradient on the
/// link) three.
bool mlir::lstm::wavefrontRunsFewerProducts(const WavefrontPlan &plan) {
  LayerOp ref = plan.reference();
  Value input = plan.inputArg(plan.layers.size() - 1);
  int64_t products = 0, inputProducts = 0;
  for (const GateProduct &product : CellDependence(ref).getProducts()) {
    ++products;
    inputProducts += product.getOperand() == input;
  }
  int64_t perDiagonal = products + (plan.projections.empty() ? 0 : 1);
  int64_t numLayers = plan.layers.size();
  int64_t perLayerStep = numLayers * (products - inputProducts);
  int64_t seqLen = cast<RankedTensorType>(
                       LayerOp(plan.layers.front()).getInputs()[0].getType())
                       .getDimSize(0);
  return ShapedType::isDynamic(seqLen)
             ? perDiagonal < perLayerStep
             : (seqLen + numLayers - 1) * perDiagonal < seqLen * perLayerStep;
}

/// The side outputs cost the loop a store a diagonal (and a training
/// forward, which returns every layer's saved sequences, a copy of each at
/// the return): a chain that has them is rewritten only where the wavefront
/// runs fewer products one after the other than its layers would, their
/// input products hoisted out of their loops (lstm-optimize hoists them).
static LogicalResult checkSideOutputsPay(const WavefrontPlan &plan) {
  if (!plan.sideOutputs.empty() && !wavefrontRunsFewerProducts(plan))
    return reject(plan.layers.front(),
                  "the layers' outputs are read outside the chain, and the "
                  "wavefront would not run fewer products in sequence to pay "
                  "for storing them");
  return success();
}

FailureOr<WavefrontPlan> mlir::lstm::planWavefront(ArrayRef<LayerOp> layers) {
  if (layers.size() < 2)
    return failure();
  WavefrontPlan plan;
  plan.layers.assign(layers.begin(), layers.end());
  if (failed(checkLayers(plan)) || failed(checkInputs(plan)) ||
      failed(matchCells(plan)) || failed(checkResultsUsedAfter(plan)) ||
      failed(collectSideOutputs(plan)) || failed(checkSideOutputsPay(plan)))
    return failure();
  return plan;
}

int64_t mlir::lstm::wavefrontMaxBatch(ArrayRef<LayerOp> layers,
                                      int64_t maxProductSize) {
  FailureOr<WavefrontPlan> plan = planWavefront(layers);
  if (failed(plan))
    return 0;
  if (plan->sideOutputs.empty())
    return std::numeric_limits<int64_t>::max();
  // The largest weight of a product, N·K elements; a weight of unknown size
  // leaves the batch unbounded, as before there was a bound.
  int64_t largest = 0;
  for (const GateProduct &product :
       CellDependence(plan->reference()).getProducts()) {
    auto weight = cast<RankedTensorType>(product.getWeight().getType());
    if (!weight.hasStaticShape())
      return std::numeric_limits<int64_t>::max();
    largest = std::max(largest, weight.getNumElements());
  }
  if (largest == 0)
    return std::numeric_limits<int64_t>::max();
  return maxProductSize / largest;
}
