//===- ProductBounds.cpp - Which products are worth splitting -------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "ProductBounds.h"

#include "lstm/Conversion/SplitTF32Gemms/SplitTF32Gemms.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Sequence.h"

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

namespace {
bool isFunctionArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

/// The initial value of `v` where it is a loop's state (an scf.for's
/// iteration argument).
OpOperand *loopInit(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg)
    return nullptr;
  auto loop = dyn_cast<LoopLikeOpInterface>(arg.getOwner()->getParentOp());
  return loop ? loop.getTiedLoopInit(arg) : nullptr;
}

/// `v`'s dimension `dim` (`v` itself, an index, where `dim` is nullopt)
/// built at `b`'s insertion point from the function's arguments, a loop's
/// state taken at its initial value; a null Value where it cannot be.
/// Not a proof that the extent is the same at every step: the caller tests
/// the extent in the loop as well.
Value initialExtent(OpBuilder &b, Location loc, Value v,
                    std::optional<int64_t> dim, unsigned depth) {
  // Each level crosses one loop or one computation of extents: a bound on
  // the work for IR the pipelines do not nest that deep.
  constexpr unsigned kMaxDepth = 16;
  if (depth > kMaxDepth)
    return Value();
  if (isFunctionArgument(v))
    return dim ? Value(tensor::DimOp::create(b, loc, v, *dim)) : v;
  if (OpOperand *init = loopInit(v))
    return initialExtent(b, loc, init->get(), dim, depth + 1);
  auto stop = [](Value x, std::optional<int64_t>, ValueBoundsConstraintSet &) {
    return isFunctionArgument(x) || loopInit(x);
  };
  AffineMap map;
  ValueDimList operands;
  ValueBoundsConstraintSet::Variable extent =
      dim ? ValueBoundsConstraintSet::Variable(v, *dim)
          : ValueBoundsConstraintSet::Variable(v);
  if (failed(ValueBoundsConstraintSet::computeBound(
          map, operands, presburger::BoundType::EQ, extent, stop)))
    return Value();
  // A bound that is its own operand (nothing learnt) would recurse forever.
  if (operands.size() == 1 && operands.front().first == v &&
      operands.front().second == dim)
    return Value();
  SmallVector<OpFoldResult> resolved;
  for (auto [operand, operandDim] : operands) {
    Value r = initialExtent(b, loc, operand, operandDim, depth + 1);
    if (!r)
      return Value();
    resolved.push_back(r);
  }
  return getValueOrCreateConstantIndexOp(
      b, loc, affine::makeComposedFoldedAffineApply(b, loc, map, resolved));
}
} // namespace

/// The same extent built at `b`'s insertion point from the function's
/// arguments: as the loops around the product keep it where ValueBounds
/// proves that they do, else from the loops' initial states (a backward
/// step's states that trade their rows, which ValueBounds does not follow
/// through the loop); a null Value where neither can be built.
Value extentBeforeLoops(OpBuilder &b, linalg::LinalgOp op, unsigned dim) {
  std::optional<std::pair<Value, unsigned>> source = extentSource(op, dim);
  if (!source)
    return Value();
  auto functionArgument = [](Value v, std::optional<int64_t>,
                             ValueBoundsConstraintSet &) {
    return isFunctionArgument(v);
  };
  FailureOr<OpFoldResult> extent = affine::reifyShapedValueDimBound(
      b, op.getLoc(), presburger::BoundType::EQ, source->first, source->second,
      functionArgument);
  if (succeeded(extent))
    return getValueOrCreateConstantIndexOp(b, op.getLoc(), *extent);
  return initialExtent(b, op.getLoc(), source->first,
                       static_cast<int64_t>(source->second), /*depth=*/0);
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
  // Whether the extents of `dims` multiply to at least `least` (below
  // 2^31): static where they all are, else an i1 (each dynamic factor
  // clamped to `least`: no overflow); a null Value where an extent is not
  // to be had.
  auto productAtLeast = [&](ArrayRef<unsigned> dims,
                            int64_t least) -> std::variant<bool, Value> {
    int64_t known = 1;
    Value dynamicProduct;
    for (unsigned dim : dims) {
      if (!ShapedType::isDynamic(ranges[dim])) {
        known = std::min<int64_t>(known * std::min(ranges[dim], least), least);
        continue;
      }
      Value e = extentOf(dim);
      if (!e)
        return Value();
      Value clamped = arith::MinUIOp::create(
          b, loc, e, arith::ConstantIndexOp::create(b, loc, least));
      dynamicProduct =
          dynamicProduct
              ? Value(arith::MulIOp::create(b, loc, dynamicProduct, clamped))
              : Value(clamped);
    }
    if (!dynamicProduct)
      return known >= least;
    return atLeast(b, loc, dynamicProduct, llvm::divideCeil(least, known));
  };
  if (minWork > 1) {
    SmallVector<unsigned> all =
        llvm::to_vector(llvm::seq<unsigned>(0, ranges.size()));
    std::variant<bool, Value> enough = productAtLeast(all, minWork);
    if (auto *known = std::get_if<bool>(&enough)) {
      if (!*known)
        return false;
    } else if (Value v = std::get<Value>(enough)) {
      require(v);
    } else {
      return Value();
    }
  }
  // Parts run one after another, each only as parallel as the product's
  // outputs: a deep product of few outputs (a backward step's dh = dG·R at
  // B = 128: 128 x 2048 by 8192 terms, eight parts) ran slower in parts
  // than in fp32, where cuBLAS splits the depth itself.
  bool dynamicDepth = ShapedType::isDynamic(ranges[c.k]);
  if (bounds.minPartOutputs > 1 &&
      (dynamicDepth || ranges[c.k] > bounds.maxDepth)) {
    // Enough outputs, or (a depth known at run time) one part.
    SmallVector<unsigned> outputs;
    for (unsigned dim : llvm::seq<unsigned>(0, ranges.size()))
      if (dim != c.k)
        outputs.push_back(dim);
    std::variant<bool, Value> many =
        productAtLeast(outputs, bounds.minPartOutputs);
    auto *manyKnown = std::get_if<bool>(&many);
    if (!manyKnown && !std::get<Value>(many))
      return Value();
    if (!dynamicDepth) {
      if (manyKnown && !*manyKnown)
        return false;
      if (!manyKnown)
        require(std::get<Value>(many));
    } else if (!manyKnown || !*manyKnown) {
      Value depth = extentOf(c.k);
      if (!depth)
        return Value();
      Value onePart = arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::ule, depth,
          arith::ConstantIndexOp::create(b, loc, bounds.maxDepth));
      require(manyKnown ? onePart
                        : Value(arith::OrIOp::create(b, loc, onePart,
                                                     std::get<Value>(many))));
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
