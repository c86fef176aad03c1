//===- AdjointUtils.cpp - Pieces shared by the adjoint builders -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "AdjointUtils.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

#include "lstm/Dialect/LSTM/Differentiation/AdjointOpInterface.cpp.inc"

AdjointContext::~AdjointContext() = default;

void mlir::lstm::registerAdjointOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registerElementwiseAdjoints(registry);
  registerTensorAdjoints(registry);
  registerLSTMOpAdjoints(registry);
}

//===----------------------------------------------------------------------===//
// CotangentAccumulator
//===----------------------------------------------------------------------===//

/// Whether two slices with unit strides are disjoint: in some dimension both
/// have static bounds that do not overlap.
static bool disjoint(const CotangentAccumulator::Slice &a,
                     const CotangentAccumulator::Slice &b) {
  for (size_t d = 0; d < a.offsets.size(); ++d) {
    std::optional<int64_t> ao = getConstantIntValue(a.offsets[d]),
                           as = getConstantIntValue(a.sizes[d]),
                           bo = getConstantIntValue(b.offsets[d]),
                           bs = getConstantIntValue(b.sizes[d]);
    if (ao && as && bo && bs && (*ao + *as <= *bo || *bo + *bs <= *ao))
      return true;
  }
  return false;
}

/// Whether slice extent `size` at `offset` is the whole of dimension `dim` of
/// `source`: statically, or because the size is `tensor.dim` of the source.
static bool spansDim(Value source, int64_t dim, OpFoldResult offset,
                     OpFoldResult size) {
  if (!isConstantIntValue(offset, 0))
    return false;
  auto type = cast<RankedTensorType>(source.getType());
  if (std::optional<int64_t> s = getConstantIntValue(size))
    return !type.isDynamicDim(dim) && *s == type.getDimSize(dim);
  auto dimOp = dyn_cast_if_present<tensor::DimOp>(
      dyn_cast<Value>(size) ? cast<Value>(size).getDefiningOp() : nullptr);
  return dimOp && dimOp.getSource() == source &&
         getConstantIntValue(dimOp.getIndex()) == dim;
}

/// Whether disjoint unit-stride slices of `source` write all of it: they
/// agree on every dimension but one, span those, and tile the remaining
/// (static) one.
static bool cover(Value source, ArrayRef<CotangentAccumulator::Slice> slices) {
  auto type = cast<RankedTensorType>(source.getType());
  const CotangentAccumulator::Slice &first = slices.front();
  std::optional<int64_t> tiled;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool same = llvm::all_of(slices, [&](const auto &s) {
      return s.offsets[d] == first.offsets[d] && s.sizes[d] == first.sizes[d];
    });
    if (same && spansDim(source, d, first.offsets[d], first.sizes[d]))
      continue;
    if (tiled || type.isDynamicDim(d))
      return false;
    tiled = d;
  }
  if (!tiled)
    return true;
  // Disjoint slices tile [0, N) when their static sizes add up to N.
  int64_t total = 0;
  for (const auto &s : slices) {
    std::optional<int64_t> size = getConstantIntValue(s.sizes[*tiled]);
    if (!size)
      return false;
    total += *size;
  }
  return total == type.getDimSize(*tiled);
}

FailureOr<Value> CotangentAccumulator::materialize(OpBuilder &b, Location loc,
                                                   Value v,
                                                   const Builders &builders) {
  auto it = entries.find(v);
  if (it == entries.end())
    return Value();
  Entry entry = std::move(it->second);
  Value sum;
  auto accumulate = [&](Value c) {
    sum = sum ? arith::AddFOp::create(b, loc, sum, c).getResult() : c;
  };
  for (Value d : entry.dense)
    accumulate(d);

  if (!entry.slices.empty()) {
    auto mapped = [&](ArrayRef<OpFoldResult> ofrs)
        -> FailureOr<SmallVector<OpFoldResult>> {
      SmallVector<OpFoldResult> result;
      for (OpFoldResult ofr : ofrs) {
        if (auto attr = dyn_cast<Attribute>(ofr)) {
          result.push_back(attr);
          continue;
        }
        FailureOr<Value> p = builders.primal(cast<Value>(ofr));
        if (failed(p))
          return failure();
        result.push_back(*p);
      }
      return result;
    };
    auto insert = [&](Value dest, const Slice &s) -> FailureOr<Value> {
      auto offsets = mapped(s.offsets), sizes = mapped(s.sizes),
           strides = mapped(s.strides);
      if (failed(offsets) || failed(sizes) || failed(strides))
        return failure();
      return tensor::InsertSliceOp::create(b, loc, s.value, dest, *offsets,
                                           *sizes, *strides)
          .getResult();
    };
    bool unitStrides = llvm::all_of(entry.slices, [](const Slice &s) {
      return llvm::all_of(
          s.strides, [](OpFoldResult o) { return isConstantIntValue(o, 1); });
    });
    bool allDisjoint = unitStrides;
    for (size_t i = 0; allDisjoint && i < entry.slices.size(); ++i)
      for (size_t j = i + 1; allDisjoint && j < entry.slices.size(); ++j)
        allDisjoint = disjoint(entry.slices[i], entry.slices[j]);
    if (allDisjoint) {
      // One buffer: undefined where the slices write all of it.
      FailureOr<Value> acc =
          builders.buffer(v, /*zeroed=*/!cover(v, entry.slices));
      if (failed(acc))
        return failure();
      for (const Slice &s : entry.slices)
        if (failed(acc = insert(*acc, s)))
          return failure();
      accumulate(*acc);
    } else {
      // Overlapping slices add up.
      for (const Slice &s : entry.slices) {
        FailureOr<Value> zeros = builders.buffer(v, /*zeroed=*/true);
        if (failed(zeros))
          return failure();
        FailureOr<Value> one = insert(*zeros, s);
        if (failed(one))
          return failure();
        accumulate(*one);
      }
    }
  }
  it = entries.find(v);
  it->second = Entry{{sum}, {}};
  return sum;
}

