//===- SplitOperands.cpp - The slices of a split product's operands -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "SplitOperands.h"

#include "lstm/Conversion/Utils/GenericOutputs.h"
#include "lstm/Utils/AssembledTensors.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace mlir::lstm::split_gemms {

Value SliceTransposer::transpose(RewriterBase &rewriter, Value value,
                                 int64_t splits, bool afterDefinition) {
  // Only a transposition placed after the definition dominates every
  // product that reads the value.
  if (afterDefinition)
    if (Value cached = cache.lookup({value, splits}))
      return cached;
  OpBuilder::InsertionGuard guard(rewriter);
  if (afterDefinition)
    rewriter.setInsertionPointAfterValue(value);
  Location loc = value.getLoc();
  auto type = cast<RankedTensorType>(value.getType());
  int64_t groups = type.getDimSize(0), depth = type.getDimSize(2);
  int64_t slice = depth / splits;
  OpFoldResult rows = tensor::getMixedSize(rewriter, loc, value, 1);
  // [L, R, S, K/S] -> [L, S, R, K/S] -> [L·S, R, K/S].
  SmallVector<OpFoldResult> expandedSizes = {
      rewriter.getIndexAttr(groups), rows, rewriter.getIndexAttr(splits),
      rewriter.getIndexAttr(slice)};
  auto expandedType = RankedTensorType::get(
      {groups, type.getDimSize(1), splits, slice}, type.getElementType());
  Value expanded = tensor::ExpandShapeOp::create(
      rewriter, loc, expandedType, value,
      ArrayRef<ReassociationIndices>{{0}, {1}, {2, 3}}, expandedSizes);
  SmallVector<OpFoldResult> transposedSizes = {
      rewriter.getIndexAttr(groups), rewriter.getIndexAttr(splits), rows,
      rewriter.getIndexAttr(slice)};
  Value empty = tensor::EmptyOp::create(rewriter, loc, transposedSizes,
                                        type.getElementType());
  Value transposed = linalg::TransposeOp::create(rewriter, loc, expanded, empty,
                                                 ArrayRef<int64_t>{0, 2, 1, 3})
                         .getResult()[0];
  Value slices = tensor::CollapseShapeOp::create(
      rewriter, loc, transposed,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
  if (afterDefinition)
    cache[{value, splits}] = slices;
  return slices;
}

std::optional<PieceResults> piecesOfGenerics(Value x, int64_t maxPieces) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t depth = type.getDimSize(2);
  std::optional<SmallVector<lstm::ColumnPiece>> pieces =
      lstm::getColumnPieces(x);
  if (!pieces || pieces->size() < 2 ||
      static_cast<int64_t>(pieces->size()) > maxPieces ||
      !lstm::coverColumns(*pieces, depth))
    return std::nullopt;
  int64_t width = pieces->front().width;
  // cuBLAS wants each slice 16-byte aligned.
  if (width % 4 != 0)
    return std::nullopt;
  auto pieceType = RankedTensorType::get(
      {type.getDimSize(0), type.getDimSize(1), width}, type.getElementType());
  PieceResults results;
  for (const lstm::ColumnPiece &piece : *pieces) {
    auto result = dyn_cast<OpResult>(piece.value);
    auto owner =
        result ? dyn_cast<linalg::GenericOp>(result.getOwner()) : nullptr;
    if (!owner || piece.width != width || piece.value.getType() != pieceType ||
        (!results.empty() &&
         owner->getBlock() != results.front().first->getBlock()))
      return std::nullopt;
    results.push_back({owner, result.getResultNumber()});
  }
  return results;
}

