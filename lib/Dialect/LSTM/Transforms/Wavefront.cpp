//===- Wavefront.cpp - Stacked layers as a layer-time wavefront -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A stack of L layers run one after the other takes L·T sequential steps,
// each too small to fill a GPU. Cell (l, t) only needs (l-1, t) and
// (l, t-1), so the cells of a diagonal l + t = d are independent: this pass
// runs the L + T - 1 diagonals in order and, within a diagonal, all L
// layers' cells as one batched cell (batched gates over weights stacked
// [L, H, K], pointwise math on [L, B, H]).
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"

#include "lstm/Dialect/LSTM/Analysis/CellDependence.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"
#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "lstm-wavefront"

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMWAVEFRONTPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

namespace {

/// An operand of the reference cell: (op position in the cell, operand
/// number). The terminator is the last position.
using Slot = std::pair<unsigned, unsigned>;

/// A chain of stacked layers that the pass can rewrite, and what the rewrite
/// needs to know about it.
struct WavefrontPlan {
  SmallVector<LayerOp> layers;
  /// Layer 0's input slice has another type than the other layers': its
  /// gate products are computed apart from the batched ones.
  bool separateInput = false;
  /// The values that each layer's cell captures from above, per operand of
  /// the reference cell (the last layer's) that reads one. Layer 0's entry
  /// of an input weight (separateInput) may have another type.
  llvm::MapVector<Slot, SmallVector<Value>> captured;
  /// The input products of the reference cell (separateInput only): the
  /// products whose operand is the input slice.
  SmallVector<GateProduct> inputProducts;

  LayerOp reference() const { return layers.back(); }
  Block &cell(unsigned l) const { return LayerOp(layers[l]).getBody().front(); }
  BlockArgument inputArg(unsigned l) const {
    return LayerOp(layers[l]).getInputSlices().front();
  }
};

} // namespace

/// `type` with a leading extent `n`.
static RankedTensorType prependExtent(Type type, int64_t n) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape = {n};
  llvm::append_range(shape, t.getShape());
  return RankedTensorType::get(shape, t.getElementType());
}

// Operand positions come from the ODS groups of lstm.gate (0 inputs,
// 1 weights, 2 addends, 3 biases, 4 peephole, 5 peephole state) and of
// lstm.yield (0 outputs, 1 state): an empty OperandRange has no begin index.

