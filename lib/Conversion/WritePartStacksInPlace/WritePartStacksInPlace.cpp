//===- WritePartStacksInPlace.cpp - A part's stack in the whole's rows ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A layer's lowering keeps its output sequence as rows 1..T of a state
// stack whose row 0 is the initial state. A part of a split layer's batch
// (lstm-split-batch) builds that stack in a buffer of its own, and its rows
// 1..T are then copied into the whole layer's output. Giving the whole
// output one row more lets every part build its stack in place: the part's
// row 0 lands in the extra row, its rows 1..T where the copy would have put
// them, and the layer's output becomes a view of rows 1..T of the whole.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/WritePartStacksInPlace/WritePartStacksInPlace.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "lstm-write-part-stacks-in-place"

namespace mlir::lstm {
#define GEN_PASS_DEF_WRITEPARTSTACKSINPLACEPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

using Variable = ValueBoundsConstraintSet::Variable;

/// Whether every use of `v` but `user` only reads its extents.
bool onlyExtentsReadBesides(Value v, Operation *user) {
  return llvm::all_of(v.getUsers(), [&](Operation *other) {
    return other == user || isa<tensor::DimOp>(other);
  });
}

/// A fresh `bufferization.alloc_tensor` (no contents to copy, the default
/// memory space).
bufferization::AllocTensorOp freshAllocation(Value v) {
  auto alloc = v.getDefiningOp<bufferization::AllocTensorOp>();
  if (!alloc || alloc.getCopy() || alloc.getMemorySpace())
    return nullptr;
  return alloc;
}

/// Whether `slice` takes every row of its source but the first, whole in
/// every other dimension: offsets [1, 0, ...], unit strides, sizes
/// [S, extents...] where the source has S + 1 rows. The value-bounds
/// analysis proves the extents equal (through the loop, the inserts and the
/// allocation that built the source).
bool isAllButFirstRow(tensor::ExtractSliceOp slice) {
  RankedTensorType sourceType = slice.getSourceType();
  int64_t rank = sourceType.getRank();
  if (rank < 1 || slice.getResultType().getRank() != rank ||
      !slice.hasUnitStride())
    return false;
  SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = slice.getMixedSizes();
  if (!isConstantIntValue(offsets[0], 1))
    return false;
  MLIRContext *ctx = slice.getContext();
  AffineMap plusOne = AffineMap::get(1, 0, getAffineDimExpr(0, ctx) + 1, ctx);
  auto equal = [](const Variable &a, const Variable &b) {
    FailureOr<bool> known = ValueBoundsConstraintSet::areEqual(a, b);
    return succeeded(known) && *known;
  };
  if (!equal(Variable(plusOne, ArrayRef<Variable>{Variable(sizes[0])}),
             Variable(slice.getSource(), 0)))
    return false;
  for (int64_t d = 1; d < rank; ++d)
    if (!isConstantIntValue(offsets[d], 0) ||
        !equal(Variable(sizes[d]), Variable(slice.getSource(), d)))
      return false;
  return true;
}

/// A shared output of an scf.forall that a part's stack can be built in.
struct PartStack {
  scf::ForallOp forall;
  unsigned output;
  /// The output's initial value, a fresh allocation.
  bufferization::AllocTensorOp whole;
  /// The one insert into the output: rows 1.. of `stack` at row 0.
  tensor::ParallelInsertSliceOp insert;
  /// The part's stack (an scf.for result) and its allocation.
  Value stack;
  bufferization::AllocTensorOp part;
};

/// The allocation that the value a loop starts `stack` from is built on:
/// the loop's initial value, or a chain of `tensor.insert_slice`s into it
/// (a stack's initial state in row 0), each read by the next only.
bufferization::AllocTensorOp stackAllocation(Value stack) {
  auto result = dyn_cast<OpResult>(stack);
  auto loop = result ? dyn_cast<scf::ForOp>(result.getOwner()) : nullptr;
  if (!loop)
    return nullptr;
  Value init = loop.getInitArgs()[result.getResultNumber()];
  if (llvm::count(loop.getInitArgs(), init) != 1)
    return nullptr;
  Operation *reader = loop;
  while (auto insert = init.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!onlyExtentsReadBesides(insert.getResult(), reader))
      return nullptr;
    reader = insert;
    init = insert.getDest();
  }
  bufferization::AllocTensorOp alloc = freshAllocation(init);
  if (!alloc || !onlyExtentsReadBesides(alloc, reader) ||
      alloc.getType() != stack.getType())
    return nullptr;
  return alloc;
}

