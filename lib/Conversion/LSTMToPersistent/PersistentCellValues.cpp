//===- PersistentCellValues.cpp - How a cell assembles and slices values --===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The tensor-level forms in which a cell builds and reads the values a
// persistent kernel computes element by element: concatenations of N-wide
// results assembled by insert_slices, column slices of [B, M] values, and
// elementwise ops that no lstm.pointwise holds.
//
//===----------------------------------------------------------------------===//

#include "PersistentCellValues.h"
#include "lstm/Utils/AssembledTensors.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// Whether `op` is an elementwise arith or math op on [B, W] f32 tensors,
/// all of one type, that no lstm.pointwise holds (lstm-fuse-elementwise
/// leaves a group of one op as it is).
bool mlir::lstm::persistent::isLoneElementwise(Operation *op) {
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
      !op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0 ||
      op->getNumResults() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || type.getRank() != 2 || !type.getElementType().isF32())
    return false;
  return llvm::all_of(op->getOperandTypes(),
                      [&](Type operand) { return operand == type; });
}

/// The concatenation `partial` if its pieces are N wide and cover its
/// columns, else nullopt.
std::optional<Concat>
mlir::lstm::persistent::completeConcat(const PartialConcat &partial,
                                       int64_t width) {
  if (width <= 0 || partial.width % width != 0 ||
      int64_t(partial.pieces.size()) != partial.width / width)
    return std::nullopt;
  Concat concat{partial.width, {}};
  int64_t next = 0;
  for (auto &[offset, piece] : partial.pieces) {
    if (offset != next)
      return std::nullopt;
    concat.pieces.push_back(piece);
    next += width;
  }
  return concat;
}

/// The concatenation that `insert` extends, or nullopt: a whole N-wide
/// pointwise result written at a static column into every row of a
/// partial concatenation.
std::optional<PartialConcat> mlir::lstm::persistent::extendConcat(
    tensor::InsertSliceOp insert, int64_t width,
    const DenseMap<Value, Computed> &computed,
    const DenseMap<Value, PartialConcat> &partials) {
  auto dest = partials.find(insert.getDest());
  auto piece = computed.find(insert.getSource());
  if (dest == partials.end() || piece == computed.end() ||
      insert.getSourceType().getRank() != 2 ||
      insert.getSourceType().getDimSize(1) != width)
    return std::nullopt;
  ArrayRef<int64_t> offsets = insert.getStaticOffsets();
  ArrayRef<int64_t> strides = insert.getStaticStrides();
  ArrayRef<int64_t> sizes = insert.getStaticSizes();
  if (offsets[0] != 0 || ShapedType::isDynamic(offsets[1]) || strides[0] != 1 ||
      strides[1] != 1 || sizes[1] != width || offsets[1] % width != 0)
    return std::nullopt;
  PartialConcat extended = dest->second;
  extended.pieces[offsets[1]] = piece->second;
  return extended;
}

/// The column offset and width of a slice [0, c] [B, w] [1, 1] of a
/// [B, M] value, or nullopt.
std::optional<std::pair<int64_t, int64_t>>
mlir::lstm::persistent::columnRange(tensor::ExtractSliceOp slice) {
  if (slice.getSourceType().getRank() != 2 || slice.getType().getRank() != 2)
    return std::nullopt;
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> strides = slice.getStaticStrides();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  if (offsets[0] != 0 || ShapedType::isDynamic(offsets[1]) || strides[0] != 1 ||
      strides[1] != 1 || ShapedType::isDynamic(sizes[1]))
    return std::nullopt;
  // A static source width, so that the verifier has checked c + width
  // against it; every row (the source's batch extent: the same static
  // extent, a tensor.dim of it, the size its assembly was made with, or
  // the batch of one of the cell's arguments, which every value the step
  // computes from them shares: a backward's slices of a 4N-wide value
  // sized by a state's rows).
  if (slice.getSourceType().isDynamicDim(1))
    return std::nullopt;
  OpFoldResult rows = slice.getMixedSizes()[0];
  auto dim = isa<Value>(rows) ? cast<Value>(rows).getDefiningOp<tensor::DimOp>()
                              : tensor::DimOp();
  bool cellBatch =
      dim && dim.getConstantIndex() == 0 &&
      isa<BlockArgument>(dim.getSource()) &&
      isa<LayerOp>(dim.getSource().getParentBlock()->getParentOp()) &&
      !isDefinedAboveLayer(
          slice.getSource(),
          cast<LayerOp>(dim.getSource().getParentBlock()->getParentOp()));
  if (!cellBatch && !isWholeExtent(rows, slice.getSource(), 0))
    return std::nullopt;
  return std::make_pair(offsets[1], sizes[1]);
}

/// The column offset of a slice [0, c] [B, width] [1, 1] of a [B, M] value,
/// or nullopt.
std::optional<int64_t>
mlir::lstm::persistent::columnSlice(tensor::ExtractSliceOp slice,
                                    int64_t width) {
  std::optional<std::pair<int64_t, int64_t>> range = columnRange(slice);
  if (!range || range->second != width)
    return std::nullopt;
  return range->first;
}

/// The concatenation that `slice` takes of a concatenation: whole rows,
/// columns of whole N-wide pieces (Cho's GRU's [dr dz] of dG = [dr dz dn]);
/// or nullopt.
std::optional<PartialConcat> mlir::lstm::persistent::sliceConcat(
    tensor::ExtractSliceOp slice, int64_t width,
    const DenseMap<Value, PartialConcat> &partials) {
  auto source = partials.find(slice.getSource());
  std::optional<std::pair<int64_t, int64_t>> range = columnRange(slice);
  if (source == partials.end() || !range || range->first % width != 0 ||
      range->second % width != 0)
    return std::nullopt;
  auto [begin, size] = *range;
  PartialConcat part{size, {}};
  for (const auto &[offset, piece] : source->second.pieces)
    if (offset >= begin && offset < begin + size)
      part.pieces[offset - begin] = piece;
  return part;
}
