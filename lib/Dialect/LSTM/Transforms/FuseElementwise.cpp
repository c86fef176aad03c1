//===- FuseElementwise.cpp - One fused region per group of pointwise work -===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Between its GEMMs, a step of a cell is a chain of small pointwise ops (bias
// adds, activations, the cell update, the output), each of which would be a
// kernel of its own reading and writing [B, H] from memory. The pointwise
// work of each group (PointwiseGroups: the fewest groups that respect the
// GEMMs between them) becomes one `lstm.pointwise` whose region is the
// scalar code of all of it, in block order, so that it lowers to one
// linalg.generic and one GPU kernel.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"
#include "lstm/Dialect/LSTM/Transforms/Transforms.h"

#include "lstm/Dialect/LSTM/Analysis/CellDependence.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMFUSEELEMENTWISEPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

/// The splat value of `v` when it is a constant tensor with one value
/// everywhere: such operands become scalar constants of the region instead
/// of tensors read from memory.
static TypedAttr getSplat(Value v) {
  DenseElementsAttr dense;
  if (!matchPattern(v, m_Constant(&dense)) || !dense.isSplat())
    return {};
  return dense.getSplatValue<TypedAttr>();
}

namespace {

/// Builds the `lstm.pointwise` of one group.
class GroupFuser {
public:
  GroupFuser(RewriterBase &rewriter, ArrayRef<Operation *> members)
      : rewriter(rewriter), members(members) {
    memberSet.insert(members.begin(), members.end());
  }

  /// The fused op, or a null op when the group was dead and erased.
  PointwiseOp run();

private:
  /// The tensor values that the scalar code of `op` reads (for a gate with
  /// products, the GEMM result first).
  SmallVector<Value> readsOf(Operation *op) {
    auto gate = dyn_cast<GateOp>(op);
    if (!gate)
      return SmallVector<Value>(op->getOperands());
    SmallVector<Value> reads;
    if (Value gemm = gemms.lookup(gate))
      reads.push_back(gemm);
    llvm::append_range(reads, PointwiseGroups::getPointwiseOperands(gate));
    return reads;
  }

  /// Splits the products of each member gate off as a GEMM (`gemms`).
  void splitOffGemms();
  /// What the members read from outside the group, splats aside.
  llvm::SetVector<Value> collectInputs();
  /// The member values used outside the group (other ops, the yield).
  SmallVector<Value> collectResults();
  /// Builds the `lstm.pointwise` of `inputs` and `results` where the last
  /// member is and makes the uses outside the group use it.
  PointwiseOp buildFusedOp(ArrayRef<Value> inputs, ArrayRef<Value> results);
  /// Emits the scalar code of `op`, its tensor operands mapped in `map`.
  void emitScalar(OpBuilder &b, Operation *op, IRMapping &map);

  /// Erases the members, users first: within the group, every use follows
  /// its definition.
  void eraseMembers() {
    for (Operation *op : llvm::reverse(members))
      rewriter.eraseOp(op);
  }

  RewriterBase &rewriter;
  ArrayRef<Operation *> members;
  llvm::SmallPtrSet<Operation *, 16> memberSet;
  /// The GEMM split off each member gate that has products.
  llvm::DenseMap<Operation *, Value> gemms;
};

} // namespace

void GroupFuser::emitScalar(OpBuilder &b, Operation *op, IRMapping &map) {
  Location loc = op->getLoc();
  auto scalar = [&](Value v) { return map.lookup(v); };
  if (auto gate = dyn_cast<GateOp>(op)) {
    // The order of the sum is the one of the gate's own lowering: products,
    // addends, biases, then the peephole term.
    SmallVector<Value> terms;
    if (Value gemm = gemms.lookup(gate))
      terms.push_back(scalar(gemm));
    for (Value v : gate.getAddends())
      terms.push_back(scalar(v));
    for (Value v : gate.getBiases())
      terms.push_back(scalar(v));
    // (A gate may have only a peephole term: then there is no sum yet.)
    Value sum;
    for (Value term : terms)
      sum = sum ? arith::AddFOp::create(b, loc, sum, term).getResult() : term;
    if (gate.getPeephole()) {
      Value pc = arith::MulFOp::create(b, loc, scalar(gate.getPeephole()),
                                       scalar(gate.getPeepholeState()));
      sum = sum ? arith::AddFOp::create(b, loc, sum, pc).getResult() : pc;
    }
    map.map(gate.getResult(),
            buildActivation(b, loc, gate.getActivation(), sum));
    return;
  }
  if (auto oneMinus = dyn_cast<OneMinusOp>(op)) {
    Value x = scalar(oneMinus.getInput());
    Value one =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(x.getType(), 1.0));
    map.map(oneMinus.getResult(), arith::SubFOp::create(b, loc, one, x));
    return;
  }
  // An upstream elementwise op: the same op on the elements.
  SmallVector<Value> operands;
  for (Value v : op->getOperands())
    operands.push_back(scalar(v));
  SmallVector<Type> types;
  for (Type t : op->getResultTypes())
    types.push_back(getElementTypeOrSelf(t));
  Operation *clone = b.create(loc, op->getName().getIdentifier(), operands,
                              types, op->getAttrs());
  map.map(op->getResults(), clone->getResults());
}