/// Whether operand `j` of `op` is one of the weights of a product whose
/// operand is `inputArg`.
static bool isInputWeight(Operation *op, unsigned j, Value inputArg) {
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

/// Checks that `layers` (a chain, in order) can be run as a wavefront and
/// collects what the rewrite needs. Failures are reported under
/// -debug-only=lstm-wavefront.
static FailureOr<WavefrontPlan> planChain(ArrayRef<LayerOp> layers) {
  auto reject = [&](const Twine &why) -> FailureOr<WavefrontPlan> {
    LLVM_DEBUG(llvm::dbgs()
               << "lstm-wavefront: leaving the chain at "
               << layers.front().getLoc() << " alone: " << why << "\n");
    return failure();
  };
  WavefrontPlan plan;
  plan.layers.assign(layers.begin(), layers.end());
  unsigned numLayers = layers.size();
  LayerOp ref = plan.reference();
  Block &refCell = plan.cell(numLayers - 1);

  for (LayerOp layer : layers) {
    if (layer.getDirection() != ref.getDirection())
      return reject("the layers run in different directions");
    if (layer.getLengths())
      return reject("a layer has lengths");
    if (layer.getInputs().size() != 1 || layer.getOutputs().size() != 1)
      return reject("a layer has more than one input or output");
    if (layer.getInits().size() != ref.getInits().size() ||
        layer.getBody().front().getOperations().size() !=
            refCell.getOperations().size())
      return reject("the cells differ in structure");
    for (auto [a, b] : llvm::zip(layer.getStateArgs(), ref.getStateArgs()))
      if (a.getType() != b.getType())
        return reject("the layers' states have different types");
  }
  // The batched input is [x_t; previous outputs], so the input slice of the
  // reference is an output of the cell.
  if (plan.inputArg(numLayers - 1).getType() !=
      ref.getYield().getOutputs().front().getType())
    return reject("a layer's input slice and output differ in type");
  for (unsigned l = 1; l + 1 < numLayers; ++l)
    if (plan.inputArg(l).getType() != plan.inputArg(numLayers - 1).getType())
      return reject("the layers' inputs differ in type");
  plan.separateInput =
      plan.inputArg(0).getType() != plan.inputArg(numLayers - 1).getType();
  if (plan.separateInput) {
    for (unsigned l = 0; l < numLayers; ++l)
      for (OpOperand &use : plan.inputArg(l).getUses()) {
        auto gate = dyn_cast<GateOp>(use.getOwner());
        unsigned begin = gate ? gate.getODSOperandIndexAndLength(0).first : 0;
        if (!gate || use.getOperandNumber() < begin ||
            use.getOperandNumber() >= begin + gate.getInputs().size())
          return reject("layer 0's input size differs and an input slice is "
                        "used by something else than a gate product");
      }
    CellDependence deps(ref);
    for (const GateProduct &product : deps.getProducts())
      if (product.getOperand() == plan.inputArg(numLayers - 1))
        plan.inputProducts.push_back(product);
  }

  // Op positions in each cell, to match operands defined in the cell.
  SmallVector<DenseMap<Operation *, unsigned>> positions(numLayers);
  SmallVector<SmallVector<Operation *>> ops(numLayers);
  for (unsigned l = 0; l < numLayers; ++l)
    for (Operation &op : plan.cell(l)) {
      positions[l][&op] = ops[l].size();
      ops[l].push_back(&op);
    }

  for (auto [i, refOp] : llvm::enumerate(ops[numLayers - 1])) {
    if (!refOp->hasTrait<OpTrait::IsTerminator>() && !isBatchable(refOp))
      return reject("the cell has an op that cannot be batched: " +
                    refOp->getName().getStringRef());
    for (unsigned l = 0; l < numLayers; ++l) {
      Operation *op = ops[l][i];
      if (op->getName() != refOp->getName() ||
          op->getRawDictionaryAttrs() != refOp->getRawDictionaryAttrs() ||
          !op->getName().compareOpProperties(op->getPropertiesStorage(),
                                             refOp->getPropertiesStorage()) ||
          op->getNumOperands() != refOp->getNumOperands() ||
          op->getResultTypes() != refOp->getResultTypes())
        return reject("the cells differ in structure");
      for (unsigned j = 0, e = refOp->getNumOperands(); j < e; ++j) {
        Value rv = refOp->getOperand(j), lv = op->getOperand(j);
        if (auto arg = dyn_cast<BlockArgument>(rv);
            arg && arg.getOwner() == &refCell) {
          auto larg = dyn_cast<BlockArgument>(lv);
          if (!larg || larg.getOwner() != &plan.cell(l) ||
              larg.getArgNumber() != arg.getArgNumber())
            return reject("the cells differ in structure");
          continue;
        }
        if (Operation *def = rv.getDefiningOp();
            def && def->getBlock() == &refCell) {
          Operation *ldef = lv.getDefiningOp();
          if (!ldef || ldef->getBlock() != &plan.cell(l) ||
              positions[l].lookup(ldef) != positions[numLayers - 1][def] ||
              cast<OpResult>(lv).getResultNumber() !=
                  cast<OpResult>(rv).getResultNumber())
            return reject("the cells differ in structure");
          continue;
        }
        // Captured from above.
        if (plan.cell(l).getParent()->isAncestor(lv.getParentRegion()))
          return reject("the cells differ in structure");
        bool inputWeight =
            plan.separateInput && l == 0 &&
            isInputWeight(refOp, j, plan.inputArg(numLayers - 1));
        if (lv.getType() != rv.getType() && !inputWeight)
          return reject("a captured value differs in type between layers");
        if (!isa<RankedTensorType>(rv.getType())) {
          if (lv != rv)
            return reject("a captured value that is not a tensor differs "
                          "between layers");
          continue;
        }
        plan.captured[{static_cast<unsigned>(i), j}].push_back(lv);
      }
    }
  }

  // The loop replaces the finals where the last layer was: they must not be
  // used before it.
  Operation *last = ref;
  for (LayerOp layer : layers)
    for (Value final : layer.getFinals())
      for (Operation *user : final.getUsers()) {
        Operation *ancestor = last->getBlock()->findAncestorOpInBlock(*user);
        if (!ancestor || !last->isBeforeInBlock(ancestor))
          return reject("a layer's final state is used before the last layer");
      }
  return plan;
}

/// `[n, ...]` from n values of one type: value i becomes row i. The rows
/// take the first value's extents: where they are dynamic, the others are
/// checked against them at run time (`what` names the values).
static Value stackValues(OpBuilder &b, Location loc, ValueRange values,
                         const Twine &what) {
  auto type = cast<RankedTensorType>(values.front().getType());
  for (auto [l, v] : llvm::enumerate(values))
    for (int64_t d = 0, e = type.getRank(); d < e; ++d)
      lstm::assertSameExtent(b, loc, v, d, values.front(), d,
                             "lstm-wavefront: " + what + " of layer #" +
                                 Twine(l) +
                                 " differs from layer #0's in "
                                 "dimension " +
                                 Twine(d));
  auto stackedType = prependExtent(type, values.size());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, values[0]);
  SmallVector<Value> dynamic;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(d))
      dynamic.push_back(cast<Value>(size));
  Value acc = tensor::EmptyOp::create(b, loc, stackedType.getShape(),
                                      type.getElementType(), dynamic);
  sizes.insert(sizes.begin(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  for (auto [i, v] : llvm::enumerate(values)) {
    SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
    offsets[0] = b.getIndexAttr(i);
    acc =
        tensor::InsertSliceOp::create(b, loc, v, acc, offsets, sizes, strides);
  }
  return acc;
}

/// Rows [begin, begin + count) of a `[L, ...]` tensor, of type `type`
/// (rank-reduced when `type` has no leading extent).
static Value takeRows(OpBuilder &b, Location loc, Value source, int64_t begin,
                      int64_t count, RankedTensorType type) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, source);
  sizes[0] = b.getIndexAttr(count);
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  offsets[0] = b.getIndexAttr(begin);
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, type, source, offsets, sizes,
                                        strides);
}

