//===- SummedProducts.cpp - Products that a generic adds ------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Finds the pairs of products that lstm-concat-summed-products combines
// (SummedProducts.h).
//
//===----------------------------------------------------------------------===//

#include "SummedProducts.h"

#include "lstm/Dialect/LSTM/Utils/Matmul.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::lstm::summed_products;

namespace {

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

} // namespace

std::optional<ReductionDims>
lstm::summed_products::summableProduct(linalg::LinalgOp op) {
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

std::optional<ColumnDims>
lstm::summed_products::columnDims(linalg::LinalgOp op) {
  std::optional<AffineExpr> n = onlyDimIndexedAs(op, {false, true, true});
  if (!n)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return ColumnDims{*maps[2].getResultPosition(*n),
                    *maps[1].getResultPosition(*n)};
}

std::optional<int64_t> lstm::summed_products::columnCount(linalg::LinalgOp op) {
  std::optional<ColumnDims> dims = columnDims(op);
  auto type = cast<RankedTensorType>(op->getResult(0).getType());
  if (!dims || type.isDynamicDim(dims->result))
    return std::nullopt;
  return type.getDimSize(dims->result);
}

std::optional<BatchDims> lstm::summed_products::batchDims(linalg::LinalgOp op) {
  std::optional<AffineExpr> l = onlyDimIndexedAs(op, {true, true, true});
  if (!l)
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  return BatchDims{*maps[0].getResultPosition(*l),
                   *maps[1].getResultPosition(*l),
                   *maps[2].getResultPosition(*l)};
}

bool lstm::summed_products::stackable(linalg::LinalgOp a, linalg::LinalgOp b,
                                      bool padded) {
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

PairsByProducts
lstm::summed_products::findSummedPairs(linalg::GenericOp generic,
                                       bool padColumns) {
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

std::optional<SmallVector<tensor::ExtractSliceOp>>
lstm::summed_products::otherReads(linalg::LinalgOp first,
                                  linalg::LinalgOp second,
                                  ArrayRef<SummedPair> pairs,
                                  Operation *point) {
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

bool lstm::summed_products::addedToWholeProduct(tensor::ExtractSliceOp slice,
                                                linalg::LinalgOp product,
                                                int64_t offset) {
  std::optional<ColumnDims> columns = columnDims(product);
  std::optional<int64_t> width = columnCount(product);
  auto type = cast<RankedTensorType>(product->getResult(0).getType());
  if (!columns || !width || *width <= offset || !slice->hasOneUse() ||
      slice.getType().getRank() != type.getRank() ||
      !coversDynamicExtents(slice, product))
    return false;
  // Offsets 0 and the whole extents but for the columns, which start at
  // `offset` and run to the last.
  for (int64_t i = 0, e = type.getRank(); i < e; ++i) {
    int64_t from = i == columns->result ? offset : 0;
    if (!isConstantIntValue(slice.getMixedOffsets()[i], from) ||
        !isConstantIntValue(slice.getMixedStrides()[i], 1) ||
        (!type.isDynamicDim(i) &&
         !isConstantIntValue(slice.getMixedSizes()[i],
                             type.getDimSize(i) - from)))
      return false;
  }
  OpOperand &use = *slice->getUses().begin();
  auto generic = dyn_cast<linalg::GenericOp>(use.getOwner());
  if (!generic || generic.getNumReductionLoops() != 0 ||
      !generic.isDpsInput(&use))
    return false;
  BlockArgument arg = generic.getMatchingBlockArgument(&use);
  if (!arg.hasOneUse())
    return false;
  auto sum = dyn_cast<arith::AddFOp>(*arg.getUsers().begin());
  if (!sum)
    return false;
  auto other = dyn_cast<BlockArgument>(sum.getLhs() == arg ? sum.getRhs()
                                                           : sum.getLhs());
  if (!other || other == arg || other.getOwner() != generic.getBody() ||
      !other.hasOneUse())
    return false;
  OpOperand *partner = generic.getMatchingOpOperand(other);
  if (!generic.isDpsInput(partner) || generic.getMatchingIndexingMap(partner) !=
                                          generic.getMatchingIndexingMap(&use))
    return false;
  std::optional<ProductRead> read = productRead(*partner);
  return read && !read->slice && read->product != product &&
         computeAlike(product, read->product) &&
         columnCount(read->product) == *width - offset;
}

OpBuilder::InsertPoint lstm::summed_products::after(Value v) {
  if (Operation *def = v.getDefiningOp())
    return OpBuilder::InsertPoint(def->getBlock(),
                                  std::next(def->getIterator()));
  Block *block = cast<BlockArgument>(v).getOwner();
  return OpBuilder::InsertPoint(block, block->begin());
}

Value lstm::summed_products::zerosLike(OpBuilder &b, Location loc, Value shape,
                                       int64_t dim, int64_t size, Value zero) {
  auto empty = shape.getDefiningOp<tensor::EmptyOp>();
  SmallVector<OpFoldResult> sizes =
      empty ? empty.getMixedSizes() : tensor::getMixedSizes(b, loc, shape);
  sizes[dim] = b.getIndexAttr(size);
  Value init = tensor::EmptyOp::create(
      b, loc, sizes, cast<RankedTensorType>(shape.getType()).getElementType());
  return linalg::FillOp::create(b, loc, zero, init).getResult(0);
}