void GroupFuser::splitOffGemms() {
  // Gates with products keep them as a GEMM (an identity gate with only the
  // products) where the gate was; the epilogue joins the region.
  for (Operation *op : members) {
    auto gate = dyn_cast<GateOp>(op);
    if (!gate || gate.getInputs().empty())
      continue;
    rewriter.setInsertionPoint(gate);
    gemms[gate] = GateOp::create(rewriter, gate.getLoc(), gate.getType(),
                                 Activation::identity, gate.getInputs(),
                                 gate.getWeights(), ValueRange{}, ValueRange{},
                                 Value(), Value())
                      .getResult();
  }
}

llvm::SetVector<Value> GroupFuser::collectInputs() {
  llvm::SetVector<Value> inputs;
  for (Operation *op : members)
    for (Value v : readsOf(op)) {
      Operation *def = v.getDefiningOp();
      if ((def && memberSet.contains(def)) || getSplat(v))
        continue;
      inputs.insert(v);
    }
  return inputs;
}

SmallVector<Value> GroupFuser::collectResults() {
  SmallVector<Value> results;
  for (Operation *op : members)
    for (Value v : op->getResults())
      if (llvm::any_of(v.getUsers(), [&](Operation *user) {
            return !memberSet.contains(user);
          }))
        results.push_back(v);
  return results;
}

PointwiseOp GroupFuser::buildFusedOp(ArrayRef<Value> inputs,
                                     ArrayRef<Value> results) {
  RewriterBase &b = rewriter;
  SmallVector<Location> locs;
  for (Operation *op : members)
    locs.push_back(op->getLoc());
  Location loc = b.getFusedLoc(locs);
  b.setInsertionPoint(members.back());
  SmallVector<Type> resultTypes;
  for (Value v : results)
    resultTypes.push_back(v.getType());
  auto fused = PointwiseOp::create(b, loc, resultTypes, inputs);

  SmallVector<Type> argTypes;
  SmallVector<Location> argLocs;
  for (Value v : inputs) {
    argTypes.push_back(getElementTypeOrSelf(v.getType()));
    argLocs.push_back(v.getLoc());
  }
  Block *body = b.createBlock(&fused.getBody(), {}, argTypes, argLocs);
  IRMapping map;
  map.map(inputs, body->getArguments());
  for (Operation *op : members) {
    for (Value v : readsOf(op))
      if (!map.contains(v))
        if (TypedAttr splat = getSplat(v))
          map.map(v, arith::ConstantOp::create(b, v.getLoc(), splat));
    emitScalar(b, op, map);
  }
  SmallVector<Value> yielded;
  for (Value v : results)
    yielded.push_back(map.lookup(v));
  PointwiseYieldOp::create(b, loc, yielded);

  for (auto [v, replacement] : llvm::zip(results, fused.getResults()))
    rewriter.replaceUsesWithIf(v, replacement, [&](OpOperand &use) {
      return !memberSet.contains(use.getOwner());
    });
  return fused;
}

PointwiseOp GroupFuser::run() {
  splitOffGemms();
  llvm::SetVector<Value> inputs = collectInputs();
  SmallVector<Value> results = collectResults();
  // Work whose results nothing reads is dead (pointwise ops have no side
  // effects): it goes away instead of becoming a region without results.
  if (results.empty()) {
    eraseMembers();
    return PointwiseOp();
  }
  PointwiseOp fused = buildFusedOp(inputs.getArrayRef(), results);
  eraseMembers();
  return fused;
}