Value slicesFromPieces(RewriterBase &rewriter, Value x, PieceResults pieces) {
  OpBuilder::InsertionGuard guard(rewriter);
  auto type = cast<RankedTensorType>(x.getType());
  int64_t groups = type.getDimSize(0), splits = pieces.size();
  int64_t width = type.getDimSize(2) / splits;
  auto [first, firstResult] = pieces.front();
  for (auto [generic, result] : pieces)
    if (generic->isBeforeInBlock(first))
      std::tie(first, firstResult) = std::make_pair(generic, result);
  Location loc = first.getLoc();
  rewriter.setInsertionPoint(first);
  // The rows as the first generic's piece has them (made before it).
  OpFoldResult rows =
      tensor::getMixedSize(rewriter, loc, first.getDpsInits()[firstResult], 1);
  SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(groups),
                                     rewriter.getIndexAttr(splits), rows,
                                     rewriter.getIndexAttr(width)};
  Value slices =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  auto sliceOf = [&](int64_t s) {
    SmallVector<OpFoldResult> offsets(4, rewriter.getIndexAttr(0));
    offsets[1] = rewriter.getIndexAttr(s);
    SmallVector<OpFoldResult> pieceSizes = sizes;
    pieceSizes[1] = rewriter.getIndexAttr(1);
    SmallVector<OpFoldResult> strides(4, rewriter.getIndexAttr(1));
    return std::make_tuple(offsets, pieceSizes, strides);
  };
  SmallVector<Value> slots;
  for (int64_t s = 0; s < splits; ++s) {
    auto [offsets, pieceSizes, strides] = sliceOf(s);
    slots.push_back(tensor::ExtractSliceOp::create(
        rewriter, loc,
        cast<RankedTensorType>(
            pieces[s].first->getResultTypes()[pieces[s].second]),
        slices, offsets, pieceSizes, strides));
  }
  // Each addition replaces a generic by one with one more result, its
  // last: the piece's second copy.
  SmallVector<unsigned> copies;
  for (int64_t s = 0; s < splits; ++s) {
    auto [generic, result] = pieces[s];
    Value copy = lstm::addGenericOutput(rewriter, generic, result, slots[s]);
    auto wider = copy.getDefiningOp<linalg::GenericOp>();
    for (auto &piece : pieces)
      if (piece.first == generic)
        piece.first = wider;
    copies.push_back(cast<OpResult>(copy).getResultNumber());
  }
  // Each piece inserted where it was computed, after the last generic:
  // copies of slices onto themselves, which bufferization drops.
  linalg::GenericOp last = pieces.front().first;
  for (auto [generic, result] : pieces)
    if (last->isBeforeInBlock(generic))
      last = generic;
  rewriter.setInsertionPointAfter(last);
  for (int64_t s = 0; s < splits; ++s) {
    auto [offsets, pieceSizes, strides] = sliceOf(s);
    slices = tensor::InsertSliceOp::create(
        rewriter, loc, pieces[s].first->getResult(copies[s]), slices, offsets,
        pieceSizes, strides);
  }
  return tensor::CollapseShapeOp::create(
      rewriter, loc, slices, ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
}

linalg::GenericOp elementwiseProducer(Value x) {
  auto producer = x.getDefiningOp<linalg::GenericOp>();
  if (!producer || !producer.hasPureTensorSemantics() ||
      producer.getNumParallelLoops() != producer.getNumLoops() ||
      !producer.getIndexingMapMatchingResult(cast<OpResult>(x))
           .isPermutation() ||
      !producer.getBody()->getOps<linalg::IndexOp>().empty())
    return nullptr;
  return producer;
}

linalg::GenericOp slicingGeneric(RewriterBase &rewriter, Value x,
                                 int64_t splits) {
  OpBuilder::InsertionGuard guard(rewriter);
  auto producer = x.getDefiningOp<linalg::GenericOp>();
  rewriter.setInsertionPointAfter(producer);
  Location loc = x.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  auto type = cast<RankedTensorType>(x.getType());
  int64_t groups = type.getDimSize(0), slice = type.getDimSize(2) / splits;
  // The rows as the producer's output has them: a use of `x` would keep
  // that result alive once fused.
  OpFoldResult rows = tensor::getMixedSize(
      rewriter, loc,
      producer.getDpsInits()[cast<OpResult>(x).getResultNumber()], 1);
  SmallVector<OpFoldResult> sizes = {rewriter.getIndexAttr(groups),
                                     rewriter.getIndexAttr(splits), rows,
                                     rewriter.getIndexAttr(slice)};
  Value empty =
      tensor::EmptyOp::create(rewriter, loc, sizes, type.getElementType());
  AffineExpr l, s, r, j;
  bindDims(ctx, l, s, r, j);
  SmallVector<AffineMap> maps = {
      AffineMap::get(4, 0, {l, r, s * slice + j}, ctx),
      AffineMap::getMultiDimIdentityMap(4, ctx)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
      rewriter, loc, empty.getType(), ValueRange{x}, ValueRange{empty}, maps,
      iterators, [](OpBuilder &nb, Location nl, ValueRange args) {
        linalg::YieldOp::create(nb, nl, args[0]);
      });
}

} // namespace mlir::lstm::split_gemms