/// `[head; tail]` along the leading extent: `head` is one row (without the
/// leading extent), `tail` is `[n, ...]`.
static Value prependRow(OpBuilder &b, Location loc, Value head, Value tail) {
  auto tailType = cast<RankedTensorType>(tail.getType());
  int64_t n = tailType.getDimSize(0);
  auto type = RankedTensorType::get(
      [&] {
        SmallVector<int64_t> shape(tailType.getShape());
        shape[0] = n + 1;
        return shape;
      }(),
      tailType.getElementType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, tail);
  SmallVector<Value> dynamic;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(d))
      dynamic.push_back(cast<Value>(size));
  Value acc = tensor::EmptyOp::create(b, loc, type.getShape(),
                                      type.getElementType(), dynamic);
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> headSizes(sizes);
  headSizes[0] = b.getIndexAttr(1);
  acc = tensor::InsertSliceOp::create(b, loc, head, acc, offsets, headSizes,
                                      strides);
  offsets[0] = b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(b, loc, tail, acc, offsets, sizes,
                                       strides);
}

/// Keeps the state of the layers that are inactive at diagonal `d`:
/// `result[l] = 0 <= d - l < T ? next[l] : previous[l]`. Only the first and
/// last L - 1 diagonals have inactive layers: on the others (all of them but
/// 2(L-1)), `next` is the result as it is, without a kernel to copy it.
static Value keepInactive(OpBuilder &b, Location loc, Value d, Value seqLen,
                          int64_t numLayers, Value next, Value previous) {
  auto type = cast<RankedTensorType>(next.getType());
  Value allStarted = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sge, d,
      arith::ConstantIndexOp::create(b, loc, numLayers - 1));
  Value noneDone =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, d, seqLen);
  Value allActive = arith::AndIOp::create(b, loc, allStarted, noneDone);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, allActive,
                                /*withElseRegion=*/true);
  OpBuilder thenBuilder = OpBuilder::atBlockEnd(ifOp.thenBlock());
  scf::YieldOp::create(thenBuilder, loc, next);

  OpBuilder eb = OpBuilder::atBlockEnd(ifOp.elseBlock());
  int64_t rank = type.getRank();
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < rank; ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(tensor::DimOp::create(eb, loc, next, i));
  Value out = tensor::EmptyOp::create(eb, loc, type.getShape(),
                                      type.getElementType(), dynamic);
  AffineMap id = eb.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value kept =
      linalg::GenericOp::create(
          eb, loc, type, ValueRange{next, previous}, ValueRange{out},
          ArrayRef<AffineMap>{id, id, id}, iters,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value layer = linalg::IndexOp::create(nb, l, 0);
            Value step = arith::SubIOp::create(nb, l, d, layer);
            Value zero = arith::ConstantIndexOp::create(nb, l, 0);
            Value started = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::sge, step, zero);
            Value notDone = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::slt, step, seqLen);
            Value active = arith::AndIOp::create(nb, l, started, notDone);
            linalg::YieldOp::create(
                nb, l,
                arith::SelectOp::create(nb, l, active, args[0], args[1])
                    .getResult());
          })
          .getResult(0);
  scf::YieldOp::create(eb, loc, kept);
  return ifOp.getResult(0);
}

