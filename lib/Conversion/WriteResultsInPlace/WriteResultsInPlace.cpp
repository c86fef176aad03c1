//===- WriteResultsInPlace.cpp - Results computed in the slice they fill --===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A wavefront's diagonal computes each saved activation into a temporary and
// then inserts it into the loop-carried store at the diagonal's slot; after
// bufferization that insert is a copy kernel a diagonal (a fifth of the
// forward's and backward's elementwise time at appleyard's sizes). Upstream's
// eliminate-empty-tensors does not reach these: the cells' results are also
// the loop's new states (yielded, so the slice may not be their buffer) and
// the backward's dG is assembled from pieces, then read by the link product.
//
// Here, at tensor level: the value an insert_slice puts into a slice is
// traced back through the destination operands it was built in to the empty
// tensor it started from, and that tensor becomes the destination's slice.
// Where the value escapes (a yield would force bufferization to copy it out
// of the slice), a linalg.generic producing it gets a second output instead,
// computed by the same body into the slice.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/WriteResultsInPlace/WriteResultsInPlace.h"

#include "lstm/Conversion/Utils/GenericOutputs.h"
#include "lstm/Conversion/Utils/UndefinedRoots.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_WRITERESULTSINPLACEPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Whether every use of `v` other than `except` only reads it where it is:
/// extents, linalg inputs, copies' sources and views with such uses. A
/// yield or a write would make bufferization copy the slice's contents.
bool onlyReadInPlace(Value v, Operation *except) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (user == except || isa<tensor::DimOp>(user))
      continue;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
        linalgOp && linalgOp.isDpsInput(&use))
      continue;
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(user);
        insert && &insert.getSourceMutable() == &use)
      continue;
    if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
            tensor::CollapseShapeOp>(user) &&
        llvm::all_of(user->getResults(),
                     [](Value r) { return onlyReadInPlace(r, nullptr); }))
      continue;
    return false;
  }
  return true;
}

/// Whether `user` is a view whose every use, and its views' uses, only
/// reads it and comes before `point` in `point`'s block.
bool readsBefore(Operation *user, Operation *point) {
  if (!isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
           tensor::CollapseShapeOp>(user) ||
      !onlyReadInPlace(user->getResult(0), nullptr))
    return false;
  Block *block = point->getBlock();
  for (Operation *reader : user->getResult(0).getUsers()) {
    if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
            tensor::CollapseShapeOp>(reader)) {
      if (!readsBefore(reader, point))
        return false;
      continue;
    }
    Operation *inBlock = block->findAncestorOpInBlock(*reader);
    if (!inBlock || !inBlock->isBeforeInBlock(point))
      return false;
  }
  return true;
}

/// `v`, or a clone of the pure ops it is computed by, available before
/// `point`; null if that takes more than a few ops or something that does
/// not dominate `point`.
Value availableBefore(OpBuilder &b, DominanceInfo &dominance, Value v,
                      Operation *point, int depth = 0) {
  if (dominance.properlyDominates(v, point))
    return v;
  Operation *def = v.getDefiningOp();
  if (!def || depth > 4 || def->getNumRegions() != 0 ||
      def->getNumResults() != 1 || !isMemoryEffectFree(def))
    return Value();
  IRMapping map;
  for (Value operand : def->getOperands()) {
    Value available = availableBefore(b, dominance, operand, point, depth + 1);
    if (!available)
      return Value();
    map.map(operand, available);
  }
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(point);
  return b.clone(*def, map)->getResult(0);
}

