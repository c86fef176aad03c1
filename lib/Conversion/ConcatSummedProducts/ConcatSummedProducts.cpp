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

namespace {

/// Where a contraction's inputs are reduced: the position, in each input's
/// indexing map, of its only reduction dimension.
struct ReductionDims {
  int64_t lhs, rhs;
};

/// The positions of the reduction dimension in the inputs of `op` if it is
/// a product this pass combines: a contraction on tensors of two inputs into
/// a zero-filled init, with one reduction dimension that both inputs index
/// directly (and the result not).
std::optional<ReductionDims> summableProduct(linalg::LinalgOp op) {
  if (!op || !op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      !linalg::isaContractionOpInterface(op) ||
      !lstm::getZeroFill(op.getDpsInits()[0]) || op.getNumReductionLoops() != 1)
    return std::nullopt;
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  AffineExpr k = getAffineDimExpr(reductions.front(), op.getContext());
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::optional<unsigned> lhs = maps[0].getResultPosition(k);
  std::optional<unsigned> rhs = maps[1].getResultPosition(k);
  if (!lhs || !rhs || maps[2].getResultPosition(k))
    return std::nullopt;
  return ReductionDims{*lhs, *rhs};
}

/// The only loop dimension of the contraction `op` that its left-hand
/// input, right-hand input and result each index or not as `indexed` says
/// (as a plain dimension of its indexing map), if there is exactly one.
std::optional<AffineExpr> onlyDimIndexedAs(linalg::LinalgOp op,
                                           std::array<bool, 3> indexed) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  std::optional<AffineExpr> found;
  for (unsigned d = 0, e = op.getNumLoops(); d < e; ++d) {
    AffineExpr dim = getAffineDimExpr(d, op.getContext());
    if (llvm::any_of(llvm::seq(0, 3), [&](int i) {
          return maps[i].getResultPosition(dim).has_value() != indexed[i];
        }))
      continue;
    if (found)
      return std::nullopt;
    found = dim;
  }
  return found;
}

/// Where a contraction's output columns are: the position, in the result
/// and in the right-hand input, of its only dimension that the right-hand
/// input and the result index and the left-hand input does not (`n` of
/// `[m, k] · [n, k]ᵀ`).
struct ColumnDims {
  int64_t result, rhs;
};

std::optional<ColumnDims> columnDims(linalg::LinalgOp op) {
  std::optional<AffineExpr> n = onlyDimIndexedAs(op, {false, true, true});
  if (!n)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return ColumnDims{*maps[2].getResultPosition(*n),
                    *maps[1].getResultPosition(*n)};
}

/// The static number of columns of `op`'s result, if it has one.
std::optional<int64_t> columnCount(linalg::LinalgOp op) {
  std::optional<ColumnDims> dims = columnDims(op);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!dims || type.isDynamicDim(dims->result))
    return std::nullopt;
  return type.getDimSize(dims->result);
}

/// Where a contraction's matrices are batched: the position, in each input
/// and in the result, of its only loop dimension that all three index (`l`
/// of `[l, m, k] · [l, n, k]ᵀ`).
struct BatchDims {
  int64_t lhs, rhs, result;
};

std::optional<BatchDims> batchDims(linalg::LinalgOp op) {
  std::optional<AffineExpr> l = onlyDimIndexedAs(op, {true, true, true});
  if (!l)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return BatchDims{*maps[0].getResultPosition(*l),
                   *maps[1].getResultPosition(*l),
                   *maps[2].getResultPosition(*l)};
}

/// Whether two products that compute alike (computeAlike) can run as one
/// batch of both's matrices: batched, with static batch extents, and
/// operands and results of equal extents but for the batch's (the rows'
/// may be dynamic: the generic that adds the results makes them equal) and,
/// with `padded`, for the weights' and the results' columns.
bool stackable(linalg::LinalgOp a, linalg::LinalgOp b, bool padded) {
  std::optional<BatchDims> dims = batchDims(a);
  if (!dims)
    return false;
  // With `padded`, the weights' and the results' columns may differ (the
  // narrower product's weights get zero rows).
  std::optional<ColumnDims> columns = columnDims(a);
  if (padded && !columns)
    return false;
  auto equalBesides = [](Value x, Value y, int64_t batch,
                         std::optional<int64_t> free) {
    auto tx = cast<RankedTensorType>(x.getType());
    auto ty = cast<RankedTensorType>(y.getType());
    if (tx.getRank() != ty.getRank() || tx.isDynamicDim(batch) ||
        ty.isDynamicDim(batch))
      return false;
    for (int64_t i = 0, e = tx.getRank(); i < e; ++i)
      if (i != batch && i != free && tx.getDimSize(i) != ty.getDimSize(i))
        return false;
    return true;
  };
  // The depth static: two dynamic ones could differ.
  int64_t depth = summableProduct(a)->lhs;
  if (cast<RankedTensorType>(a.getDpsInputs()[0].getType()).isDynamicDim(depth))
    return false;
  std::optional<int64_t> rhsColumns, resultColumns;
  if (padded) {
    rhsColumns = columns->rhs;
    resultColumns = columns->result;
  }
  return equalBesides(a.getDpsInputs()[0], b.getDpsInputs()[0], dims->lhs,
                      std::nullopt) &&
         equalBesides(a.getDpsInputs()[1], b.getDpsInputs()[1], dims->rhs,
                      rhsColumns) &&
         equalBesides(a->getResult(0), b->getResult(0), dims->result,
                      resultColumns);
}