/// Whether `op` is a gate with matrix products and work after them (an
/// activation, addends, biases or a peephole): it lowers to a GEMM and an
/// elementwise kernel however it is written.
static bool isGateWithEpilogue(Operation *op) {
  auto gate = dyn_cast<GateOp>(op);
  return gate && !gate.getInputs().empty() &&
         (gate.getActivation() != Activation::identity ||
          !gate.getAddends().empty() || !gate.getBiases().empty() ||
          gate.getPeephole());
}

FailureOr<PointwiseOp>
mlir::lstm::fusePointwiseGroup(RewriterBase &rewriter,
                               ArrayRef<Operation *> group) {
  // A lone op already lowers to one linalg.generic: fusing it would only
  // rename it. Except a gate with products and an epilogue (an Elman RNN's
  // cell): split into its GEMM and a region of the epilogue it lowers to
  // the same kernels, and takes the form lstm-to-persistent runs.
  if (group.size() < 2 && !(group.size() == 1 && isGateWithEpilogue(group[0])))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  return GroupFuser(rewriter, group).run();
}

/// Whether `op`, an op of `cell`, reads nothing that an op of `unscheduled`
/// defines, itself or through the ops nested in its regions.
static bool readsOnlyScheduled(Block &cell, Operation *op,
                               const llvm::DenseSet<Operation *> &unscheduled) {
  WalkResult result = op->walk([&](Operation *nested) {
    for (Value operand : nested->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        continue;
      Operation *defInCell = cell.findAncestorOpInBlock(*def);
      if (defInCell && defInCell != op && unscheduled.contains(defInCell))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Moves the ops of `cell` (its terminator aside) behind the values they
/// read, keeping their order otherwise: each round moves, in block order,
/// the ops whose operands are all defined to the end of the ordered prefix.
/// What sortTopologically does, with every move made through `rewriter`.
/// Fails, leaving the remaining ops unordered, on a cycle.
static LogicalResult orderByDependences(RewriterBase &rewriter, Block &cell) {
  Block::iterator end =
      cell.mightHaveTerminator() ? std::prev(cell.end()) : cell.end();
  llvm::DenseSet<Operation *> unscheduled;
  for (Operation &op : llvm::make_range(cell.begin(), end))
    unscheduled.insert(&op);
  Block::iterator next = cell.begin();
  while (!unscheduled.empty()) {
    bool progress = false;
    for (Operation &op :
         llvm::make_early_inc_range(llvm::make_range(next, end))) {
      if (!readsOnlyScheduled(cell, &op, unscheduled))
        continue;
      unscheduled.erase(&op);
      progress = true;
      if (&op == &*next)
        ++next;
      else
        rewriter.moveOpBefore(&op, &cell, next);
    }
    if (!progress)
      return failure();
  }
  return success();
}

LogicalResult mlir::lstm::fuseElementwise(RewriterBase &rewriter, Block &cell) {
  PointwiseGroups analysis(cell);
  bool changed = false;
  for (ArrayRef<Operation *> group : analysis.getGroups())
    changed |= succeeded(fusePointwiseGroup(rewriter, group));
  if (!changed)
    return success();
  // Each fused op sits where its last member was; moving the other ops of
  // the cell behind the values they read puts GEMMs that read a group after
  // it and GEMMs that feed a group before it. The grouping keeps the cell
  // acyclic, so this cannot fail on a verified cell.
  return orderByDependences(rewriter, cell);
}

namespace {
struct LSTMFuseElementwisePass
    : lstm::impl::LSTMFuseElementwisePassBase<LSTMFuseElementwisePass> {
  void runOnOperation() override {
    // Layers that statically run no step (T or B of 0) are what they
    // compute before anything else looks at them (EmptyLayers.h).
    replaceEmptyLayers(getOperation());
    // The cells: the bodies of layers and of the wavefront loops that
    // lstm-wavefront made of chains of layers (whose batched cell has the
    // same structure on [L, B, N]).
    SmallVector<Block *> cells;
    getOperation()->walk([&](Operation *op) {
      if (auto layer = dyn_cast<LayerOp>(op))
        cells.push_back(&layer.getBody().front());
      else if (auto loop = dyn_cast<scf::ForOp>(op);
               loop && loop->hasAttr(kWavefrontLayersAttr))
        cells.push_back(loop.getBody());
    });
    IRRewriter rewriter(&getContext());
    for (Block *cell : cells) {
      if (failed(fuseElementwise(rewriter, *cell))) {
        cell->getParentOp()->emitError(
            "lstm-fuse-elementwise: the fused cell has a cycle");
        return signalPassFailure();
      }
    }
  }
};
} // namespace
