//===- ElideCopies.cpp - Buffers written where they are copied
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//-------------===//
//
// One-shot bufferization gives each op's result a buffer and copies it where
// a tensor.insert_slice puts it, unless the destination was known before
// the op (eliminate-empty-tensors). The backward step of a combined cell
// assembles its gates' dz with a chain of inserts, which defeats that: its
// fused kernel writes G temporaries that G copy kernels then move into the
// GEMM operand. Here, on buffers, the data flow is plain: the producer can
// write the destination itself whenever no op in between looks at it.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ElideCopies/ElideCopies.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_ELIDECOPIESPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

/// The buffer that `v` is a view of (through subviews, casts, reshapes).
static Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// `ofr` as `base + constant` (a null base for a constant), looking through
/// additions and subtractions of constants.
static std::pair<Value, int64_t> splitConstantOffset(OpFoldResult ofr) {
  if (std::optional<int64_t> c = getConstantIntValue(ofr))
    return {Value(), *c};
  Value v = cast<Value>(ofr);
  int64_t offset = 0;
  while (Operation *def = v.getDefiningOp()) {
    std::optional<int64_t> rhs;
    if (isa<arith::AddIOp, arith::SubIOp>(def))
      rhs = getConstantIntValue(def->getOperand(1));
    std::optional<int64_t> lhs;
    if (isa<arith::AddIOp>(def))
      lhs = getConstantIntValue(def->getOperand(0));
    if (rhs) {
      offset += isa<arith::SubIOp>(def) ? -*rhs : *rhs;
      v = def->getOperand(0);
    } else if (lhs) {
      offset += *lhs;
      v = def->getOperand(1);
    } else {
      break;
    }
  }
  return {v, offset};
}

/// Whether `a` and `b` are one value, or computed alike by pure ops from one
/// set of values (a view and its copy that materializeBefore made earlier).
static bool equivalent(Value a, Value b, int depth = 0) {
  if (a == b)
    return true;
  Operation *defA = a.getDefiningOp(), *defB = b.getDefiningOp();
  if (!defA || !defB || depth > 6 || !isMemoryEffectFree(defA) ||
      defA->getNumRegions() != 0 ||
      cast<OpResult>(a).getResultNumber() !=
          cast<OpResult>(b).getResultNumber())
    return false;
  return OperationEquivalence::isEquivalentTo(
      defA, defB,
      [&](Value x, Value y) { return success(equivalent(x, y, depth + 1)); },
      /*markEquivalent=*/nullptr, OperationEquivalence::IgnoreLocations);
}

/// Whether `a` and `b` are subviews of one buffer that no element shares:
/// in some dimension their ranges do not overlap (constant sizes, offsets
/// that differ by a constant: rows t and t + 1 of a sequence).
static bool disjointViews(Value a, Value b) {
  auto sa = a.getDefiningOp<memref::SubViewOp>();
  auto sb = b.getDefiningOp<memref::SubViewOp>();
  if (!sa || !sb || !equivalent(sa.getSource(), sb.getSource()))
    return false;
  auto unit = [](OpFoldResult s) { return isConstantIntValue(s, 1); };
  if (!llvm::all_of(sa.getMixedStrides(), unit) ||
      !llvm::all_of(sb.getMixedStrides(), unit))
    return false;
  for (auto [ao, as, bo, bs] :
       llvm::zip(sa.getMixedOffsets(), sa.getMixedSizes(), sb.getMixedOffsets(),
                 sb.getMixedSizes())) {
    std::optional<int64_t> an = getConstantIntValue(as),
                           bn = getConstantIntValue(bs);
    auto [aBase, a0] = splitConstantOffset(ao);
    auto [bBase, b0] = splitConstantOffset(bo);
    if (an && bn &&
        (aBase == bBase || (aBase && bBase && equivalent(aBase, bBase))) &&
        (a0 + *an <= b0 || b0 + *bn <= a0))
      return true;
  }
  return false;
}

/// The ops other than views that use `alloc` or a view of it.
static SmallVector<OpOperand *> nonViewUses(Value alloc) {
  SmallVector<OpOperand *> uses;
  SmallVector<Value> worklist = {alloc};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      auto view = dyn_cast<ViewLikeOpInterface>(use.getOwner());
      if (view && view.getViewSource() == v)
        llvm::append_range(worklist, use.getOwner()->getResults());
      else
        uses.push_back(&use);
    }
  }
  return uses;
}