/// Output `output` of `forall` as a PartStack, if it is one.
std::optional<PartStack> matchPartStack(scf::ForallOp forall, unsigned output,
                                        DominanceInfo &dominance) {
  PartStack match{forall, output};
  match.whole = freshAllocation(forall.getOutputs()[output]);
  if (!match.whole || !onlyExtentsReadBesides(match.whole, forall))
    return std::nullopt;
  BlockArgument shared = forall.getRegionIterArgs()[output];
  SmallVector<Operation *> combining = forall.getCombiningOps(shared);
  if (combining.size() != 1)
    return std::nullopt;
  match.insert = dyn_cast<tensor::ParallelInsertSliceOp>(combining.front());
  if (!match.insert || !onlyExtentsReadBesides(shared, match.insert) ||
      !match.insert.hasUnitStride() ||
      !isConstantIntValue(match.insert.getMixedOffsets()[0], 0))
    return std::nullopt;
  auto rows = match.insert.getSource().getDefiningOp<tensor::ExtractSliceOp>();
  if (!rows || !isAllButFirstRow(rows))
    return std::nullopt;
  match.stack = rows.getSource();
  match.part = stackAllocation(match.stack);
  if (!match.part || !forall->isProperAncestor(match.part))
    return std::nullopt;
  // The slice cut for the allocation has its extents.
  for (int64_t d = 0, e = match.part.getType().getRank(); d < e; ++d) {
    FailureOr<bool> same = ValueBoundsConstraintSet::areEqual(
        Variable(match.part, d), Variable(match.stack, d));
    if (failed(same) || !*same)
      return std::nullopt;
  }
  // The part's slice of the output replaces its allocation: the offsets and
  // extents it is cut with must be known there.
  SmallVector<Value> needed(match.insert.getOffsets());
  llvm::append_range(needed, match.insert.getSizes());
  if (!llvm::all_of(needed, [&](Value v) {
        return dominance.properlyDominates(v, match.part);
      }))
    return std::nullopt;
  return match;
}

/// The extents of `alloc`'s tensor: static ones as attributes, dynamic ones
/// as its operands.
SmallVector<OpFoldResult> extentsOf(bufferization::AllocTensorOp alloc) {
  return getMixedValues(alloc.getType().getShape(), alloc.getDynamicSizes(),
                        alloc.getContext());
}

/// `type` with one more row.
RankedTensorType withOneMoreRow(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  if (!ShapedType::isDynamic(shape[0]))
    ++shape[0];
  return type.clone(shape);
}

/// rows [1, S + 1) of `whole`, whose other extents are taken whole, as a
/// value of `type`: `sizes` gives S (the first) and, where static, the
/// others; a dynamic one is read from `whole` (what
/// lstm-collapse-before-slice recognises as a whole extent).
Value allButFirstRow(OpBuilder &b, Location loc, Value whole,
                     RankedTensorType type, OpFoldResult rows) {
  int64_t rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  offsets[0] = b.getIndexAttr(1);
  SmallVector<OpFoldResult> sizes = {rows};
  for (int64_t d = 1; d < rank; ++d)
    sizes.push_back(
        type.isDynamicDim(d)
            ? OpFoldResult(tensor::DimOp::create(b, loc, whole, d).getResult())
            : OpFoldResult(b.getIndexAttr(type.getDimSize(d))));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, type, whole, offsets, sizes,
                                        strides);
}

/// The uses of `v`, listed before ops that read it are added.
SmallVector<OpOperand *> usesOf(Value v) {
  return llvm::map_to_vector(v.getUses(), [](OpOperand &use) { return &use; });
}

/// Makes each of `uses` read `replacement`.
void replaceUses(RewriterBase &rewriter, ArrayRef<OpOperand *> uses,
                 Value replacement) {
  for (OpOperand *use : uses)
    rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(replacement); });
}

