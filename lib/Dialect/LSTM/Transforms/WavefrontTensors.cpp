//===- WavefrontTensors.cpp - Tensors of the wavefront loop ---------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "WavefrontTensors.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::lstm;

/// `type` with a leading extent `n`.
RankedTensorType mlir::lstm::wavefront::prependExtent(Type type, int64_t n) {
  auto t = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape = {n};
  llvm::append_range(shape, t.getShape());
  return RankedTensorType::get(shape, t.getElementType());
}

/// `[n, ...]` from n values of one type: value i becomes row i. The rows
/// take the first value's extents: where they are dynamic, the others are
/// checked against them at run time (`what` names the values).
Value mlir::lstm::wavefront::stackValues(OpBuilder &b, Location loc,
                                         ValueRange values, const Twine &what) {
  auto type = cast<RankedTensorType>(values.front().getType());
  for (auto [l, v] : llvm::enumerate(values))
    for (int64_t d = 0, e = type.getRank(); d < e; ++d)
      lstm::assertSameExtent(b, loc, v, d, values.front(), d,
                             "lstm-wavefront: " + what + " of layer #" +
                                 Twine(l) +
                                 " differs from layer #0's in "
                                 "dimension " +
                                 Twine(d));
  auto stackedType = prependExtent(type, values.size());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, values[0]);
  SmallVector<Value> dynamic;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(d))
      dynamic.push_back(cast<Value>(size));
  Value acc = tensor::EmptyOp::create(b, loc, stackedType.getShape(),
                                      type.getElementType(), dynamic);
  sizes.insert(sizes.begin(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  for (auto [i, v] : llvm::enumerate(values)) {
    SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
    offsets[0] = b.getIndexAttr(i);
    acc =
        tensor::InsertSliceOp::create(b, loc, v, acc, offsets, sizes, strides);
  }
  return acc;
}

/// Rows [begin, begin + count) of a `[L, ...]` tensor, of type `type`
/// (rank-reduced when `type` has no leading extent).
Value mlir::lstm::wavefront::takeRows(OpBuilder &b, Location loc, Value source,
                                      int64_t begin, int64_t count,
                                      RankedTensorType type) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, source);
  sizes[0] = b.getIndexAttr(count);
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  offsets[0] = b.getIndexAttr(begin);
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, type, source, offsets, sizes,
                                        strides);
}

/// `[head; tail]` along the leading extent: `head` is one row (without the
/// leading extent), `tail` is `[n, ...]`.
Value mlir::lstm::wavefront::prependRow(OpBuilder &b, Location loc, Value head,
                                        Value tail) {
  auto tailType = cast<RankedTensorType>(tail.getType());
  int64_t n = tailType.getDimSize(0);
  auto type = RankedTensorType::get(
      [&] {
        SmallVector<int64_t> shape(tailType.getShape());
        shape[0] = n + 1;
        return shape;
      }(),
      tailType.getElementType());
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, tail);
  SmallVector<Value> dynamic;
  for (auto [d, size] : llvm::enumerate(sizes))
    if (type.isDynamicDim(d))
      dynamic.push_back(cast<Value>(size));
  Value acc = tensor::EmptyOp::create(b, loc, type.getShape(),
                                      type.getElementType(), dynamic);
  SmallVector<OpFoldResult> offsets(sizes.size(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(sizes.size(), b.getIndexAttr(1));
  SmallVector<OpFoldResult> headSizes(sizes);
  headSizes[0] = b.getIndexAttr(1);
  acc = tensor::InsertSliceOp::create(b, loc, head, acc, offsets, headSizes,
                                      strides);
  offsets[0] = b.getIndexAttr(1);
  return tensor::InsertSliceOp::create(b, loc, tail, acc, offsets, sizes,
                                       strides);
}

/// Keeps the state of the layers that are inactive at diagonal `d`:
/// `result[l] = 0 <= d - l < T ? next[l] : previous[l]`. Only the first and
/// last L - 1 diagonals have inactive layers: on the others (all of them but
/// 2(L-1)), `next` is the result as it is, without a kernel to copy it.
Value mlir::lstm::wavefront::keepInactive(OpBuilder &b, Location loc, Value d,
                                          Value seqLen, int64_t numLayers,
                                          Value next, Value previous) {
  auto type = cast<RankedTensorType>(next.getType());
  Value allStarted = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::sge, d,
      arith::ConstantIndexOp::create(b, loc, numLayers - 1));
  Value noneDone =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, d, seqLen);
  Value allActive = arith::AndIOp::create(b, loc, allStarted, noneDone);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, allActive,
                                /*withElseRegion=*/true);
  // The branches are built with `b` itself, so that its listener (a
  // rewriter's) sees their ops too.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(ifOp.thenBlock());
  scf::YieldOp::create(b, loc, next);

  b.setInsertionPointToEnd(ifOp.elseBlock());
  OpBuilder &eb = b;
  int64_t rank = type.getRank();
  SmallVector<Value> dynamic;
  for (int64_t i = 0; i < rank; ++i)
    if (type.isDynamicDim(i))
      dynamic.push_back(tensor::DimOp::create(eb, loc, next, i));
  Value out = tensor::EmptyOp::create(eb, loc, type.getShape(),
                                      type.getElementType(), dynamic);
  AffineMap id = eb.getMultiDimIdentityMap(rank);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value kept =
      linalg::GenericOp::create(
          eb, loc, type, ValueRange{next, previous}, ValueRange{out},
          ArrayRef<AffineMap>{id, id, id}, iters,
          [&](OpBuilder &nb, Location l, ValueRange args) {
            Value layer = linalg::IndexOp::create(nb, l, 0);
            Value step = arith::SubIOp::create(nb, l, d, layer);
            Value zero = arith::ConstantIndexOp::create(nb, l, 0);
            Value started = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::sge, step, zero);
            Value notDone = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::slt, step, seqLen);
            Value active = arith::AndIOp::create(nb, l, started, notDone);
            linalg::YieldOp::create(
                nb, l,
                arith::SelectOp::create(nb, l, active, args[0], args[1])
                    .getResult());
          })
          .getResult(0);
  scf::YieldOp::create(eb, loc, kept);
  return ifOp.getResult(0);
}

