//===- OperandSplits.cpp - Operands split into TF32 parts -----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "OperandSplits.h"

#include "lstm/Conversion/Utils/TF32.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

using namespace mlir;

namespace mlir::lstm::tf32 {

/// `value` with dimension `dim` (extent K) three times as long: parts
/// [0, K), [K, 2K) and [2K, 3K) hold the high part, but part `lowPart` the
/// low one. One linalg.generic writes the parts as a dimension of extent 3
/// before `dim`, which a collapse_shape (a view once bufferized) merges
/// into it.
Value splitOperand(OpBuilder &builder, Location loc, Value value, int64_t dim,
                   int64_t lowPart) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  MLIRContext *context = builder.getContext();

  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(builder, loc, value);
  sizes.insert(sizes.begin() + dim, builder.getIndexAttr(3));
  Value empty =
      tensor::EmptyOp::create(builder, loc, sizes, builder.getF32Type());
  SmallVector<AffineExpr> read;
  for (int64_t d = 0; d <= rank; ++d)
    if (d != dim)
      read.push_back(getAffineDimExpr(d, context));
  AffineMap readMap = AffineMap::get(rank + 1, 0, read, context);
  AffineMap writeMap = builder.getMultiDimIdentityMap(rank + 1);
  SmallVector<utils::IteratorType> parallel(rank + 1,
                                            utils::IteratorType::parallel);
  Value parts =
      linalg::GenericOp::create(
          builder, loc, empty.getType(), ValueRange{value}, ValueRange{empty},
          ArrayRef<AffineMap>{readMap, writeMap}, parallel,
          [&](OpBuilder &b, Location l, ValueRange args) {
            Value high = arith::BitcastOp::create(
                b, l, b.getF32Type(), lstm::roundToTF32(b, l, args[0]));
            Value low = arith::SubFOp::create(b, l, args[0], high);
            Value part = linalg::IndexOp::create(b, l, dim);
            Value isLow = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::eq, part,
                arith::ConstantIndexOp::create(b, l, lowPart));
            linalg::YieldOp::create(
                b, l,
                ValueRange{arith::SelectOp::create(b, l, isLow, low, high)});
          })
          .getResult(0);

  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d <= rank; ++d) {
    if (d == dim + 1)
      continue;
    groups.push_back(d == dim ? ReassociationIndices{d, d + 1}
                              : ReassociationIndices{d});
  }
  return tensor::CollapseShapeOp::create(builder, loc, parts, groups);
}

/// An uninitialised tensor of the type of `value`'s split along `dim`.
Value emptySplit(OpBuilder &b, Location loc, Value value, int64_t dim) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  AffineExpr d0 = getAffineDimExpr(0, b.getContext());
  sizes[dim] =
      affine::makeComposedFoldedAffineApply(b, loc, d0 * 3, {sizes[dim]});
  return tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
}

Value Splitter::split(OpBuilder &builder, Operation *product, Value value,
                      int64_t dim, int64_t lowPart, HoistGuard guard) {
  auto loop = product->getParentOfType<LoopLikeOpInterface>();
  bool hoist = loop && !loop->isAncestor(value.getParentBlock()->getParentOp());
  Location loc = product->getLoc();
  OpBuilder::InsertionGuard insertion(builder);
  Value used;
  if (hoist) {
    builder.setInsertionPointAfterValue(value);
    used = guard;
    // After the guard where the value is defined before it (a function
    // argument: both at the function's start).
    Operation *test = guard ? guard.getDefiningOp() : nullptr;
    Block::iterator at = builder.getInsertionPoint();
    if (test && test->getBlock() == builder.getInsertionBlock() &&
        at != builder.getInsertionBlock()->end() &&
        (&*at == test || at->isBeforeInBlock(test)))
      builder.setInsertionPointAfter(test);
  }
  if (used) {
    auto branch =
        scf::IfOp::create(builder, loc, TypeRange{splitType(value, dim)}, used,
                          /*addThenBlock=*/true, /*addElseBlock=*/true);
    OpBuilder then = branch.getThenBodyBuilder();
    scf::YieldOp::create(then, loc,
                         splitOperand(then, loc, value, dim, lowPart));
    OpBuilder otherwise = branch.getElseBodyBuilder();
    scf::YieldOp::create(otherwise, loc,
                         emptySplit(otherwise, loc, value, dim));
    return branch.getResult(0);
  }
  Block *block = hoist ? nullptr : builder.getInsertionBlock();
  Value &split = splits[{value, dim, lowPart, block}];
  if (!split)
    split = splitOperand(builder, loc, value, dim, lowPart);
  return split;
}

Type Splitter::splitType(Value value, int64_t dim) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> shape(type.getShape());
  if (!ShapedType::isDynamic(shape[dim]))
    shape[dim] *= 3;
  return RankedTensorType::get(shape, type.getElementType());
}

/// The terms [offset, offset + size) of `value` along dimension `dim`.
Value sliceAlong(OpBuilder &b, Location loc, Value value, int64_t dim,
                 OpFoldResult offset, OpFoldResult size) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  offsets[dim] = offset;
  sizes[dim] = size;
  return tensor::ExtractSliceOp::create(b, loc, value, offsets, sizes, strides);
}

/// The terms [at, at + size) of `value`, an operand of `op`, along
/// dimension `dim`: right after the operand's definition where that is
/// outside the loop around `op` (a weight), else at `b`'s insertion point.
Value sliceBeforeLoops(OpBuilder &b, linalg::LinalgOp op, Value value,
                       int64_t dim, int64_t at, int64_t size) {
  OpBuilder::InsertionGuard guard(b);
  auto loop = op->getParentOfType<LoopLikeOpInterface>();
  if (loop && !loop->isAncestor(value.getParentBlock()->getParentOp()))
    b.setInsertionPointAfterValue(value);
  return sliceAlong(b, op.getLoc(), value, dim, b.getIndexAttr(at),
                    b.getIndexAttr(size));
}

} // namespace mlir::lstm::tf32
