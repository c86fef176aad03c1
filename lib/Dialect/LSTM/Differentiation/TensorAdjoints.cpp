//===- TensorAdjoints.cpp - Derivatives of slicing, stacking, reshaping ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Networks cut their stacked parameters into per-gate blocks
// (tensor.extract_slice), stack per-layer states (tensor.insert_slice,
// tensor.concat), concatenate the directions of a bidirectional layer, and
// reshape; cells slice the columns of a combined GEMM. These ops move values
// without arithmetic, so their adjoints move cotangents back the same way.
//
//===----------------------------------------------------------------------===//

#include "AdjointUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

/// The forward values of `ofrs` where the adjoint is built.
FailureOr<SmallVector<OpFoldResult>> primals(AdjointContext &ctx,
                                             ArrayRef<OpFoldResult> ofrs) {
  SmallVector<OpFoldResult> result;
  for (OpFoldResult ofr : ofrs) {
    if (auto v = dyn_cast<Value>(ofr)) {
      FailureOr<Value> p = ctx.getPrimal(v);
      if (failed(p))
        return failure();
      result.push_back(*p);
    } else {
      result.push_back(ofr);
    }
  }
  return result;
}

LogicalResult adjoint(tensor::ExtractSliceOp op, AdjointContext &ctx) {
  Value d = ctx.getCotangent(op.getResult());
  if (!d || !ctx.isActive(op.getSource()))
    return success();
  return ctx.addSliceCotangent(op.getSource(), d, op.getMixedOffsets(),
                               op.getMixedSizes(), op.getMixedStrides());
}

LogicalResult adjoint(tensor::InsertSliceOp op, AdjointContext &ctx) {
  Value d = ctx.getCotangent(op.getResult());
  if (!d)
    return success();
  OpBuilder &b = ctx.getBuilder();
  Location loc = op.getLoc();
  auto offsets = primals(ctx, op.getMixedOffsets());
  auto sizes = primals(ctx, op.getMixedSizes());
  auto strides = primals(ctx, op.getMixedStrides());
  if (failed(offsets) || failed(sizes) || failed(strides))
    return failure();
  // The inserted part, read back with the source's (maybe rank-reduced)
  // type.
  Value part = tensor::ExtractSliceOp::create(b, loc, op.getSourceType(), d,
                                              *offsets, *sizes, *strides);
  if (ctx.isActive(op.getSource()) &&
      failed(ctx.addCotangent(op.getSource(), part)))
    return failure();
  if (ctx.isActive(op.getDest())) {
    // The destination's cotangent is the result's with the overwritten part
    // cleared. (The zeros take their shape from the part, not from the
    // forward source, which the backward would otherwise have to keep.)
    SmallVector<Value> dynamicSizes;
    for (int64_t dim = 0; dim < op.getSourceType().getRank(); ++dim)
      if (op.getSourceType().isDynamicDim(dim))
        dynamicSizes.push_back(tensor::DimOp::create(b, loc, part, dim));
    Value zeros =
        buildSplatValue(b, loc, op.getSourceType(), dynamicSizes, 0.0);
    Value cleared = tensor::InsertSliceOp::create(b, loc, zeros, d, *offsets,
                                                  *sizes, *strides);
    if (failed(ctx.addCotangent(op.getDest(), cleared)))
      return failure();
  }
  return success();
}