/// The part builds its stack in the whole's rows; the output gets one more
/// row, and what read it reads its rows 1.. instead.
void buildInPlace(RewriterBase &rewriter, PartStack match) {
  scf::ForallOp forall = match.forall;
  Location loc = match.whole.getLoc();
  RankedTensorType oldType = match.whole.getType();
  RankedTensorType newType = withOneMoreRow(oldType);
  SmallVector<OpFoldResult> wholeSizes = extentsOf(match.whole);

  // The whole, a row more.
  rewriter.setInsertionPoint(match.whole);
  SmallVector<Value> dynamicSizes(match.whole.getDynamicSizes());
  if (oldType.isDynamicDim(0))
    dynamicSizes[0] =
        arith::AddIOp::create(rewriter, loc, dynamicSizes[0],
                              arith::ConstantIndexOp::create(rewriter, loc, 1));
  auto bigger = bufferization::AllocTensorOp::create(rewriter, loc, newType,
                                                     dynamicSizes);

  // The forall's output and its block argument take the new type.
  BlockArgument shared = forall.getRegionIterArgs()[match.output];
  OpResult result = forall->getResult(match.output);
  rewriter.modifyOpInPlace(forall, [&] {
    forall.getOutputsMutable()[match.output].set(bigger);
    shared.setType(newType);
    result.setType(newType);
  });

  // The part's stack: its rows of the whole from row 0.
  tensor::ParallelInsertSliceOp insert = match.insert;
  SmallVector<OpFoldResult> offsets = insert.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = insert.getMixedSizes();
  sizes[0] = extentsOf(match.part)[0];
  SmallVector<OpFoldResult> strides = insert.getMixedStrides();
  rewriter.setInsertionPoint(match.part);
  Value slice = tensor::ExtractSliceOp::create(rewriter, match.part.getLoc(),
                                               shared, offsets, sizes, strides);
  if (slice.getType() != match.part.getType())
    slice = tensor::CastOp::create(rewriter, match.part.getLoc(),
                                   match.part.getType(), slice);
  rewriter.replaceOp(match.part, slice);
  rewriter.setInsertionPoint(insert);
  tensor::ParallelInsertSliceOp::create(rewriter, insert.getLoc(), match.stack,
                                        shared, offsets, sizes, strides);
  rewriter.eraseOp(insert);

  // What read the output reads its rows 1...
  SmallVector<OpOperand *> readers = usesOf(result);
  rewriter.setInsertionPointAfter(forall);
  Value rows =
      allButFirstRow(rewriter, forall.getLoc(), result, oldType, wholeSizes[0]);
  replaceUses(rewriter, readers, rows);
  // The extents asked of the old output.
  for (Operation *user : llvm::make_early_inc_range(match.whole->getUsers()))
    if (auto dim = dyn_cast<tensor::DimOp>(user))
      if (std::optional<int64_t> d = dim.getConstantIndex())
        rewriter.replaceOp(dim, getValueOrCreateConstantIndexOp(
                                    rewriter, dim.getLoc(), wholeSizes[*d]));
  if (match.whole->use_empty())
    rewriter.eraseOp(match.whole);
}

/// An scf.if's result `result`, whose every branch now yields rows 1.. of
/// a value one row longer: the branches yield those values, and what read
/// the result reads its rows 1...
void yieldWholeStacks(RewriterBase &rewriter, scf::IfOp ifOp, unsigned index) {
  OpResult result = ifOp->getResult(index);
  auto oldType = cast<RankedTensorType>(result.getType());
  Type newType;
  for (Region *region : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
    auto yield = cast<scf::YieldOp>(region->front().getTerminator());
    auto rows = yield.getOperand(index).getDefiningOp<tensor::ExtractSliceOp>();
    newType = rows.getSourceType();
    rewriter.modifyOpInPlace(
        yield, [&] { yield->setOperand(index, rows.getSource()); });
  }
  rewriter.modifyOpInPlace(ifOp, [&] { result.setType(newType); });
  SmallVector<OpOperand *> readers = usesOf(result);
  rewriter.setInsertionPointAfter(ifOp);
  Location loc = ifOp.getLoc();
  OpFoldResult count;
  if (oldType.isDynamicDim(0))
    count = arith::SubIOp::create(
                rewriter, loc, tensor::DimOp::create(rewriter, loc, result, 0),
                arith::ConstantIndexOp::create(rewriter, loc, 1))
                .getResult();
  else
    count = rewriter.getIndexAttr(oldType.getDimSize(0));
  Value rows = allButFirstRow(rewriter, loc, result, oldType, count);
  replaceUses(rewriter, readers, rows);
}

