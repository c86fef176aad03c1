//===- WriteSequencesInPlace.cpp - Sequences built where they go ----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The tensor-level counterpart of eliminate-empty-tensors for the
// allocations a layer's lowering starts its sequences from: where a time
// loop's sequence is inserted whole into a bigger tensor, the loop starts
// from that tensor's slice instead, and bufferization gives it the slice's
// buffer rather than one of its own that a copy would then move.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/WriteSequencesInPlace/WriteSequencesInPlace.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_WRITESEQUENCESINPLACEPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Whether every use of `v` but `user` only reads its extents (the run-time
/// checks do).
bool onlyExtentsReadBesides(Value v, Operation *user) {
  return llvm::all_of(v.getUsers(), [&](Operation *other) {
    return other == user || isa<tensor::DimOp>(other);
  });
}

/// The allocation that `insert`'s source starts from, if it can be the
/// destination's slice: the source is an scf.for result that nothing else
/// reads (but its extents), whose initial value is a plain
/// `bufferization.alloc_tensor` that only the loop reads, and the
/// destination and the slice's offsets, sizes and strides are defined
/// before the allocation. (A result that others read too, such as a
/// layer's output the next layer reads, is left alone: bufferization may
/// then find the slice's buffer in use and copy it twice.) `insert` is a
/// tensor.insert_slice, or the tensor.parallel_insert_slice of an
/// scf.forall (a part of a layer's batch, lstm-split-batch, into the
/// whole: the part's sequences, such as a training forward's saved
/// activations, are then built in the whole's rows).
template <typename InsertOp>
bufferization::AllocTensorOp sliceable(InsertOp insert,
                                       DominanceInfo &dominance) {
  auto result = dyn_cast<OpResult>(insert.getSource());
  auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
  if (!loop || !onlyExtentsReadBesides(result, insert))
    return nullptr;
  Value init = loop.getInitArgs()[result.getResultNumber()];
  auto alloc = init.getDefiningOp<bufferization::AllocTensorOp>();
  if (!alloc || alloc.getCopy() || alloc.getMemorySpace() ||
      !onlyExtentsReadBesides(alloc, loop) ||
      llvm::count(loop.getInitArgs(), init) != 1 ||
      alloc.getType() != insert.getSourceType())
    return nullptr;
  SmallVector<Value> needed = {insert.getDest()};
  llvm::append_range(needed, insert.getOffsets());
  llvm::append_range(needed, insert.getSizes());
  llvm::append_range(needed, insert.getStrides());
  if (!llvm::all_of(needed, [&](Value v) {
        return dominance.properlyDominates(v, alloc);
      }))
    return nullptr;
  return alloc;
}

struct WriteSequencesInPlacePass
    : lstm::impl::WriteSequencesInPlacePassBase<WriteSequencesInPlacePass> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    // Each allocation, with the destination and the slice it becomes.
    SmallVector<std::tuple<bufferization::AllocTensorOp, Value,
                           OffsetSizeAndStrideOpInterface>>
        rewrites;
    getOperation()->walk([&](Operation *op) {
      if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
        if (bufferization::AllocTensorOp alloc = sliceable(insert, dominance))
          rewrites.push_back({alloc, insert.getDest(), insert});
      } else if (auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(op)) {
        if (bufferization::AllocTensorOp alloc = sliceable(insert, dominance))
          rewrites.push_back({alloc, insert.getDest(), insert});
      }
    });
    IRRewriter rewriter(&getContext());
    for (auto [alloc, dest, slice] : rewrites) {
      rewriter.setInsertionPoint(alloc);
      rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
          alloc, alloc.getType(), dest, slice.getMixedOffsets(),
          slice.getMixedSizes(), slice.getMixedStrides());
    }
  }
};

} // namespace
