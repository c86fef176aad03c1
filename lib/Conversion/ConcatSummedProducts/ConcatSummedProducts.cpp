//===- ConcatSummedProducts.cpp - Summed products as one deeper product ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A cell's gates add the product of their input with the input weights to
// the product of the state with the recurrent weights. Where both are
// computed in the loop (a wavefront's diagonal: layer l's input is layer
// l-1's output of the diagonal before), they are two GEMMs of depth K whose
// results the fused cell adds. One GEMM of depth 2K over the concatenated
// operands, `[X H] · [W R]ᵀ = X·Wᵀ + H·Rᵀ`, takes less time than the two
// (at appleyard's diagonal, 4 × [64 × 1024] · [1024 × 2048] in TF32
// measured 10.2 µs against 2 × 7.4; in fp32 the step ran 2.8% faster):
// each output tile is loaded and stored once, and the GPU runs one launch
// instead of two.
//
// The rewrite is on tensors, after the pointwise fusion: an elementwise
// linalg.generic whose body adds two of its operands and nothing else reads
// them, where those operands are (equal slices of) two zero-filled
// contractions of one kind, every use of which is such a pair. The weights'
// concatenation goes right after the later weight's definition, so that a
// loop computes it once, not once per step.
//
// Without tensor cores the deeper product leaves tiles idle: there two
// batched products of equal extents run as one batch of both's matrices
// instead (stack-batches), `[X; H] · [W; R]ᵀ`, and the cell keeps its sum.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ConcatSummedProducts/ConcatSummedProducts.h"
#include "SummedProducts.h"

#include "lstm/Conversion/Utils/UndefinedRoots.h"
#include "lstm/Dialect/LSTM/Utils/Matmul.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

#include <tuple>