/// Whether `op` (between the producer and the copy) may touch `dest`, a view
/// of `destRoot`: copies into disjoint views of it, and ops that use only
/// disjoint views of it, are fine.
static bool interferes(Operation *op, Value dest, Value destRoot) {
  // A copy into a disjoint view of it may also read one (a part of the
  // buffer copied onto itself, which the canonicalizer drops later).
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    if (rootOf(copy.getTarget()) == destRoot)
      return (rootOf(copy.getSource()) == destRoot &&
              !disjointViews(copy.getSource(), dest)) ||
             !disjointViews(copy.getTarget(), dest);
  if (isMemoryEffectFree(op))
    return false;
  // Views of the destination's buffer that no element of `dest` is in are
  // fine (a step reading row t of a stack while row t + 1 is the
  // destination).
  bool touches = false;
  op->walk([&](Operation *nested) {
    for (Value v : nested->getOperands())
      touches |= rootOf(v) == destRoot && !disjointViews(v, dest);
  });
  return touches;
}

/// Makes `dest` (a value or a chain of views) available before `point`:
/// itself when it dominates it, else a copy of the pure ops it is computed
/// by (views, and the extents and index arithmetic they take). Null when
/// those do not start from values that dominate `point`.
static Value materializeBefore(OpBuilder &b, DominanceInfo &dominance,
                               Value dest, Operation *point) {
  if (dominance.properlyDominates(dest, point))
    return dest;
  Operation *def = dest.getDefiningOp();
  if (!def || def->getNumRegions() != 0 || !isMemoryEffectFree(def))
    return Value();
  IRMapping map;
  for (Value operand : def->getOperands()) {
    Value available = materializeBefore(b, dominance, operand, point);
    if (!available)
      return Value();
    map.map(operand, available);
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(point);
  return b.clone(*def, map)->getResult(cast<OpResult>(dest).getResultNumber());
}

/// Elides `copy` when its source is a temporary that one linalg op fills
/// (a view of a buffer nothing else uses): the op writes the destination
/// instead.
static bool elidePart(OpBuilder &b, DominanceInfo &dominance,
                      memref::CopyOp copy) {
  Value source = copy.getSource(), dest = copy.getTarget();
  auto alloc = rootOf(source).getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return false;
  // The temporary's only users: the producer (as an output) and the copy.
  linalg::LinalgOp producer;
  OpOperand *init = nullptr;
  for (OpOperand *use : nonViewUses(alloc.getResult())) {
    if (use->getOwner() == copy && use->get() == source)
      continue;
    auto op = dyn_cast<linalg::LinalgOp>(use->getOwner());
    if (producer || !op || use->get() != source || !op.isDpsInit(use))
      return false;
    producer = op;
    init = use;
  }
  if (!producer || producer->getBlock() != copy->getBlock() ||
      !producer->isBeforeInBlock(copy) ||
      producer.payloadUsesValueFromOperand(init))
    return false;

  // Writing `dest` at the producer instead of at the copy must change nothing
  // anyone reads: the producer reads none of it, and nothing in between
  // touches it.
  Value destRoot = rootOf(dest);
  for (OpOperand *input : producer.getDpsInputOperands())
    if (rootOf(input->get()) == destRoot)
      return false;
  for (OpOperand &other : producer.getDpsInitsMutable())
    if (&other != init && rootOf(other.get()) == destRoot &&
        !disjointViews(other.get(), dest))
      return false;
  for (Operation *op = producer->getNextNode(); op != copy;
       op = op->getNextNode())
    if (interferes(op, dest, destRoot))
      return false;

  Value available = materializeBefore(b, dominance, dest, producer);
  if (!available)
    return false;
  init->set(available);
  copy.erase();
  return true;
}

/// Whether every view of `v` (recursively) is a memref.subview, the views
/// that rebuildViews rebuilds.
static bool viewsAreSubviews(Value v) {
  for (Operation *user : v.getUsers()) {
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (subview && subview.getSource() == v) {
      if (!viewsAreSubviews(subview.getResult()))
        return false;
      continue;
    }
    if (isa<ViewLikeOpInterface>(user))
      return false;
  }
  return true;
}

/// Rebuilds the subviews of `from` on `to`, which has `from`'s shape, and
/// makes their users use them (viewsAreSubviews(from) holds).
static void rebuildViews(OpBuilder &b, Value from, Value to) {
  for (OpOperand &use : llvm::make_early_inc_range(from.getUses())) {
    Operation *user = use.getOwner();
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (subview && subview.getSource() == from) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(subview);
      // The new source has another layout: the view's type is inferred.
      auto type =
          cast<MemRefType>(memref::SubViewOp::inferRankReducedResultType(
              subview.getType().getShape(), cast<MemRefType>(to.getType()),
              subview.getMixedOffsets(), subview.getMixedSizes(),
              subview.getMixedStrides()));
      Value view = memref::SubViewOp::create(
          b, subview.getLoc(), type, to, subview.getMixedOffsets(),
          subview.getMixedSizes(), subview.getMixedStrides());
      rebuildViews(b, subview.getResult(), view);
      subview.erase();
      continue;
    }
    use.set(to);
  }
}

