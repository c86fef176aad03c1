//===- ShareAssembledColumns.cpp - Slices of assembled tensors ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Cho's GRU's backward cell assembles its gates' gradients twice: all three
// (dG, for the input weights' gradient and the link to the layer below) and
// the reset and update gates' (the operand of the recurrent product R_rzᵀ),
// the first's leading columns. Each assembly is a buffer of its own after
// bufferization, and every piece is copied into both: on the GPU, copy
// kernels a step. Here the narrower one becomes a slice of the wider, which
// bufferization makes a view.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ShareAssembledColumns/ShareAssembledColumns.h"

#include "lstm/Utils/AssembledTensors.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_SHAREASSEMBLEDCOLUMNSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The ops that assemble `v` (its chain of inserts, then the empty tensor
/// it starts from), last first; empty if it is not assembled from an empty
/// tensor.
SmallVector<Operation *> assemblyOps(Value v) {
  SmallVector<Operation *> ops;
  while (auto insert = v.getDefiningOp<tensor::InsertSliceOp>()) {
    ops.push_back(insert);
    v = insert.getDest();
  }
  auto empty = v.getDefiningOp<tensor::EmptyOp>();
  if (!empty || ops.empty())
    return {};
  ops.push_back(empty);
  return ops;
}

/// The op of `block` that `op` is or is nested in.
Operation *inBlock(Operation *op, Block *block) {
  while (op && op->getBlock() != block)
    op = op->getParentOp();
  return op;
}

/// The first op of `block` that uses `v` (or holds a use), if any.
Operation *firstUser(Value v, Block *block) {
  Operation *first = nullptr;
  for (Operation *user : v.getUsers()) {
    Operation *op = inBlock(user, block);
    if (op && (!first || op->isBeforeInBlock(first)))
      first = op;
  }
  return first;
}

/// Moves the ops assembling `whole` (last first in `ops`) that are not
/// before `point` to right before it, in order; false, moving nothing, if
/// some operand of theirs is not available there.
bool assembleBefore(ArrayRef<Operation *> ops, Operation *point,
                    DominanceInfo &dominance) {
  Block *block = point->getBlock();
  SmallVector<Operation *> late;
  for (Operation *op : llvm::reverse(ops)) {
    if (op->getBlock() != block)
      return false;
    if (op->isBeforeInBlock(point))
      continue;
    late.push_back(op);
  }
  for (Operation *op : late)
    for (Value operand : op->getOperands())
      if (!llvm::is_contained(late, operand.getDefiningOp()) &&
          !dominance.properlyDominates(operand, point))
        return false;
  for (Operation *op : late)
    op->moveBefore(point);
  return true;
}

struct ShareAssembledColumnsPass
    : lstm::impl::ShareAssembledColumnsPassBase<ShareAssembledColumnsPass> {
  void runOnOperation() override {
    // The last insert of each assembly.
    SmallVector<Value> assembled;
    getOperation()->walk([&](tensor::InsertSliceOp insert) {
      Value v = insert.getResult();
      bool extended = llvm::any_of(v.getUsers(), [&](Operation *user) {
        auto next = dyn_cast<tensor::InsertSliceOp>(user);
        return next && next.getDest() == v;
      });
      if (extended || assemblyOps(v).empty())
        return;
      // Pieces all inserted in columns, down to the empty tensor.
      std::optional<SmallVector<lstm::ColumnPiece>> pieces =
          lstm::getColumnPieces(v);
      if (pieces && llvm::none_of(*pieces, [&](const lstm::ColumnPiece &p) {
            return p.value == v;
          }))
        assembled.push_back(v);
    });
    IRRewriter rewriter(&getContext());
    DominanceInfo dominance(getOperation());
    // Parts already made slices, their assemblies erased: no longer wholes.
    DenseSet<Value> replaced;
    for (Value part : assembled) {
      Block *block = part.getParentBlock();
      for (Value whole : assembled) {
        if (whole == part || replaced.contains(whole) ||
            whole.getParentBlock() != block ||
            whole.getType() == part.getType())
          continue;
        std::optional<int64_t> column = lstm::getSliceColumn(part, whole);
        if (!column)
          continue;
        // (A part that is itself a piece of the whole is read by the ops
        // that assemble it.)
        Operation *first = firstUser(part, block);
        SmallVector<Operation *> wholeOps = assemblyOps(whole);
        if (!first || llvm::is_contained(wholeOps, first) ||
            !assembleBefore(wholeOps, first, dominance))
          continue;
        rewriter.setInsertionPoint(first);
        auto type = cast<RankedTensorType>(part.getType());
        int64_t rank = type.getRank();
        SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
        offsets.back() = rewriter.getIndexAttr(*column);
        SmallVector<OpFoldResult> sizes =
            tensor::getMixedSizes(rewriter, part.getLoc(), whole);
        sizes.back() = rewriter.getIndexAttr(type.getDimSize(rank - 1));
        SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
        Value slice = tensor::ExtractSliceOp::create(
            rewriter, part.getLoc(), type, whole, offsets, sizes, strides);
        // The part's own assembly goes, as far as nothing else reads it:
        // left for later, its pieces would still be computed into it.
        SmallVector<Operation *> partOps = assemblyOps(part);
        rewriter.replaceAllUsesWith(part, slice);
        replaced.insert(part);
        for (Operation *op : partOps) {
          if (!op->use_empty())
            break;
          rewriter.eraseOp(op);
        }
        break;
      }
    }
  }
};

} // namespace