/// Whether `a` and `b` compute alike: the same op with the same attributes
/// (indexing maps, iterators) and body, operands of the same ranks and
/// element types and results of one type but, where both are static, for
/// the number of columns. The depths of their reductions may differ; a
/// product with fewer columns takes zero weights for the others.
bool computeAlike(linalg::LinalgOp a, linalg::LinalgOp b) {
  if (a->getName() != b->getName() ||
      a->getAttrDictionary() != b->getAttrDictionary() ||
      a->getNumRegions() != b->getNumRegions())
    return false;
  if (a->getResultTypes() != b->getResultTypes()) {
    std::optional<ColumnDims> dims = columnDims(a);
    if (!dims || !columnCount(a) || !columnCount(b))
      return false;
    auto ta = cast<RankedTensorType>(a->getResult(0).getType());
    auto tb = cast<RankedTensorType>(b->getResult(0).getType());
    if (ta.getElementType() != tb.getElementType() ||
        ta.getRank() != tb.getRank())
      return false;
    for (int64_t i = 0, e = ta.getRank(); i < e; ++i)
      if (i != dims->result && ta.getDimSize(i) != tb.getDimSize(i))
        return false;
  }
  for (auto [x, y] : llvm::zip(a->getOperandTypes(), b->getOperandTypes())) {
    auto tx = cast<RankedTensorType>(x), ty = cast<RankedTensorType>(y);
    if (tx.getRank() != ty.getRank() ||
        tx.getElementType() != ty.getElementType())
      return false;
  }
  for (auto [ra, rb] : llvm::zip(a->getRegions(), b->getRegions()))
    if (!OperationEquivalence::isRegionEquivalentTo(
            &ra, &rb, OperationEquivalence::IgnoreLocations))
      return false;
  return true;
}

/// A generic's operand that reads a product: the product itself or a slice
/// of it (whose only use is the operand).
struct ProductRead {
  OpOperand *operand;
  linalg::LinalgOp product;
  tensor::ExtractSliceOp slice;
};

/// Whether `slice` of `product` takes all of each of its dynamic extents
/// (offset 0, stride 1 and the extent of the empty tensor the product's
/// zeros fill). Two such slices that one generic reads alike make the two
/// products' dynamic extents equal, and so their operands' (but for the
/// reduction): what the concatenation assumes.
bool coversDynamicExtents(tensor::ExtractSliceOp slice,
                          linalg::LinalgOp product) {
  auto type = cast<RankedTensorType>(product->getResult(0).getType());
  auto empty = lstm::getZeroFill(product.getDpsInits()[0])
                   .getOutputs()[0]
                   .getDefiningOp<tensor::EmptyOp>();
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    if (!type.isDynamicDim(i))
      continue;
    if (!empty || !isConstantIntValue(slice.getMixedOffsets()[i], 0) ||
        !isConstantIntValue(slice.getMixedStrides()[i], 1) ||
        !isEqualConstantIntOrValue(slice.getMixedSizes()[i],
                                   empty.getMixedSizes()[i]))
      return false;
  }
  return true;
}

std::optional<ProductRead> productRead(OpOperand &operand) {
  Value v = operand.get();
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (slice && !slice->hasOneUse())
    return std::nullopt;
  auto product =
      (slice ? slice.getSource() : v).getDefiningOp<linalg::LinalgOp>();
  if (!product || !summableProduct(product) ||
      (slice && !coversDynamicExtents(slice, product)))
    return std::nullopt;
  return ProductRead{&operand, product, slice};
}