/// Elides `copy` when its source is a whole temporary buffer that ops write
/// and read (through views) around it: the destination takes its place.
static bool elideTemporary(OpBuilder &b, DominanceInfo &dominance,
                           memref::CopyOp copy) {
  auto alloc = copy.getSource().getDefiningOp<memref::AllocOp>();
  Value dest = copy.getTarget();
  if (!alloc || alloc->getBlock() != copy->getBlock() ||
      cast<MemRefType>(dest.getType()).getShape() != alloc.getType().getShape())
    return false;
  // Every use is a linalg op or a copy, in this block or (reading only)
  // nested in an op of it: a product that reads the temporary in either
  // branch of an `scf.if` (which form of the weights a GEMM takes). Their
  // other operands stay clear of the destination.
  Value destRoot = rootOf(dest);
  Block *block = copy->getBlock();
  llvm::SmallPtrSet<Operation *, 8> users;
  SmallVector<Operation *> allUsers;
  Operation *last = copy;
  for (OpOperand *use : nonViewUses(alloc.getResult())) {
    Operation *user = use->getOwner();
    // An extent read from the temporary reads it from the destination just
    // as well (the split products' guards on the batch size).
    if (user == copy || isa<memref::DimOp>(user))
      continue;
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!isa<linalg::LinalgOp, memref::CopyOp>(user) || !inBlock)
      return false;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
    auto reading = dyn_cast<memref::CopyOp>(user);
    bool reads = (linalgOp && linalgOp.isDpsInput(use)) ||
                 (reading && &reading->getOpOperand(0) == use);
    // After the copy the buffer may only be read: a later write (the
    // buffer reused for another value) would land in the destination. A
    // nested use must read: a write under a condition or in a loop is not
    // the one value the copy moves.
    if ((copy->isBeforeInBlock(inBlock) || inBlock != user) && !reads)
      return false;
    if (inBlock == user)
      users.insert(user);
    allUsers.push_back(user);
    if (last->isBeforeInBlock(inBlock))
      last = inBlock;
  }
  for (Operation *user : allUsers)
    for (Value v : user->getOperands())
      if (rootOf(v) == destRoot && !disjointViews(v, dest))
        return false;
  // From the buffer's creation to its last use, only its own users may
  // touch the destination's buffer (in disjoint parts). The ops that hold
  // nested users are checked whole: the users' operands are the temporary
  // or clear of the destination (above), the rest of them must be too.
  for (Operation *op = alloc->getNextNode(); op != last->getNextNode();
       op = op->getNextNode())
    if (op != copy && !users.contains(op) && interferes(op, dest, destRoot))
      return false;

  if (!viewsAreSubviews(alloc.getResult()))
    return false;
  Value available = materializeBefore(b, dominance, dest, alloc);
  if (!available)
    return false;
  rebuildViews(b, alloc.getResult(), available);
  copy.erase();
  alloc.erase();
  return true;
}

namespace {
struct ElideCopiesPass : lstm::impl::ElideCopiesPassBase<ElideCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    DominanceInfo dominance(getOperation());
    OpBuilder b(&getContext());
    llvm::SetVector<memref::AllocOp> freed;
    for (memref::CopyOp copy : copies) {
      auto alloc = rootOf(copy.getSource()).getDefiningOp<memref::AllocOp>();
      if (alloc && copy.getSource() == alloc.getResult())
        (void)elideTemporary(b, dominance, copy);
      else if (alloc && elidePart(b, dominance, copy))
        freed.insert(alloc);
    }
    // The temporaries are unused now (but for their views).
    for (memref::AllocOp alloc : freed) {
      if (!nonViewUses(alloc.getResult()).empty())
        continue;
      llvm::SetVector<Operation *> views;
      SmallVector<Value> worklist = {alloc.getResult()};
      while (!worklist.empty())
        for (Operation *user : worklist.pop_back_val().getUsers())
          if (views.insert(user))
            llvm::append_range(worklist, user->getResults());
      for (Operation *view : llvm::reverse(views))
        view->erase();
      alloc.erase();
    }
  }
};
} // namespace