/// Step `t` of a sequence `[T, B, N]`, as `type` (`[B, N]`).
Value mlir::lstm::wavefront::extractStep(OpBuilder &b, Location loc, Value seq,
                                         Value t, RankedTensorType type) {
  SmallVector<OpFoldResult> offsets = {t, b.getIndexAttr(0), b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     tensor::getMixedSize(b, loc, seq, 1),
                                     tensor::getMixedSize(b, loc, seq, 2)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, type, seq, offsets, sizes,
                                        strides);
}

namespace {
/// Step `step` of every row of a store `[L, S, B, N]`: `[0, step, 0, 0]`,
/// `[L, 1, B, N]`, unit strides.
struct StoreStep {
  SmallVector<OpFoldResult> offsets, sizes, strides;

  StoreStep(OpBuilder &b, Location loc, Value store, OpFoldResult step)
      : offsets(4, b.getIndexAttr(0)),
        sizes(tensor::getMixedSizes(b, loc, store)),
        strides(4, b.getIndexAttr(1)) {
    offsets[1] = step;
    sizes[1] = b.getIndexAttr(1);
  }
};
} // namespace

/// `value` `[L, B, N]` written at step `step` of `store` `[L, S, B, N]`:
/// each row's own step, one insert.
Value mlir::lstm::wavefront::insertStep(OpBuilder &b, Location loc, Value value,
                                        Value store, OpFoldResult step) {
  StoreStep at(b, loc, store, step);
  return tensor::InsertSliceOp::create(b, loc, value, store, at.offsets,
                                       at.sizes, at.strides);
}

Value mlir::lstm::wavefront::insertLayerStep(OpBuilder &b, Location loc,
                                             Value value, Value store,
                                             int64_t row, int64_t step) {
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(row),
                                       b.getIndexAttr(step), b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), b.getIndexAttr(1),
                                     tensor::getMixedSize(b, loc, value, 0),
                                     tensor::getMixedSize(b, loc, value, 1)};
  SmallVector<OpFoldResult> strides(4, b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, loc, value, store, offsets, sizes,
                                       strides);
}

/// Step `step` of every row of `store` `[L, S, B, N]`, as `type`
/// (`[L, B, N]`): the converse of insertStep.
Value mlir::lstm::wavefront::extractStoreStep(OpBuilder &b, Location loc,
                                              Value store, OpFoldResult step,
                                              RankedTensorType type) {
  StoreStep at(b, loc, store, step);
  return tensor::ExtractSliceOp::create(b, loc, type, store, at.offsets,
                                        at.sizes, at.strides);
}

/// Steps `first .. first + count - 1` of row `row` of `store`
/// `[L, S, B, N]`, as `type` (`[count, B, N]`): a contiguous view.
Value mlir::lstm::wavefront::rowSteps(OpBuilder &b, Location loc, Value store,
                                      int64_t row, int64_t first,
                                      OpFoldResult count,
                                      RankedTensorType type) {
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(row),
                                       b.getIndexAttr(first), b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), count,
                                     tensor::getMixedSize(b, loc, store, 2),
                                     tensor::getMixedSize(b, loc, store, 3)};
  SmallVector<int64_t> shape;
  for (unsigned d : {1u, 2u, 3u})
    shape.push_back(
        getConstantIntValue(sizes[d]).value_or(ShapedType::kDynamic));
  Value view = tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), store,
      offsets, sizes, SmallVector<OpFoldResult>(4, b.getIndexAttr(1)));
  if (view.getType() == type)
    return view;
  return tensor::CastOp::create(b, loc, type, view);
}

/// `seq · wᵀ` for every step at once: `[T, B, K]` against `w` `[N, K]`,
/// as one product over the T·B rows, `[T, B, N]`.
Value mlir::lstm::wavefront::projectSequence(OpBuilder &b, Location loc,
                                             Value seq, Value w) {
  auto seqType = cast<RankedTensorType>(seq.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  Type elementType = seqType.getElementType();
  SmallVector<ReassociationIndices> rows = {{0, 1}, {2}};
  Value flat = tensor::CollapseShapeOp::create(b, loc, seq, rows);
  auto flatType = cast<RankedTensorType>(flat.getType());
  auto projType = RankedTensorType::get(
      {flatType.getDimSize(0), wType.getDimSize(0)}, elementType);
  Value proj = GateOp::create(b, loc, projType, Activation::identity,
                              ValueRange{flat}, ValueRange{w}, ValueRange{},
                              ValueRange{}, Value(), Value());
  auto seqProjType = RankedTensorType::get(
      {seqType.getDimSize(0), seqType.getDimSize(1), wType.getDimSize(0)},
      elementType);
  SmallVector<OpFoldResult> shape = {tensor::getMixedSize(b, loc, seq, 0),
                                     tensor::getMixedSize(b, loc, seq, 1),
                                     tensor::getMixedSize(b, loc, proj, 1)};
  return tensor::ExpandShapeOp::create(b, loc, seqProjType, proj, rows, shape);
}