/// Whether two reads that one generic reads through one indexing map take
/// the same part of their products. Their extents need not be compared: the
/// generic's iteration domain makes them equal (its run-time checks stop a
/// program where they are not).
bool sameView(ProductRead a, ProductRead b) {
  if (!a.slice || !b.slice)
    return !a.slice && !b.slice;
  return a.slice.getType() == b.slice.getType() &&
         a.slice.getDroppedDims() == b.slice.getDroppedDims() &&
         isEqualConstantIntOrValueArray(a.slice.getMixedOffsets(),
                                        b.slice.getMixedOffsets()) &&
         isEqualConstantIntOrValueArray(a.slice.getMixedStrides(),
                                        b.slice.getMixedStrides());
}

/// Two reads of one generic that its body only adds together.
struct SummedPair {
  ProductRead first, second;
  arith::AddFOp sum;
};

/// The products a generic sums pairwise: for each pair of products, the
/// additions of their reads.
using PairsByProducts = llvm::MapVector<std::pair<Operation *, Operation *>,
                                        SmallVector<SummedPair>>;

PairsByProducts findSummedPairs(linalg::GenericOp generic, bool padColumns) {
  PairsByProducts pairs;
  if (generic.getNumReductionLoops() != 0)
    return pairs;
  Block *body = generic.getBody();
  for (auto sum : body->getOps<arith::AddFOp>()) {
    auto lhs = dyn_cast<BlockArgument>(sum.getLhs());
    auto rhs = dyn_cast<BlockArgument>(sum.getRhs());
    if (!lhs || !rhs || lhs == rhs || lhs.getOwner() != body ||
        rhs.getOwner() != body || !lhs.hasOneUse() || !rhs.hasOneUse())
      continue;
    OpOperand *a = generic.getMatchingOpOperand(lhs);
    OpOperand *b = generic.getMatchingOpOperand(rhs);
    if (!generic.isDpsInput(a) || !generic.isDpsInput(b) ||
        generic.getMatchingIndexingMap(a) != generic.getMatchingIndexingMap(b))
      continue;
    std::optional<ProductRead> ra = productRead(*a), rb = productRead(*b);
    if (!ra || !rb || ra->product == rb->product || !sameView(*ra, *rb) ||
        !computeAlike(ra->product, rb->product) ||
        (!padColumns &&
         ra->product->getResultTypes() != rb->product->getResultTypes()))
      continue;
    // One orientation per pair of products.
    if (rb->product->isBeforeInBlock(ra->product) &&
        ra->product->getBlock() == rb->product->getBlock())
      std::swap(ra, rb);
    pairs[{ra->product, rb->product}].push_back({*ra, *rb, sum});
  }
  return pairs;
}

/// The other reads of the product with more columns, if the pairs read
/// everything else the two products are read for: every use of either is a
/// read in `pairs` or a tensor.dim, or a slice of the wider product's
/// columns that the narrower has none of (where the combined product adds
/// zeros to them), in `point`'s block and read only after `point`. None
/// otherwise.
std::optional<SmallVector<tensor::ExtractSliceOp>>
otherReads(linalg::LinalgOp first, linalg::LinalgOp second,
           ArrayRef<SummedPair> pairs, Operation *point) {
  llvm::SmallPtrSet<Operation *, 8> reads;
  llvm::SmallPtrSet<OpOperand *, 8> directReads;
  for (const SummedPair &pair : pairs)
    for (const ProductRead &read : {pair.first, pair.second}) {
      if (read.slice)
        reads.insert(read.slice);
      else
        directReads.insert(read.operand);
    }
  int64_t narrow =
      std::min(columnCount(first).value_or(0), columnCount(second).value_or(0));
  SmallVector<tensor::ExtractSliceOp> others;
  for (linalg::LinalgOp product : {first, second})
    for (OpOperand &use : product->getResult(0).getUses()) {
      Operation *user = use.getOwner();
      if (isa<tensor::DimOp>(user) || reads.contains(user) ||
          directReads.contains(&use))
        continue;
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      std::optional<ColumnDims> dims = columnDims(product);
      if (!slice || !dims || columnCount(product) <= narrow ||
          slice->getBlock() != point->getBlock() ||
          llvm::any_of(slice->getUsers(), [&](Operation *reader) {
            Operation *op = point->getBlock()->findAncestorOpInBlock(*reader);
            return !op || !point->isBeforeInBlock(op);
          }))
        return std::nullopt;
      std::optional<int64_t> offset =
          getConstantIntValue(slice.getMixedOffsets()[dims->result]);
      if (!offset || *offset < narrow ||
          !isConstantIntValue(slice.getMixedStrides()[dims->result], 1))
        return std::nullopt;
      others.push_back(slice);
    }
  return others;
}

