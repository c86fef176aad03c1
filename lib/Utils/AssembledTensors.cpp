//===- AssembledTensors.cpp - Tensors built from column pieces ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Utils/AssembledTensors.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;
using namespace mlir::lstm;

std::optional<int64_t> lstm::getColumnWidth(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() == 0 || type.isDynamicDim(type.getRank() - 1))
    return std::nullopt;
  return type.getDimSize(type.getRank() - 1);
}

bool lstm::isWholeExtent(OpFoldResult size, Value v, int64_t d) {
  auto type = cast<RankedTensorType>(v.getType());
  if (!type.isDynamicDim(d))
    return isConstantIntValue(size, type.getDimSize(d));
  if (auto value = dyn_cast<Value>(size))
    if (auto dim = value.getDefiningOp<tensor::DimOp>();
        dim && dim.getSource() == v && dim.getConstantIndex() == d)
      return true;
  while (auto insert = v.getDefiningOp<tensor::InsertSliceOp>())
    v = insert.getDest();
  auto empty = v.getDefiningOp<tensor::EmptyOp>();
  return empty &&
         isEqualConstantIntOrValue(size, OpFoldResult(empty.getDynamicSize(d)));
}

/// The column at which `insert` puts its source, if it takes every other
/// dimension whole.
static std::optional<int64_t> insertedColumn(tensor::InsertSliceOp insert) {
  int64_t rank = insert.getDestType().getRank();
  if (!insert.hasUnitStride() || insert.getSourceType().getRank() != rank)
    return std::nullopt;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (!isConstantIntValue(insert.getMixedOffsets()[d], 0) ||
        !isWholeExtent(insert.getMixedSizes()[d], insert.getDest(), d))
      return std::nullopt;
  return getConstantIntValue(insert.getMixedOffsets()[rank - 1]);
}

std::optional<SmallVector<ColumnPiece>> lstm::getColumnPieces(Value v) {
  std::optional<int64_t> width = getColumnWidth(v);
  if (!width)
    return std::nullopt;
  SmallVector<ColumnPiece> pieces;
  Value dest = v;
  while (auto insert = dest.getDefiningOp<tensor::InsertSliceOp>()) {
    std::optional<int64_t> pieceWidth = getColumnWidth(insert.getSource());
    std::optional<int64_t> column = insertedColumn(insert);
    if (!pieceWidth || !column)
      break;
    pieces.push_back({insert.getSource(), *column, *pieceWidth});
    dest = insert.getDest();
  }
  if (!dest.getDefiningOp<tensor::EmptyOp>())
    pieces.push_back({dest, 0, *width});
  llvm::sort(pieces, [](const ColumnPiece &a, const ColumnPiece &b) {
    return a.offset < b.offset;
  });
  for (size_t i = 1; i < pieces.size(); ++i)
    if (pieces[i - 1].offset + pieces[i - 1].width > pieces[i].offset)
      return std::nullopt;
  return pieces;
}

bool lstm::coverColumns(ArrayRef<ColumnPiece> pieces, int64_t width) {
  int64_t next = 0;
  for (const ColumnPiece &piece : pieces) {
    if (piece.offset != next)
      return false;
    next += piece.width;
  }
  return next == width;
}

/// The column at which `part` is a `tensor.extract_slice` of `whole` that
/// takes every other dimension whole.
static std::optional<int64_t> extractedColumn(Value part, Value whole) {
  auto slice = part.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || slice.getSource() != whole || !slice.hasUnitStride())
    return std::nullopt;
  int64_t rank = slice.getSourceType().getRank();
  if (slice.getResultType().getRank() != rank)
    return std::nullopt;
  for (int64_t d = 0; d + 1 < rank; ++d)
    if (!isConstantIntValue(slice.getMixedOffsets()[d], 0) ||
        !isWholeExtent(slice.getMixedSizes()[d], whole, d))
      return std::nullopt;
  return getConstantIntValue(slice.getMixedOffsets()[rank - 1]);
}

std::optional<int64_t> lstm::getSliceColumn(Value part, Value whole) {
  if (std::optional<int64_t> column = extractedColumn(part, whole))
    return column;
  std::optional<SmallVector<ColumnPiece>> partPieces = getColumnPieces(part);
  std::optional<SmallVector<ColumnPiece>> wholePieces = getColumnPieces(whole);
  if (!partPieces || !wholePieces || partPieces->empty() ||
      !coverColumns(*partPieces, *getColumnWidth(part)))
    return std::nullopt;
  const ColumnPiece &first = partPieces->front();
  for (const ColumnPiece &candidate : *wholePieces) {
    if (candidate.value != first.value || candidate.width != first.width)
      continue;
    int64_t column = candidate.offset - first.offset;
    bool all = llvm::all_of(*partPieces, [&](const ColumnPiece &piece) {
      return llvm::any_of(*wholePieces, [&](const ColumnPiece &w) {
        return w.value == piece.value && w.width == piece.width &&
               w.offset == column + piece.offset;
      });
    });
    if (all)
      return column;
  }
  return std::nullopt;
}