/// `insert`'s destination slice as a tensor.extract_slice of the type of
/// `insert`'s source, made before `point`; null if its operands cannot be.
Value sliceBefore(OpBuilder &b, DominanceInfo &dominance,
                  tensor::InsertSliceOp insert, Operation *point) {
  Value dest = availableBefore(b, dominance, insert.getDest(), point);
  bool available = static_cast<bool>(dest);
  auto before = [&](ArrayRef<OpFoldResult> mixed) {
    SmallVector<OpFoldResult> result;
    for (OpFoldResult ofr : mixed) {
      if (auto v = dyn_cast<Value>(ofr)) {
        Value moved = availableBefore(b, dominance, v, point);
        available &= static_cast<bool>(moved);
        ofr = moved;
      }
      result.push_back(ofr);
    }
    return result;
  };
  SmallVector<OpFoldResult> offsets = before(insert.getMixedOffsets());
  SmallVector<OpFoldResult> sizes = before(insert.getMixedSizes());
  SmallVector<OpFoldResult> strides = before(insert.getMixedStrides());
  if (!available)
    return Value();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(point);
  return tensor::ExtractSliceOp::create(b, insert.getLoc(),
                                        insert.getSourceType(), dest, offsets,
                                        sizes, strides);
}

/// Has `insert`'s source computed in the destination's slice; whether it
/// did.
bool writeInPlace(RewriterBase &rewriter, DominanceInfo &dominance,
                  tensor::InsertSliceOp insert) {
  // Inserts into temporaries are left to bufferization (and lstm-elide-
  // copies): the temporary itself may become a slice here.
  if (lstm::getUndefinedRoot(insert.getDest()) ||
      lstm::isUndefinedTensor(insert.getDest()))
    return false;
  Value source = insert.getSource();
  OpOperand *root = lstm::getUndefinedRoot(source);
  if (!root || root->get().getType() != insert.getSourceType())
    return false;
  // A destination that is also read (a layer's sequence, whose slot t the
  // step reads while it writes slot t + 1) is left to lstm-elide-copies:
  // bufferization cannot tell the slots apart and would copy what the step
  // reads. Unless every read is done before the value starts being
  // computed (a backward wavefront's diagonal reads the previous one's row
  // of the store it writes: lstm-wavefront's link from the store).
  if (!llvm::all_of(insert.getDest().getUsers(), [&](Operation *user) {
        return user == insert || isa<tensor::DimOp>(user) ||
               readsBefore(user, root->getOwner());
      }))
    return false;

  // The chain's values may be read on the way, not carried elsewhere.
  bool escapes = false;
  Value v = source;
  Operation *consumer = insert;
  while (true) {
    escapes |= !onlyReadInPlace(v, consumer);
    Operation *def = v.getDefiningOp();
    if (def == root->getOwner())
      break;
    consumer = def;
    v = cast<DestinationStyleOpInterface>(def)
            .getTiedOpOperand(cast<OpResult>(v))
            ->get();
  }

  if (!escapes) {
    Value slice = sliceBefore(rewriter, dominance, insert, root->getOwner());
    if (!slice)
      return false;
    rewriter.modifyOpInPlace(root->getOwner(), [&] { root->set(slice); });
    return true;
  }
  // An escaping result: computed twice by its generic, into the slice too.
  auto generic = source.getDefiningOp<linalg::GenericOp>();
  if (!generic || root->getOwner() != generic)
    return false;
  Value slice = sliceBefore(rewriter, dominance, insert, generic);
  if (!slice)
    return false;
  Value copy = lstm::addGenericOutput(
      rewriter, generic, cast<OpResult>(source).getResultNumber(), slice);
  rewriter.modifyOpInPlace(insert,
                           [&] { insert.getSourceMutable().set(copy); });
  return true;
}

struct WriteResultsInPlacePass
    : lstm::impl::WriteResultsInPlacePassBase<WriteResultsInPlacePass> {
  void runOnOperation() override {
    SmallVector<tensor::InsertSliceOp> inserts;
    getOperation()->walk(
        [&](tensor::InsertSliceOp insert) { inserts.push_back(insert); });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(getOperation());
    for (tensor::InsertSliceOp insert : inserts) {
      // A generic given an output is a new op with a new region: dominance
      // is asked afresh after a rewrite.
      if (writeInPlace(rewriter, dominance, insert))
        dominance.invalidate();
    }
  }
};

} // namespace