LogicalResult adjoint(tensor::ConcatOp op, AdjointContext &ctx) {
  Value d = ctx.getCotangent(op.getResult());
  if (!d)
    return success();
  OpBuilder &b = ctx.getBuilder();
  Location loc = op.getLoc();
  int64_t dim = op.getDim();
  int64_t rank = op.getResultType().getRank();
  // Input k occupies [sum of the extents before it, + its extent) along dim.
  OpFoldResult offset = b.getIndexAttr(0);
  for (Value input : op.getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets[dim] = offset;
    // The inputs share the result's other extents, so only a dynamic extent
    // along `dim` needs the forward value.
    SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, d);
    if (type.isDynamicDim(dim)) {
      FailureOr<Value> primal = ctx.getPrimal(input);
      if (failed(primal))
        return failure();
      sizes[dim] = tensor::getMixedSize(b, loc, *primal, dim);
    } else {
      sizes[dim] = b.getIndexAttr(type.getDimSize(dim));
    }
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    if (ctx.isActive(input)) {
      Value part = tensor::ExtractSliceOp::create(b, loc, type, d, offsets,
                                                  sizes, strides);
      if (failed(ctx.addCotangent(input, part)))
        return failure();
    }
    // The next offset: static where both terms are.
    std::optional<int64_t> o = getConstantIntValue(offset),
                           s = getConstantIntValue(sizes[dim]);
    if (o && s) {
      offset = b.getIndexAttr(*o + *s);
    } else {
      auto asValue = [&](OpFoldResult ofr) -> Value {
        if (auto v = dyn_cast<Value>(ofr))
          return v;
        return arith::ConstantIndexOp::create(b, loc,
                                              *getConstantIntValue(ofr));
      };
      offset =
          arith::AddIOp::create(b, loc, asValue(offset), asValue(sizes[dim]))
              .getResult();
    }
  }
  return success();
}

LogicalResult adjoint(tensor::CollapseShapeOp op, AdjointContext &ctx) {
  Value d = ctx.getCotangent(op.getResult());
  if (!d || !ctx.isActive(op.getSrc()))
    return success();
  OpBuilder &b = ctx.getBuilder();
  FailureOr<Value> src = ctx.getPrimal(op.getSrc());
  if (failed(src))
    return failure();
  Value expanded = tensor::ExpandShapeOp::create(
      b, op.getLoc(), op.getSrcType(), d, op.getReassociationIndices(),
      tensor::getMixedSizes(b, op.getLoc(), *src));
  return ctx.addCotangent(op.getSrc(), expanded);
}

LogicalResult adjoint(tensor::ExpandShapeOp op, AdjointContext &ctx) {
  Value d = ctx.getCotangent(op.getResult());
  if (!d || !ctx.isActive(op.getSrc()))
    return success();
  Value collapsed = tensor::CollapseShapeOp::create(
      ctx.getBuilder(), op.getLoc(), op.getSrcType(), d,
      op.getReassociationIndices());
  return ctx.addCotangent(op.getSrc(), collapsed);
}

LogicalResult adjoint(tensor::CastOp op, AdjointContext &ctx) {
  Value d = ctx.getCotangent(op.getResult());
  if (!d || !ctx.isActive(op.getSource()))
    return success();
  Value cast = tensor::CastOp::create(ctx.getBuilder(), op.getLoc(),
                                      op.getSource().getType(), d);
  return ctx.addCotangent(op.getSource(), cast);
}

template <typename OpTy>
struct TensorAdjoint
    : AdjointOpInterface::ExternalModel<TensorAdjoint<OpTy>, OpTy> {
  LogicalResult buildAdjoint(Operation *op, AdjointContext &ctx) const {
    return adjoint(cast<OpTy>(op), ctx);
  }
};

} // namespace

void lstm::detail::registerTensorAdjoints(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::ExtractSliceOp::attachInterface<
        TensorAdjoint<tensor::ExtractSliceOp>>(*ctx);
    tensor::InsertSliceOp::attachInterface<
        TensorAdjoint<tensor::InsertSliceOp>>(*ctx);
    tensor::ConcatOp::attachInterface<TensorAdjoint<tensor::ConcatOp>>(*ctx);
    tensor::CollapseShapeOp::attachInterface<
        TensorAdjoint<tensor::CollapseShapeOp>>(*ctx);
    tensor::ExpandShapeOp::attachInterface<
        TensorAdjoint<tensor::ExpandShapeOp>>(*ctx);
    tensor::CastOp::attachInterface<TensorAdjoint<tensor::CastOp>>(*ctx);
  });
}