//===----------------------------------------------------------------------===//
// Tensor building blocks
//===----------------------------------------------------------------------===//

/// The extents of `v`, as values where dynamic.
static SmallVector<Value> dynamicDims(OpBuilder &b, Location loc, Value v) {
  SmallVector<Value> dims;
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dims.push_back(tensor::DimOp::create(b, loc, v, d));
  return dims;
}

Value lstm::detail::buildSplatValue(OpBuilder &b, Location loc, Type type,
                                    ValueRange dynamicSizes, double c) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, c));
  Type elementType = tensorType.getElementType();
  if (tensorType.hasStaticShape())
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(tensorType, b.getFloatAttr(elementType, c)));
  Value empty = tensor::EmptyOp::create(b, loc, tensorType.getShape(),
                                        elementType, dynamicSizes);
  Value scalar =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, c));
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

Value lstm::detail::buildMatmul(OpBuilder &b, Location loc, Value lhs,
                                Value rhs, bool transposeLhs,
                                bool transposeRhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t mDim = transposeLhs ? 1 : 0, nDim = transposeRhs ? 0 : 1;
  auto resultType = RankedTensorType::get(
      {lhsType.getDimSize(mDim), rhsType.getDimSize(nDim)},
      lhsType.getElementType());
  SmallVector<Value> sizes;
  if (resultType.isDynamicDim(0))
    sizes.push_back(tensor::DimOp::create(b, loc, lhs, mDim));
  if (resultType.isDynamicDim(1))
    sizes.push_back(tensor::DimOp::create(b, loc, rhs, nDim));
  // A zero-filled buffer (not a splat constant): the contraction writes it,
  // and lstm-gemm-to-cublas turns the fill into beta = 0.
  Value empty = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                        resultType.getElementType(), sizes);
  Value zero = arith::ConstantOp::create(
      b, loc, b.getZeroAttr(resultType.getElementType()));
  Value acc = linalg::FillOp::create(b, loc, zero, empty).getResult(0);

  MLIRContext *ctx = b.getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> maps = {
      AffineMap::get(3, 0,
                     transposeLhs ? ArrayRef<AffineExpr>{k, m}
                                  : ArrayRef<AffineExpr>{m, k},
                     ctx),
      AffineMap::get(3, 0,
                     transposeRhs ? ArrayRef<AffineExpr>{n, k}
                                  : ArrayRef<AffineExpr>{k, n},
                     ctx),
      AffineMap::get(3, 0, {m, n}, ctx)};
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  return linalg::GenericOp::create(
             b, loc, resultType, ValueRange{lhs, rhs}, ValueRange{acc}, maps,
             iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               Value p = arith::MulFOp::create(nb, l, args[0], args[1]);
               linalg::YieldOp::create(
                   nb, l, arith::AddFOp::create(nb, l, args[2], p).getResult());
             })
      .getResult(0);
}