/// Where a value computed from both `a` and `b` can go as early as possible:
/// right after the later of their definitions, if one's block contains or
/// is the other's. Null if neither dominates the other's definition.
/// Right after `v` is defined (at its block's start for an argument).
OpBuilder::InsertPoint after(Value v) {
  if (Operation *def = v.getDefiningOp())
    return OpBuilder::InsertPoint(def->getBlock(),
                                  std::next(def->getIterator()));
  Block *block = cast<BlockArgument>(v).getOwner();
  return OpBuilder::InsertPoint(block, block->begin());
}

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

/// `[a b]` along dimension `dim` (the other extents are `a`'s). Where `a`
/// was built in an empty tensor (a wavefront's gather of the layers'
/// inputs), it is built in the concatenation's slice instead, and only `b`
/// is copied in.
Value concatenate(RewriterBase &rewriter, Location loc, Value a, Value b,
                  int64_t dim) {
  auto type = cast<RankedTensorType>(a.getType());
  // A gather built in a tensor.empty (nothing else reading it on the way):
  // its empty tensor becomes the concatenation's left half.
  OpOperand *root = lstm::getUndefinedRoot(a, /*singleUse=*/true);
  if (root && !root->get().getDefiningOp<tensor::EmptyOp>())
    root = nullptr;
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
  if (ka && kb) {
    sizes[dim] = rewriter.getIndexAttr(*ka + *kb);
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
  if (root) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(root->getOwner());
    empty =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
    Value slice = tensor::ExtractSliceOp::create(rewriter, loc, type, empty,
                                                 offsets, partSizes, strides);
    rewriter.modifyOpInPlace(root->getOwner(), [&] { root->set(slice); });
  } else {
    empty =
        tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  }
  Value withA = tensor::InsertSliceOp::create(rewriter, loc, a, empty, offsets,
                                              partSizes, strides);
  offsets[dim] = partSizes[dim];
  partSizes[dim] = depthB;
  return tensor::InsertSliceOp::create(rewriter, loc, b, withA, offsets,
                                       partSizes, strides);
}

/// The concatenation of `a` and `b` along `dim`, placed right after both are
/// defined (before `user` where that is not possible).
Value concatenateEarly(RewriterBase &rewriter, Value a, Value b, int64_t dim,
                       Operation *user, DominanceInfo &dominance) {
  OpBuilder::InsertionGuard guard(rewriter);
  std::optional<OpBuilder::InsertPoint> point = afterBoth(a, b, dominance);
  if (point)
    rewriter.restoreInsertionPoint(*point);
  else
    rewriter.setInsertionPoint(user);
  return concatenate(rewriter, user->getLoc(), a, b, dim);
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
             ArrayRef<tensor::ExtractSliceOp> others,
             DominanceInfo &dominance) {
  ReductionDims dims = *summableProduct(first);
  // The new product goes where the later of the two was.
  linalg::LinalgOp later = first->isBeforeInBlock(second) ? second : first;
  // It computes the columns of the wider one: the narrower one's weights
  // get zeros for the others.
  auto [wide, firstWeights, secondWeights] =
      weightsOfWider(rewriter, first, second);
  Value lhs =
      concatenateEarly(rewriter, first.getDpsInputs()[0],
                       second.getDpsInputs()[0], dims.lhs, later, dominance);
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
           ArrayRef<tensor::ExtractSliceOp> others, DominanceInfo &dominance) {
  BatchDims dims = *batchDims(first);
  linalg::LinalgOp later = first->isBeforeInBlock(second) ? second : first;
  auto [wide, firstWeights, secondWeights] =
      weightsOfWider(rewriter, first, second);
  Value lhs =
      concatenateEarly(rewriter, first.getDpsInputs()[0],
                       second.getDpsInputs()[0], dims.lhs, later, dominance);
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
  Value wideInit = lstm::getZeroFill(wide.getDpsInits()[0]).getOutputs()[0];
  auto wideEmpty = wideInit.getDefiningOp<tensor::EmptyOp>();
  SmallVector<OpFoldResult> sizes =
      wideEmpty ? wideEmpty.getMixedSizes()
                : tensor::getMixedSizes(rewriter, loc, wideInit);
  sizes[dims.result] = rewriter.getIndexAttr(matrices);
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  Value zero = arith::ConstantOp::create(
      rewriter, loc, rewriter.getZeroAttr(type.getElementType()));
  Value zeros = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
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
        stack(rewriter, first, second, pairs, *others, dominance);
      else if (sameWidth || padColumns)
        combine(rewriter, first, second, pairs, *others, dominance);
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