namespace mlir::lstm {
#define GEN_PASS_DEF_CONCATSUMMEDPRODUCTSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm::summed_products;

namespace {

/// Where a value computed from both `a` and `b` can go as early as possible:
/// right after the later of their definitions, if one's block contains or
/// is the other's. Null if neither dominates the other's definition.
std::optional<OpBuilder::InsertPoint> afterBoth(Value a, Value b,
                                                DominanceInfo &dominance) {
  OpBuilder::InsertPoint pa = after(a), pb = after(b);
  if (pa.getBlock() == pb.getBlock()) {
    Operation *da = a.getDefiningOp(), *db = b.getDefiningOp();
    if (!da)
      return pb;
    if (!db)
      return pa;
    return da->isBeforeInBlock(db) ? pb : pa;
  }
  if (dominance.properlyDominates(pb.getBlock(), pa.getBlock()))
    return pa;
  if (dominance.properlyDominates(pa.getBlock(), pb.getBlock()))
    return pb;
  return std::nullopt;
}

/// The values that a concatenation of this pass took as its left part,
/// each with that concatenation (of the same extents from offset 0).
using LeftParts = llvm::DenseMap<Value, Value>;

/// Whether `v` is defined before the builder's insertion point, in its
/// block.
bool definedBefore(Value v, OpBuilder &b) {
  Operation *def = v.getDefiningOp();
  if (!def || def->getBlock() != b.getInsertionBlock())
    return false;
  return b.getInsertionPoint() == b.getInsertionBlock()->end() ||
         def->isBeforeInBlock(&*b.getInsertionPoint());
}

/// `[a b]` along dimension `dim` (the other extents are `a`'s). Where `a`
/// was built in an empty tensor (a wavefront's gather of the layers'
/// inputs), it is built in the concatenation's slice instead; so is `b`
/// where it was (a cell's result that only the product reads: Cho's GRU's
/// `r ⊙ h`). Where `a` is the left part of an earlier concatenation
/// (`parts`: the gather that a split product's two halves both read), it is
/// read from there: bufferization would otherwise keep the gather in a
/// buffer of its own and copy it into both.
Value concatenate(RewriterBase &rewriter, Location loc, Value a, Value b,
                  int64_t dim, LeftParts *parts = nullptr) {
  auto type = cast<RankedTensorType>(a.getType());
  Value part = a;
  if (parts) {
    auto it = parts->find(a);
    if (it != parts->end() && definedBefore(it->second, rewriter)) {
      int64_t rank = type.getRank();
      a = tensor::ExtractSliceOp::create(
          rewriter, loc, type, it->second,
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(0)),
          tensor::getMixedSizes(rewriter, loc, a),
          SmallVector<OpFoldResult>(rank, rewriter.getIndexAttr(1)));
    }
  }
  // A value built in a tensor.empty (nothing else reading it on the way):
  // its empty tensor becomes the concatenation's slice.
  auto emptyRoot = [](Value v) -> OpOperand * {
    OpOperand *root = lstm::getUndefinedRoot(v, /*singleUse=*/true);
    return root && root->get().getDefiningOp<tensor::EmptyOp>() ? root
                                                                : nullptr;
  };
  OpOperand *root = emptyRoot(a);
  // `a`'s extents are its empty tensor's (a tensor.dim of `a` would be one
  // more reader of it).
  SmallVector<OpFoldResult> partSizes =
      root ? root->get().getDefiningOp<tensor::EmptyOp>().getMixedSizes()
           : tensor::getMixedSizes(rewriter, loc, a);
  OpFoldResult depthB = tensor::getMixedSize(rewriter, loc, b, dim);
  std::optional<int64_t> ka = getConstantIntValue(partSizes[dim]),
                         kb = getConstantIntValue(depthB);
  SmallVector<OpFoldResult> offsets(type.getRank(), rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(type.getRank(), rewriter.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes = partSizes;
  OpOperand *rootB = nullptr;
  if (ka && kb) {
    sizes[dim] = rewriter.getIndexAttr(*ka + *kb);
    // Operands only: the weights are concatenated once, before the loop.
    rootB = parts ? emptyRoot(b) : nullptr;
    // Both built in place only where they are built in one block.
    if (rootB && root &&
        rootB->getOwner()->getBlock() != root->getOwner()->getBlock())
      rootB = nullptr;
  } else {
    root = nullptr;
    sizes[dim] =
        arith::AddIOp::create(
            rewriter, loc,
            getValueOrCreateConstantIndexOp(rewriter, loc, partSizes[dim]),
            getValueOrCreateConstantIndexOp(rewriter, loc, depthB))
            .getResult();
  }
  Value empty;
  if (root || rootB) {
    // Before the first of the values built in it, of the extents of that
    // one's empty tensor (the others' are equal).
    OpOperand *first = root;
    if (!root ||
        (rootB && rootB->getOwner()->isBeforeInBlock(root->getOwner())))
      first = rootB;
    SmallVector<OpFoldResult> emptySizes =
        first->get().getDefiningOp<tensor::EmptyOp>().getMixedSizes();
    emptySizes[dim] = sizes[dim];
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(first->getOwner());
    empty = tensor::EmptyOp::create(rewriter, loc, emptySizes,
                                    type.getElementType());
    auto buildIn = [&](OpOperand *at, int64_t offset) {
      auto emptyType = cast<RankedTensorType>(at->get().getType());
      SmallVector<OpFoldResult> sliceOffsets = offsets;
      sliceOffsets[dim] = rewriter.getIndexAttr(offset);
      Value slice = tensor::ExtractSliceOp::create(
          rewriter, loc, emptyType, empty, sliceOffsets,
          at->get().getDefiningOp<tensor::EmptyOp>().getMixedSizes(), strides);
      rewriter.modifyOpInPlace(at->getOwner(), [&] { at->set(slice); });
    };
    if (root)
      buildIn(root, 0);
    if (rootB)
      buildIn(rootB, *ka);
  } else {
    empty =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  }
  Value withA = tensor::InsertSliceOp::create(rewriter, loc, a, empty, offsets,
                                              partSizes, strides);
  offsets[dim] = partSizes[dim];
  partSizes[dim] = depthB;
  Value whole = tensor::InsertSliceOp::create(rewriter, loc, b, withA, offsets,
                                              partSizes, strides);
  if (parts)
    parts->try_emplace(part, whole);
  return whole;
}

/// The concatenation of `a` and `b` along `dim`, placed right after both are
/// defined (before `user` where that is not possible).
Value concatenateEarly(RewriterBase &rewriter, Value a, Value b, int64_t dim,
                       Operation *user, DominanceInfo &dominance,
                       LeftParts *parts = nullptr) {
  OpBuilder::InsertionGuard guard(rewriter);
  std::optional<OpBuilder::InsertPoint> point = afterBoth(a, b, dominance);
  if (point)
    rewriter.restoreInsertionPoint(*point);
  else
    rewriter.setInsertionPoint(user);
  return concatenate(rewriter, user->getLoc(), a, b, dim, parts);
}

/// `weights` with zero columns appended along `dim` up to `count`, made
/// right after `weights` is defined.
Value padColumns(RewriterBase &rewriter, Location loc, Value weights,
                 int64_t dim, int64_t count) {
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.restoreInsertionPoint(after(weights));
  auto type = cast<RankedTensorType>(weights.getType());
  SmallVector<OpFoldResult> sizes =
      tensor::getMixedSizes(rewriter, loc, weights);
  sizes[dim] = rewriter.getIndexAttr(count - type.getDimSize(dim));
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  Value zero = arith::ConstantOp::create(
      rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
  Value zeros = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
  return concatenate(rewriter, loc, weights, zeros, dim);
}

/// The product of `first` and `second` with more columns (`first` where
/// they have as many), and both's weights with the narrower one's padded
/// with zeros to the wider one's columns.
std::tuple<linalg::LinalgOp, Value, Value>
weightsOfWider(RewriterBase &rewriter, linalg::LinalgOp first,
               linalg::LinalgOp second) {
  Value firstWeights = first.getDpsInputs()[1];
  Value secondWeights = second.getDpsInputs()[1];
  if (first->getResultTypes() == second->getResultTypes())
    return {first, firstWeights, secondWeights};
  ColumnDims columns = *columnDims(first);
  int64_t a = *columnCount(first), b = *columnCount(second);
  if (a < b)
    return {second,
            padColumns(rewriter, first.getLoc(), firstWeights, columns.rhs, b),
            secondWeights};
  return {first, firstWeights,
          padColumns(rewriter, second.getLoc(), secondWeights, columns.rhs, a)};
}

/// Erases what is left of two replaced products: the slices that read them,
/// extents read of them, the products and their zeros.
void eraseReplaced(RewriterBase &rewriter, linalg::LinalgOp first,
                   linalg::LinalgOp second, ArrayRef<SummedPair> pairs) {
  for (const SummedPair &pair : pairs)
    for (const ProductRead &read : {pair.first, pair.second})
      if (read.slice && read.slice->use_empty())
        rewriter.eraseOp(read.slice);
  for (linalg::LinalgOp old : {first, second}) {
    // The extents of the zero-filled tensor are the product's.
    Value shape = lstm::getZeroFill(old.getDpsInits()[0]).getOutputs()[0];
    for (OpOperand &use :
         llvm::make_early_inc_range(old->getResult(0).getUses()))
      rewriter.modifyOpInPlace(use.getOwner(), [&] { use.set(shape); });
    linalg::FillOp zeros = lstm::getZeroFill(old.getDpsInits()[0]);
    rewriter.eraseOp(old);
    if (!zeros->use_empty())
      continue;
    Operation *empty = shape.getDefiningOp();
    rewriter.eraseOp(zeros);
    if (empty && empty->use_empty() && isa<tensor::EmptyOp>(empty))
      rewriter.eraseOp(empty);
  }
}

/// Replaces the two products of `pairs` with one over the concatenated
/// operands; each pair's first read takes the slice of it, the addition
/// takes that read alone.
void combine(RewriterBase &rewriter, linalg::LinalgOp first,
             linalg::LinalgOp second, ArrayRef<SummedPair> pairs,
             ArrayRef<tensor::ExtractSliceOp> others, DominanceInfo &dominance,
             LeftParts &parts) {
  ReductionDims dims = *summableProduct(first);
  // The new product goes where the later of the two was.
  linalg::LinalgOp later = first->isBeforeInBlock(second) ? second : first;
  // It computes the columns of the wider one: the narrower one's weights
  // get zeros for the others.
  auto [wide, firstWeights, secondWeights] =
      weightsOfWider(rewriter, first, second);
  Value lhs = concatenateEarly(rewriter, first.getDpsInputs()[0],
                               second.getDpsInputs()[0], dims.lhs, later,
                               dominance, &parts);
  Value rhs = concatenateEarly(rewriter, firstWeights, secondWeights, dims.rhs,
                               later, dominance);
  rewriter.setInsertionPoint(later);
  IRMapping operands;
  operands.map(wide.getDpsInputs()[0], lhs);
  operands.map(wide.getDpsInputs()[1], rhs);
  // The zeros are filled right before the product, where the GEMM call-outs
  // look for them (a fill they can replace with beta = 0).
  Value init = wide.getDpsInits()[0];
  operands.map(init, rewriter.clone(*lstm::getZeroFill(init))->getResult(0));
  Operation *product = rewriter.clone(*wide, operands);
  // The wider product's columns that the other has none of: the same
  // columns of the new one (plus zeros).
  for (tensor::ExtractSliceOp slice : others) {
    if (slice->isBeforeInBlock(product))
      rewriter.moveOpAfter(slice, product);
    rewriter.modifyOpInPlace(
        slice, [&] { slice.getSourceMutable().set(product->getResult(0)); });
  }

  for (SummedPair pair : pairs) {
    auto generic = cast<linalg::GenericOp>(pair.first.operand->getOwner());
    rewriter.setInsertionPoint(generic);
    Value read = product->getResult(0);
    if (pair.first.slice) {
      IRMapping source;
      source.map(pair.first.slice.getSource(), read);
      read = rewriter.clone(*pair.first.slice, source)->getResult(0);
    }
    rewriter.modifyOpInPlace(generic, [&] {
      pair.first.operand->set(read);
      pair.second.operand->set(read);
    });
    // The second read's block argument is left unused: its operand is
    // dropped below.
    Value kept = pair.sum.getLhs() ==
                         generic.getMatchingBlockArgument(pair.first.operand)
                     ? pair.sum.getLhs()
                     : pair.sum.getRhs();
    rewriter.replaceOp(pair.sum, kept);
  }
  eraseReplaced(rewriter, first, second, pairs);
}

/// `offset` + `add`, folded where `offset` is a constant.
OpFoldResult addOffset(OpBuilder &b, Location loc, OpFoldResult offset,
                       int64_t add) {
  if (add == 0)
    return offset;
  if (std::optional<int64_t> value = getConstantIntValue(offset))
    return b.getIndexAttr(*value + add);
  return arith::AddIOp::create(b, loc,
                               getValueOrCreateConstantIndexOp(b, loc, offset),
                               arith::ConstantIndexOp::create(b, loc, add))
      .getResult();
}

/// Replaces the two products of `pairs` with one batch of both's matrices
/// (`first`'s, then `second`'s) over the operands concatenated along the
/// batch dimension; each pair's reads take their halves of it and the
/// generic still adds them. Where their numbers of columns differ, the
/// narrower product's weights get zero rows for the others (both halves
/// have the wider one's columns), and the wider product's `others` (reads
/// of the columns the narrower has none of) read its half.
void stack(RewriterBase &rewriter, linalg::LinalgOp first,
           linalg::LinalgOp second, ArrayRef<SummedPair> pairs,
           ArrayRef<tensor::ExtractSliceOp> others, DominanceInfo &dominance,
           LeftParts &parts) {
  BatchDims dims = *batchDims(first);
  linalg::LinalgOp later = first->isBeforeInBlock(second) ? second : first;
  auto [wide, firstWeights, secondWeights] =
      weightsOfWider(rewriter, first, second);
  Value lhs = concatenateEarly(rewriter, first.getDpsInputs()[0],
                               second.getDpsInputs()[0], dims.lhs, later,
                               dominance, &parts);
  Value rhs = concatenateEarly(rewriter, firstWeights, secondWeights, dims.rhs,
                               later, dominance);
  rewriter.setInsertionPoint(later);
  Location loc = later.getLoc();
  auto type = cast<RankedTensorType>(wide->getResult(0).getType());
  int64_t firstMatrices = cast<RankedTensorType>(first->getResult(0).getType())
                              .getDimSize(dims.result);
  int64_t matrices =
      firstMatrices + cast<RankedTensorType>(second->getResult(0).getType())
                          .getDimSize(dims.result);
  // The zeros right before the product, where the GEMM call-outs look for
  // them (a fill they can replace with beta = 0); their extents the wider
  // product's zeros', but for the batch.
  Value zero = arith::ConstantOp::create(
      rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
  Value zeros = zerosLike(
      rewriter, loc, lstm::getZeroFill(wide.getDpsInits()[0]).getOutputs()[0],
      dims.result, matrices, zero);
  Operation *product = clone(rewriter, first.getOperation(), {zeros.getType()},
                             {lhs, rhs, zeros});
  Value result = product->getResult(0);

  // The wider product's other columns: the same slices of its half, right
  // after the new product (their readers come after the later product).
  int64_t wideBase = wide == first ? 0 : firstMatrices;
  rewriter.setInsertionPointAfter(product);
  for (tensor::ExtractSliceOp slice : others) {
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    offsets[dims.result] =
        addOffset(rewriter, loc, offsets[dims.result], wideBase);
    Value moved = tensor::ExtractSliceOp::create(
        rewriter, slice.getLoc(), slice.getType(), result, offsets,
        slice.getMixedSizes(), slice.getMixedStrides());
    rewriter.replaceOp(slice, moved);
  }

  // Each read: the same part of its product's half, made right before the
  // generic that reads it.
  auto half = [&](ProductRead read, int64_t base) {
    SmallVector<OpFoldResult> offsets, sizes, strides;
    if (read.slice) {
      offsets = read.slice.getMixedOffsets();
      sizes = read.slice.getMixedSizes();
      strides = read.slice.getMixedStrides();
    } else {
      offsets.assign(type.getRank(), rewriter.getIndexAttr(0));
      sizes = tensor::getMixedSizes(rewriter, loc, read.operand->get());
      strides.assign(type.getRank(), rewriter.getIndexAttr(1));
    }
    offsets[dims.result] = addOffset(rewriter, loc, offsets[dims.result], base);
    auto sliceType = cast<RankedTensorType>(read.operand->get().getType());
    return tensor::ExtractSliceOp::create(rewriter, loc, sliceType, result,
                                          offsets, sizes, strides)
        .getResult();
  };
  for (const SummedPair &pair : pairs) {
    Operation *generic = pair.first.operand->getOwner();
    rewriter.setInsertionPoint(generic);
    Value firstHalf = half(pair.first, 0);
    Value secondHalf = half(pair.second, firstMatrices);
    rewriter.modifyOpInPlace(generic, [&] {
      pair.first.operand->set(firstHalf);
      pair.second.operand->set(secondHalf);
    });
  }
  eraseReplaced(rewriter, first, second, pairs);
}

struct ConcatSummedProductsPass
    : lstm::impl::ConcatSummedProductsPassBase<ConcatSummedProductsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (splitColumns)
      splitWiderProducts(getOperation());
    // The pairs of reads that generics add, by the two products they read:
    // the pairs of one pair of products may be in several generics (Cho's
    // GRU's forward diagonal adds the reset gate's in one, the update
    // gate's in the next).
    PairsByProducts summed;
    getOperation()->walk([&](linalg::GenericOp generic) {
      for (auto &[products, pairs] :
           findSummedPairs(generic, padColumns || (stackBatches && padStacks)))
        summed[products].append(pairs.begin(), pairs.end());
    });
    DominanceInfo dominance(getOperation());
    IRRewriter rewriter(&getContext());
    LeftParts parts;
    llvm::SetVector<Operation *> changed;
    llvm::SmallPtrSet<Operation *, 8> replaced;
    for (auto &[products, pairs] : summed) {
      auto first = cast<linalg::LinalgOp>(products.first);
      auto second = cast<linalg::LinalgOp>(products.second);
      // Each product combined once; both in one block, so that the
      // combined one can take the later one's place.
      if (replaced.contains(first) || replaced.contains(second) ||
          first->getBlock() != second->getBlock())
        continue;
      linalg::LinalgOp later = first->isBeforeInBlock(second) ? second : first;
      std::optional<SmallVector<tensor::ExtractSliceOp>> others =
          otherReads(first, second, pairs, later);
      if (!others)
        continue;
      bool sameWidth = first->getResultTypes() == second->getResultTypes();
      SmallVector<Operation *> readers;
      for (const SummedPair &pair : pairs)
        readers.push_back(pair.first.operand->getOwner());
      if (stackBatches && (sameWidth || padStacks) &&
          stackable(first, second, /*padded=*/!sameWidth))
        stack(rewriter, first, second, pairs, *others, dominance, parts);
      else if (sameWidth || padColumns)
        combine(rewriter, first, second, pairs, *others, dominance, parts);
      else
        continue;
      replaced.insert(first);
      replaced.insert(second);
      changed.insert(readers.begin(), readers.end());
    }
    if (changed.empty())
      return;
    // The generics read each product slice twice and no longer use the
    // second: upstream's patterns drop those operands.
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyOpPatternsGreedily(changed.getArrayRef(),
                                       std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