struct WritePartStacksInPlacePass
    : lstm::impl::WritePartStacksInPlacePassBase<WritePartStacksInPlacePass> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    // The outputs that can be built in place, by value.
    // (A stack whose rows two outputs take is built in neither.)
    llvm::MapVector<Value, PartStack> parts;
    DenseMap<Operation *, unsigned> stacksTaken;
    getOperation()->walk([&](scf::ForallOp forall) {
      for (unsigned i = 0, e = forall.getOutputs().size(); i < e; ++i)
        if (std::optional<PartStack> match =
                matchPartStack(forall, i, dominance)) {
          parts.insert({forall->getResult(i), *match});
          ++stacksTaken[match->part];
        }
    });
    parts.remove_if([&](const std::pair<Value, PartStack> &entry) {
      return stacksTaken[entry.second.part] > 1;
    });
    if (parts.empty())
      return;

    // An output becomes a slice of a longer value. An scf.if whose every
    // branch yields such outputs (a layer's two forms, lstm-hoist-by-threads)
    // yields the longer values instead, and its result is then one too. A
    // value that leaves the function, or that anything else yields (a
    // branch's slice and another's whole tensor would make the result's
    // layout unknown, and what reads it would copy it), stays as it is:
    // the parts' copies run on their threads, a function result's copy on
    // one.
    SmallVector<scf::IfOp> ifs;
    getOperation()->walk([&](scf::IfOp ifOp) { ifs.push_back(ifOp); });
    llvm::SetVector<std::pair<scf::IfOp, unsigned>> joins;
    DenseSet<std::pair<Operation *, unsigned>> rejected;
    while (true) {
      llvm::SetVector<Value> sliced;
      for (auto &entry : parts)
        sliced.insert(entry.first);
      // The joins: scf.if results every branch of which yields a sliced
      // value (the walk listed inner ifs first).
      joins.clear();
      for (scf::IfOp ifOp : ifs) {
        if (ifOp.getElseRegion().empty())
          continue;
        for (unsigned i = 0, e = ifOp->getNumResults(); i < e; ++i) {
          if (rejected.contains({ifOp, i}) ||
              !sliced.contains(ifOp.thenYield().getOperand(i)) ||
              !sliced.contains(ifOp.elseYield().getOperand(i)))
            continue;
          joins.insert({ifOp, i});
          sliced.insert(ifOp->getResult(i));
        }
      }
      // What is read where a slice would cost a copy stays as it is.
      bool changed = false;
      for (Value v : sliced) {
        bool fine = llvm::all_of(v.getUses(), [&](OpOperand &use) {
          Operation *user = use.getOwner();
          if (!user->hasTrait<OpTrait::IsTerminator>())
            return true;
          auto ifOp = dyn_cast<scf::IfOp>(user->getParentOp());
          return isa<scf::YieldOp>(user) && ifOp &&
                 joins.contains({ifOp, use.getOperandNumber()});
        });
        if (fine)
          continue;
        changed = true;
        if (!parts.erase(v)) {
          auto result = cast<OpResult>(v);
          rejected.insert({result.getOwner(), result.getResultNumber()});
        }
      }
      if (!changed)
        break;
    }

    LLVM_DEBUG(llvm::dbgs() << "stacks built in place: " << parts.size()
                            << ", branches joined: " << joins.size() << "\n");
    IRRewriter rewriter(&getContext());
    for (auto &entry : parts)
      buildInPlace(rewriter, entry.second);
    for (auto [ifOp, i] : joins)
      yieldWholeStacks(rewriter, ifOp, i);
  }
};

} // namespace