Value lstm::detail::buildSumOverLeadingDim(OpBuilder &b, Location loc,
                                           Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  auto resultType = RankedTensorType::get(type.getShape().drop_front(),
                                          type.getElementType());
  SmallVector<Value> sizes;
  for (int64_t d = 1; d < rank; ++d)
    if (type.isDynamicDim(d))
      sizes.push_back(tensor::DimOp::create(b, loc, x, d));
  Value empty = tensor::EmptyOp::create(b, loc, resultType.getShape(),
                                        resultType.getElementType(), sizes);
  Value zero =
      arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
  Value acc = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  // The summed dimension is the innermost loop (d_{rank-1}): loops are made
  // in this order, and on the GPU the outer, parallel ones become the
  // kernel's threads, each summing its column. (An outer reduction loop would
  // launch a kernel per row.)
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> inExprs = {getAffineDimExpr(rank - 1, ctx)};
  SmallVector<AffineExpr> outExprs;
  for (int64_t d = 0; d + 1 < rank; ++d) {
    inExprs.push_back(getAffineDimExpr(d, ctx));
    outExprs.push_back(getAffineDimExpr(d, ctx));
  }
  SmallVector<AffineMap> maps = {AffineMap::get(rank, 0, inExprs, ctx),
                                 AffineMap::get(rank, 0, outExprs, ctx)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators[rank - 1] = utils::IteratorType::reduction;
  return linalg::GenericOp::create(
             b, loc, resultType, ValueRange{x}, ValueRange{acc}, maps,
             iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nb, l,
                   arith::AddFOp::create(nb, l, args[1], args[0]).getResult());
             })
      .getResult(0);
}

Value lstm::detail::buildColumnSums(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  assert(type.getRank() == 2 && "column sums of a matrix");
  Type element = type.getElementType();
  SmallVector<Value> sizes;
  if (type.isDynamicDim(0))
    sizes.push_back(tensor::DimOp::create(b, loc, x, 0));
  // A splat, not a linalg.fill: linalg's canonicalization folds a filled
  // operand into the generic's body, which would make the GEMM a reduction
  // again.
  Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(element, 1.0));
  Value ones = tensor::SplatOp::create(
      b, loc, one, ArrayRef<int64_t>{1, type.getDimSize(0)}, sizes);
  Value row = buildMatmul(b, loc, ones, x, /*transposeLhs=*/false,
                          /*transposeRhs=*/false);
  auto resultType = RankedTensorType::get({type.getDimSize(1)}, element);
  return tensor::CollapseShapeOp::create(
      b, loc, resultType, row, ArrayRef<ReassociationIndices>{{0, 1}});
}

Value lstm::detail::buildBroadcastMul(OpBuilder &b, Location loc, Value rows,
                                      Value v) {
  auto type = cast<RankedTensorType>(rows.getType());
  int64_t rank = type.getRank();
  MLIRContext *ctx = b.getContext();
  SmallVector<AffineExpr> vecExprs;
  for (int64_t d = 0; d < rank; ++d)
    if (d != rank - 2)
      vecExprs.push_back(getAffineDimExpr(d, ctx));
  auto identity = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineMap> maps = {
      identity, AffineMap::get(rank, 0, vecExprs, ctx), identity};
  Value out =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                              dynamicDims(b, loc, rows));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ValueRange{rows, v}, ValueRange{out}, maps,
             iterators,
             [](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(
                   nb, l,
                   arith::MulFOp::create(nb, l, args[0], args[1]).getResult());
             })
      .getResult(0);
}

Value lstm::detail::collapseLeadingDims(OpBuilder &b, Location loc, Value seq) {
  int64_t rank = cast<RankedTensorType>(seq.getType()).getRank();
  SmallVector<ReassociationIndices> groups = {{0, 1}};
  for (int64_t d = 2; d < rank; ++d)
    groups.push_back({d});
  return tensor::CollapseShapeOp::create(b, loc, seq, groups);
}

Value lstm::detail::expandLeadingDim(OpBuilder &b, Location loc, Value rows,
                                     Value like) {
  auto rowsType = cast<RankedTensorType>(rows.getType());
  auto likeType = cast<RankedTensorType>(like.getType());
  SmallVector<int64_t> shape = {likeType.getDimSize(0), likeType.getDimSize(1)};
  llvm::append_range(shape, rowsType.getShape().drop_front());
  auto type = RankedTensorType::get(shape, rowsType.getElementType());
  SmallVector<OpFoldResult> outputShape = {
      tensor::getMixedSize(b, loc, like, 0),
      tensor::getMixedSize(b, loc, like, 1)};
  for (int64_t d = 1; d < rowsType.getRank(); ++d)
    outputShape.push_back(tensor::getMixedSize(b, loc, rows, d));
  SmallVector<ReassociationIndices> groups = {{0, 1}};
  for (int64_t d = 2; d < type.getRank(); ++d)
    groups.push_back({d});
  return tensor::ExpandShapeOp::create(b, loc, type, rows, groups, outputShape);
}

Value lstm::detail::buildOneMinus(OpBuilder &b, Location loc, Value x) {
  if (isa<RankedTensorType>(x.getType()))
    return OneMinusOp::create(b, loc, x);
  Value one =
      arith::ConstantOp::create(b, loc, b.getFloatAttr(x.getType(), 1.0));
  return arith::SubFOp::create(b, loc, one, x);
}
