//===- ProductBounds.cpp - Which products are worth splitting -------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ProductBounds.h"

#include "lstm/Conversion/SplitTF32Gemms/SplitTF32Gemms.h"

#include "mlir/Dialect/Affine/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace mlir::lstm::tf32 {

namespace {
Type elementType(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// The input and its dimension that give the product's extent along loop
/// dimension `dim` (not the accumulator, whose zero fill should keep the
/// product as its one user).
std::optional<std::pair<Value, unsigned>> extentSource(linalg::LinalgOp op,
                                                       unsigned dim) {
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (std::optional<unsigned> position =
            map.getResultPosition(getAffineDimExpr(dim, op.getContext())))
      return std::make_pair(input->get(), *position);
  }
  return std::nullopt;
}

Value atLeast(OpBuilder &b, Location loc, Value size, int64_t least) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size,
                               arith::ConstantIndexOp::create(b, loc, least));
}
} // namespace

/// A contraction on tensors of f32 operands into an f32 accumulator with one
/// row, column and reduction dimension (and any batch); nothing if `op` is
/// not one or was split already.
std::optional<Contraction> matchContraction(linalg::LinalgOp op) {
  if (op->hasAttr(lstm::kTF32OperandsAttr) || !op.hasPureTensorSemantics() ||
      op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  if (!elementType(op.getDpsInits()[0]).isF32())
    return std::nullopt;
  for (Value input : op.getDpsInputs())
    if (!isa<RankedTensorType>(input.getType()) || !elementType(input).isF32())
      return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return std::nullopt;
  Contraction c{dims->m.front(), dims->n.front(), dims->k.front(), {}};
  for (int64_t i = 0; i < 2; ++i) {
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(i));
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(c.k, op.getContext()));
    if (!position)
      return std::nullopt;
    c.reductionPositions[i] = *position;
  }
  return c;
}

/// The extent of the product's loop dimension `dim` as an input's size,
/// read at `b`'s insertion point; a null Value where no input has it.
Value extentHere(OpBuilder &b, linalg::LinalgOp op, unsigned dim) {
  std::optional<std::pair<Value, unsigned>> source = extentSource(op, dim);
  if (!source)
    return Value();
  return tensor::DimOp::create(b, op.getLoc(), source->first, source->second);
}

/// The same extent built at `b`'s insertion point from the function's
/// arguments (a step's extents as the loops around it keep them:
/// ValueBounds proves them equal); a null Value where it cannot be.
Value extentBeforeLoops(OpBuilder &b, linalg::LinalgOp op, unsigned dim) {
  std::optional<std::pair<Value, unsigned>> source = extentSource(op, dim);
  if (!source)
    return Value();
  auto functionArgument = [](Value v, std::optional<int64_t>,
                             ValueBoundsConstraintSet &) {
    auto arg = dyn_cast<BlockArgument>(v);
    return arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  };
  FailureOr<OpFoldResult> extent = affine::reifyShapedValueDimBound(
      b, op.getLoc(), presburger::BoundType::EQ, source->first, source->second,
      functionArgument);
  if (failed(extent))
    return Value();
  return getValueOrCreateConstantIndexOp(b, op.getLoc(), *extent);
}

/// Whether `op` passes `bounds`: true or false where the extents that
/// decide are static; else an i1 built at `b`'s insertion point from the
/// dynamic extents that `extent` gives there; a null Value where it gives
/// none for one of them.
std::variant<bool, Value> enoughWork(OpBuilder &b, linalg::LinalgOp op,
                                     const Contraction &c, const Bounds &bounds,
                                     function_ref<Value(unsigned)> extent) {
  int64_t minRows = bounds.minRows, minWork = bounds.minWork;
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Value all;
  auto require = [&](Value v) {
    all = all ? arith::AndIOp::create(b, loc, all, v) : v;
  };
  llvm::DenseMap<unsigned, Value> dynamic;
  auto extentOf = [&](unsigned dim) {
    Value &e = dynamic[dim];
    if (!e)
      e = extent(dim);
    return e;
  };
  for (unsigned dim : {c.m, c.n, c.k}) {
    if (!ShapedType::isDynamic(ranges[dim])) {
      if (ranges[dim] < minRows)
        return false;
      continue;
    }
    Value e = extentOf(dim);
    if (!e)
      return Value();
    require(atLeast(b, loc, e, minRows));
  }
  if (minWork > 1) {
    // The static extents' product and the dynamic ones', each factor
    // clamped to minWork (below 2^31: no overflow).
    int64_t work = 1;
    Value dynamicWork;
    for (auto [dim, range] : llvm::enumerate(ranges)) {
      if (!ShapedType::isDynamic(range)) {
        work = std::min<int64_t>(work * std::min(range, minWork), minWork);
        continue;
      }
      Value e = extentOf(dim);
      if (!e)
        return Value();
      Value clamped = arith::MinUIOp::create(
          b, loc, e, arith::ConstantIndexOp::create(b, loc, minWork));
      dynamicWork =
          dynamicWork
              ? Value(arith::MulIOp::create(b, loc, dynamicWork, clamped))
              : Value(clamped);
    }
    if (!dynamicWork) {
      if (work < minWork)
        return false;
    } else {
      require(atLeast(b, loc, dynamicWork, llvm::divideCeil(minWork, work)));
    }
  }
  // The intensity: M·N >= r·(M·[first split] + N·[second split]); with
  // one operand split, N >= r (the first) or M >= r (the second).
  int64_t r = bounds.minIntensity;
  if (bounds.splitsFirst != bounds.splitsSecond) {
    unsigned dim = bounds.splitsFirst ? c.n : c.m;
    if (!ShapedType::isDynamic(ranges[dim])) {
      if (ranges[dim] < r)
        return false;
    } else {
      Value e = extentOf(dim);
      if (!e)
        return Value();
      require(atLeast(b, loc, e, r));
    }
  } else if (bounds.splitsFirst) {
    // Each extent clamped to 2^31: no overflow below 2^63.
    constexpr int64_t kClamp = int64_t(1) << 31;
    int64_t m = ranges[c.m], n = ranges[c.n];
    // (M - r)·(N - r) >= r²: never where an extent is at most r.
    if ((!ShapedType::isDynamic(m) && m <= r) ||
        (!ShapedType::isDynamic(n) && n <= r))
      return false;
    if (!ShapedType::isDynamic(m) && !ShapedType::isDynamic(n)) {
      m = std::min(m, kClamp);
      n = std::min(n, kClamp);
      if (m * n < r * (m + n))
        return false;
    } else {
      auto clamped = [&](unsigned dim, int64_t range) -> Value {
        if (!ShapedType::isDynamic(range))
          return arith::ConstantIndexOp::create(b, loc,
                                                std::min(range, kClamp));
        Value e = extentOf(dim);
        if (!e)
          return Value();
        return arith::MinUIOp::create(
            b, loc, e, arith::ConstantIndexOp::create(b, loc, kClamp));
      };
      Value mv = clamped(c.m, m), nv = clamped(c.n, n);
      if (!mv || !nv)
        return Value();
      Value product = arith::MulIOp::create(b, loc, mv, nv);
      Value needed =
          arith::MulIOp::create(b, loc, arith::AddIOp::create(b, loc, mv, nv),
                                arith::ConstantIndexOp::create(b, loc, r));
      require(arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, product,
                                    needed));
    }
  }
  if (!all)
    return true;
  return all;
}

} // namespace mlir::lstm::tf32