/// Step `t` of a sequence `[T, B, N]`, as `type` (`[B, N]`).
static Value extractStep(OpBuilder &b, Location loc, Value seq, Value t,
                         RankedTensorType type) {
  SmallVector<OpFoldResult> offsets = {t, b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     tensor::getMixedSize(b, loc, seq, 1),
                                     tensor::getMixedSize(b, loc, seq, 2)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, type, seq, offsets, sizes,
                                        strides);
}

/// `seq · wᵀ` for every step at once: `[T, B, K]` against `w` `[N, K]`,
/// as one product over the T·B rows, `[T, B, N]`.
static Value projectSequence(OpBuilder &b, Location loc, Value seq, Value w) {
  auto seqType = cast<RankedTensorType>(seq.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  Type elementType = seqType.getElementType();
  SmallVector<ReassociationIndices> rows = {{0, 1}, {2}};
  Value flat = tensor::CollapseShapeOp::create(b, loc, seq, rows);
  auto flatType = cast<RankedTensorType>(flat.getType());
  auto projType = RankedTensorType::get(
      {flatType.getDimSize(0), wType.getDimSize(0)}, elementType);
  Value proj = GateOp::create(b, loc, projType, Activation::identity,
                              ValueRange{flat}, ValueRange{w}, ValueRange{},
                              ValueRange{}, Value(), Value());
  auto seqProjType = RankedTensorType::get(
      {seqType.getDimSize(0), seqType.getDimSize(1), wType.getDimSize(0)},
      elementType);
  SmallVector<OpFoldResult> shape = {tensor::getMixedSize(b, loc, seq, 0),
                                     tensor::getMixedSize(b, loc, seq, 1),
                                     tensor::getMixedSize(b, loc, proj, 1)};
  return tensor::ExpandShapeOp::create(b, loc, seqProjType, proj, rows, shape);
}

/// Rewrites a planned chain into the diagonal loop.
static void rewriteChain(const WavefrontPlan &plan) {
  SmallVector<LayerOp> layers(plan.layers);
  int64_t numLayers = layers.size();
  LayerOp ref = plan.reference();
  Block &refCell = ref.getBody().front();
  YieldOp refYield = ref.getYield();
  bool reverse = ref.isReverse();
  SmallVector<Location> locs;
  for (LayerOp layer : layers)
    locs.push_back(layer.getLoc());
  MLIRContext *ctx = ref.getContext();
  Location loc = FusedLoc::get(ctx, locs);

  // Everything the chain reads is defined before its last layer.
  OpBuilder b(ref);
  Value x = layers.front().getInputs().front();
  Value seqLen = tensor::DimOp::create(b, loc, x, 0);
  Value batch = tensor::DimOp::create(b, loc, x, 1);
  Value c0 = arith::ConstantIndexOp::create(b, loc, 0);
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  Value lastStep = arith::SubIOp::create(b, loc, seqLen, c1);

  // Captured tensors stacked once per call; equal lists share one stack.
  // Layer 0's input weights are used on their own (separateInput).
  SmallVector<std::pair<SmallVector<Value>, Value>> stacks;
  auto stackOnce = [&](ArrayRef<Value> values) {
    for (auto &[key, stacked] : stacks)
      if (ArrayRef<Value>(key) == values)
        return stacked;
    Value stacked = stackValues(b, loc, values, "a value the cell captures");
    stacks.push_back({SmallVector<Value>(values), stacked});
    return stacked;
  };
  DenseMap<Slot, Value> stackedSlots;
  Value refInput = plan.inputArg(numLayers - 1);
  SmallVector<Operation *> refOps;
  for (Operation &op : refCell)
    refOps.push_back(&op);
  for (const auto &[slot, values] : plan.captured) {
    bool inputWeight = plan.separateInput &&
                       isInputWeight(refOps[slot.first], slot.second, refInput);
    stackedSlots[slot] =
        stackOnce(ArrayRef<Value>(values).drop_front(inputWeight ? 1 : 0));
  }

  // Layer 0's products on x (another input size) do not depend on the
  // recurrence: one product over all T·B rows before the loop, as
  // lstm-hoist-input-projection makes for a single layer, of which each
  // diagonal takes its step, instead of a small product per diagonal.
  DenseMap<Slot, Value> inputProjections;
  if (plan.separateInput) {
    for (auto [position, refOp] : llvm::enumerate(refOps)) {
      auto gate = dyn_cast<GateOp>(refOp);
      if (!gate)
        continue;
      unsigned wBegin = gate.getODSOperandIndexAndLength(1).first;
      for (unsigned k = 0, e = gate.getInputs().size(); k < e; ++k) {
        if (gate.getInputs()[k] != refInput)
          continue;
        Slot slot = {static_cast<unsigned>(position), wBegin + k};
        inputProjections[slot] = projectSequence(
            b, gate.getLoc(), x, plan.captured.lookup(slot).front());
      }
    }
  }

  // Loop-carried: the stacked states, the previous diagonal's outputs and
  // the last layer's output sequence.
  // Each layer's lowering would have checked that its initial states have
  // the batch size of its input; the stacked loop checks it for them.
  SmallVector<Value> iterInits;
  for (unsigned k = 0, e = ref.getInits().size(); k < e; ++k) {
    SmallVector<Value> inits;
    for (LayerOp layer : layers) {
      inits.push_back(layer.getInits()[k]);
      lstm::assertSameExtent(b, layer.getLoc(), inits.back(), 0, x, 1,
                             "lstm.layer: initial state #" + Twine(k) +
                                 " has a different batch size than the "
                                 "input");
    }
    iterInits.push_back(
        stackValues(b, loc, inits, "initial state #" + Twine(k)));
  }
  auto outType = cast<RankedTensorType>(refYield.getOutputs()[0].getType());
  auto outsType = prependExtent(outType, numLayers);
  {
    SmallVector<Value> dynamic;
    if (outsType.isDynamicDim(1))
      dynamic.push_back(batch);
    if (outsType.isDynamicDim(2))
      dynamic.push_back(tensor::DimOp::create(b, loc, x, 2));
    Value empty = tensor::EmptyOp::create(b, loc, outsType.getShape(),
                                          outsType.getElementType(), dynamic);
    Value zero = arith::ConstantOp::create(
        b, loc, b.getZeroAttr(outsType.getElementType()));
    iterInits.push_back(
        linalg::FillOp::create(b, loc, zero, empty).getResult(0));
  }
  auto seqType = cast<RankedTensorType>(ref.getOutputs()[0].getType());
  {
    SmallVector<Value> dynamic;
    if (seqType.isDynamicDim(0))
      dynamic.push_back(seqLen);
    if (seqType.isDynamicDim(1))
      dynamic.push_back(batch);
    iterInits.push_back(tensor::EmptyOp::create(
        b, loc, seqType.getShape(), seqType.getElementType(), dynamic));
  }

  // L + T - 1 diagonals, none when T = 0 (layer 0 would read x[-1]).
  Value numDiagonals = arith::AddIOp::create(
      b, loc, seqLen, arith::ConstantIndexOp::create(b, loc, numLayers - 1));
  Value empty =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, seqLen, c0);
  Value upper = arith::SelectOp::create(b, loc, empty, c0, numDiagonals);
  unsigned numStates = ref.getInits().size();

  auto loop = scf::ForOp::create(
      b, loc, c0, upper, c1, iterInits,
      [&](OpBuilder &nb, Location l, Value d, ValueRange iterArgs) {
        ValueRange states = iterArgs.take_front(numStates);
        Value prevOuts = iterArgs[numStates];
        Value outSeq = iterArgs[numStates + 1];
        // Layer 0 runs step min(d, T-1): past the end it is inactive and
        // only needs an in-bounds slice.
        Value step0 = arith::MinSIOp::create(nb, l, d, lastStep);
        Value time0 =
            reverse ? arith::SubIOp::create(nb, l, lastStep, step0).getResult()
                    : step0;
        // Layers 1 .. L-1 read the previous diagonal's outputs of 0 .. L-2.
        Value prevBelow = takeRows(nb, l, prevOuts, 0, numLayers - 1,
                                   prependExtent(outType, numLayers - 1));

        IRMapping map;
        // Layer 0 reads x_t (with another input size, only through the
        // projections made before the loop).
        if (!plan.separateInput) {
          Value x0 =
              extractStep(nb, l, x, time0,
                          cast<RankedTensorType>(plan.inputArg(0).getType()));
          map.map(refInput, prependRow(nb, l, x0, prevBelow));
        }
        for (auto [arg, state] : llvm::zip(ref.getStateArgs(), states))
          map.map(arg, state);

        auto operandOf = [&](Operation *refOp, unsigned position,
                             unsigned j) -> Value {
          Value v = refOp->getOperand(j);
          if (Value stacked = stackedSlots.lookup({position, j}))
            return stacked;
          return map.lookupOrDefault(v);
        };

        for (auto [position, refOp] : llvm::enumerate(refOps)) {
          if (refOp->hasTrait<OpTrait::IsTerminator>())
            break;
          Location opLoc = refOp->getLoc();
          Operation *batched = nullptr;
          if (auto gate = dyn_cast<GateOp>(refOp)) {
            SmallVector<Value> inputs, weights, addends, biases;
            unsigned inBegin = gate.getODSOperandIndexAndLength(0).first;
            unsigned wBegin = gate.getODSOperandIndexAndLength(1).first;
            auto resultType = cast<RankedTensorType>(gate.getType());
            for (unsigned k = 0, e = gate.getInputs().size(); k < e; ++k) {
              Value weight = operandOf(refOp, position, wBegin + k);
              if (!plan.separateInput || gate.getInputs()[k] != refInput) {
                inputs.push_back(operandOf(refOp, position, inBegin + k));
                weights.push_back(weight);
                continue;
              }
              // Layer 0's product on x_t: its step of the projection made
              // before the loop; layers 1 .. L-1's as one batched product;
              // stacked as an addend.
              Value head = extractStep(
                  nb, opLoc,
                  inputProjections.lookup(
                      {static_cast<unsigned>(position), wBegin + k}),
                  time0, resultType);
              Value tail = GateOp::create(
                  nb, opLoc, prependExtent(resultType, numLayers - 1),
                  Activation::identity, ValueRange{prevBelow},
                  ValueRange{weight}, ValueRange{}, ValueRange{}, Value(),
                  Value());
              addends.push_back(prependRow(nb, opLoc, head, tail));
            }
            unsigned aBegin = gate.getODSOperandIndexAndLength(2).first;
            for (unsigned a = 0, e = gate.getAddends().size(); a < e; ++a)
              addends.push_back(operandOf(refOp, position, aBegin + a));
            unsigned bBegin = gate.getODSOperandIndexAndLength(3).first;
            for (unsigned j = 0, e = gate.getBiases().size(); j < e; ++j)
              biases.push_back(operandOf(refOp, position, bBegin + j));
            Value peephole, peepholeState;
            if (gate.getPeephole()) {
              unsigned pBegin = gate.getODSOperandIndexAndLength(4).first;
              peephole = operandOf(refOp, position, pBegin);
              peepholeState = operandOf(refOp, position, pBegin + 1);
            }
            // A gate that only passed the input products on (the
            // combined GEMM of lstm-combine-gate-gemms) is the stack itself.
            if (inputs.empty() && addends.size() == 1 && biases.empty() &&
                !peephole && gate.getAddends().empty() &&
                gate.getActivation() == Activation::identity) {
              map.map(gate.getResult(), addends.front());
              continue;
            }
            batched =
                GateOp::create(nb, opLoc, prependExtent(resultType, numLayers),
                               gate.getActivation(), inputs, weights, addends,
                               biases, peephole, peepholeState);
          } else if (auto slice = dyn_cast<tensor::ExtractSliceOp>(refOp)) {
            auto prepend = [&](SmallVector<OpFoldResult> values,
                               OpFoldResult first) {
              for (OpFoldResult &v : values)
                if (auto value = dyn_cast<Value>(v))
                  v = map.lookupOrDefault(value);
              values.insert(values.begin(), first);
              return values;
            };
            batched = tensor::ExtractSliceOp::create(
                nb, opLoc, prependExtent(slice.getType(), numLayers),
                operandOf(refOp, position, 0),
                prepend(slice.getMixedOffsets(), nb.getIndexAttr(0)),
                prepend(slice.getMixedSizes(), nb.getIndexAttr(numLayers)),
                prepend(slice.getMixedStrides(), nb.getIndexAttr(1)));
          } else if (auto dim = dyn_cast<tensor::DimOp>(refOp)) {
            APInt index;
            (void)matchPattern(dim.getIndex(), m_ConstantInt(&index));
            Value shifted = arith::ConstantIndexOp::create(
                nb, opLoc, index.getSExtValue() + 1);
            batched = tensor::DimOp::create(
                nb, opLoc, operandOf(refOp, position, 0), shifted);
          } else {
            // Elementwise ops on batched operands, or ops without tensors.
            batched = nb.clone(*refOp, map);
            for (unsigned j = 0, e = refOp->getNumOperands(); j < e; ++j)
              batched->setOperand(j, operandOf(refOp, position, j));
            for (OpResult result : batched->getResults())
              if (isa<RankedTensorType>(result.getType()))
                result.setType(prependExtent(result.getType(), numLayers));
          }
          map.map(refOp->getResults(), batched->getResults());
        }

        unsigned yieldPos = refOps.size() - 1;
        unsigned stateBegin = refYield.getODSOperandIndexAndLength(1).first;
        SmallVector<Value> next;
        for (unsigned k = 0; k < numStates; ++k)
          next.push_back(keepInactive(
              nb, l, d, seqLen, numLayers,
              operandOf(refYield, yieldPos, stateBegin + k), states[k]));
        unsigned outBegin = refYield.getODSOperandIndexAndLength(0).first;
        Value outs = operandOf(refYield, yieldPos, outBegin);
        next.push_back(outs);
        // The last layer runs step d - (L-1). Before it starts, its output
        // goes to its first step's row, which step 0 then overwrites.
        Value stepLast = arith::MaxSIOp::create(
            nb, l,
            arith::SubIOp::create(
                nb, l, d, arith::ConstantIndexOp::create(nb, l, numLayers - 1)),
            c0);
        Value timeLast =
            reverse
                ? arith::SubIOp::create(nb, l, lastStep, stepLast).getResult()
                : stepLast;
        Value lastOut = takeRows(nb, l, outs, numLayers - 1, 1, outType);
        SmallVector<OpFoldResult> offsets = {timeLast, nb.getIndexAttr(0),
                                             nb.getIndexAttr(0)};
        SmallVector<OpFoldResult> sizes = {
            nb.getIndexAttr(1), tensor::getMixedSize(nb, l, lastOut, 0),
            tensor::getMixedSize(nb, l, lastOut, 1)};
        SmallVector<OpFoldResult> strides(3, nb.getIndexAttr(1));
        next.push_back(tensor::InsertSliceOp::create(nb, l, lastOut, outSeq,
                                                     offsets, sizes, strides));
        scf::YieldOp::create(nb, l, next);
      });
  // Tells the schedule report (and readers) what the loop is.
  loop->setAttr(kWavefrontLayersAttr, b.getI64IntegerAttr(numLayers));
  loop->setAttr(kWavefrontDirectionAttr,
                b.getStringAttr(stringifyDirection(ref.getDirection())));

  // The last layer's outputs are the loop's sequence; each layer's finals
  // are its rows of the stacked states.
  b.setInsertionPointAfter(loop);
  ref.getOutputs()[0].replaceAllUsesWith(loop.getResults()[numStates + 1]);
  for (auto [l, layer] : llvm::enumerate(layers))
    for (auto [k, final] : llvm::enumerate(layer.getFinals()))
      final.replaceAllUsesWith(
          takeRows(b, loc, loop.getResults()[k], l, 1,
                   cast<RankedTensorType>(final.getType())));
  for (LayerOp layer : llvm::reverse(layers))
    layer.erase();
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

namespace {
struct LSTMWavefrontPass
    : lstm::impl::LSTMWavefrontPassBase<LSTMWavefrontPass> {
  void runOnOperation() override {
    // Layers that statically run no step (T or B of 0) are what they
    // compute before anything else looks at them (EmptyLayers.h).
    replaceEmptyLayers(getOperation());
    SmallVector<LayerOp> all;
    getOperation()->walk([&](LayerOp layer) { all.push_back(layer); });
    // Chains start at layers that do not continue another chain.
    llvm::SmallPtrSet<Operation *, 8> continuing;
    for (LayerOp layer : all)
      if (LayerOp next = nextInChain(layer))
        continuing.insert(next);
    SmallVector<WavefrontPlan> plans;
    for (LayerOp layer : all) {
      if (continuing.contains(layer))
        continue;
      SmallVector<LayerOp> chain = {layer};
      while (LayerOp next = nextInChain(chain.back()))
        chain.push_back(next);
      if (chain.size() < 2)
        continue;
      if (FailureOr<WavefrontPlan> plan = planChain(chain); succeeded(plan))
        plans.push_back(std::move(*plan));
    }
    for (const WavefrontPlan &plan : plans)
      rewriteChain(plan);
  }
};
} // namespace
