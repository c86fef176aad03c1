//===- ProductExtents.cpp - A product's extents, in a loop or before it ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/Utils/ProductExtents.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;

namespace {
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

std::optional<lstm::Contraction>
lstm::matchF32Contraction(linalg::LinalgOp op) {
  auto isF32Tensor = [](Value v) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    return type && type.getElementType().isF32();
  };
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op) ||
      !isF32Tensor(op.getDpsInits()[0]) ||
      !llvm::all_of(op.getDpsInputs(), isF32Tensor))
    return std::nullopt;
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->m.size() != 1 || dims->n.size() != 1 ||
      dims->k.size() != 1)
    return std::nullopt;
  Contraction c{dims->m.front(),
                dims->n.front(),
                dims->k.front(),
                SmallVector<unsigned>(dims->batch.begin(), dims->batch.end()),
                {}};
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
Value lstm::extentHere(OpBuilder &b, linalg::LinalgOp op, unsigned dim) {
  std::optional<std::pair<Value, unsigned>> source = extentSource(op, dim);
  if (!source)
    return Value();
  return tensor::DimOp::create(b, op.getLoc(), source->first, source->second);
}

/// The same extent built at `b`'s insertion point from the function's
/// arguments: as the loops around the product keep it where ValueBounds
/// proves that they do, else from the loops' initial states (a backward
/// step's states that trade their rows, which ValueBounds does not follow
/// through the loop); a null Value where neither can be built.
Value lstm::extentBeforeLoops(OpBuilder &b, linalg::LinalgOp op, unsigned dim) {
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
