//===- SplitTF32Gemms.cpp - fp32 products as TF32 products of split operands //
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// 3xTF32 for the GEMMs of the fp32 compute type. An fp32 value x is the sum
// of x_hi, x rounded to TF32 (10 bits of mantissa), and x_lo = x - x_hi,
// exact in fp32 and at most 2^-11 |x|. Then
//
//   a·b ~ a_lo·b_hi + a_hi·b_lo + a_hi·b_hi
//
// drops a_lo·b_lo (at most 2^-22 |a·b|), and TF32 tensor cores, which read
// the top 19 bits of each operand, multiply the three terms with an error of
// at most 2^-11 |a_lo| (or |b_lo|), 2^-22 of the product. What they add
// less well than fp32 FMAs is the sum: they round it toward zero, an error
// that grows with the depth of the reduction (measured: about 5e-6 of the
// result's norm at a depth of 2048, against 4e-7 for fp32 FMAs). A deeper
// reduction (a weight gradient's, over every step and batch row) is cut
// into parts of at most max-depth terms, each part's product summed on the
// tensor cores and the parts' added in fp32 (cuBLAS's beta = 1), so that
// the error stays that of one part. cuBLAS has no such mode on Hopper (its fp32
// emulation is for later GPUs), so the pass rewrites the product itself: C =
// A·B over depth K becomes one TF32 product over depth 3K,
//
//   C = [A_lo | A_hi | A_hi] · [B_hi ; B_lo ; B_hi],
//
// each operand's three parts side by side along its reduction dimension,
// the small terms first (added while the accumulator is small), written by
// one pointwise op (a linalg.generic over the operand with one more
// dimension of extent 3, collapsed into the reduction's). One call instead
// of three leaves cuBLAS one deeper product to tile. The contraction is
// marked (kTF32OperandsAttr) for lstm-gemm-to-cublas, which runs marked
// products with CUBLAS_COMPUTE_32F_FAST_TF32 whatever the module's compute
// type; a product it leaves as a generated kernel computes the same sum in
// fp32 FMAs, three times the work.
//
// A product of few rows runs no faster on tensor cores (cuBLAS's tiles are
// mostly empty) and pays for the splits: those with fewer than min-rows rows
// or columns (or terms) keep fp32 FMAs, decided at run time where the
// extent is dynamic (a batch), with both versions behind an scf.if.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/SplitTF32Gemms/SplitTF32Gemms.h"
#include "lstm/Conversion/Utils/TF32.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Affine/Transforms/Transforms.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "llvm/ADT/DenseMap.h"

#include <variant>

namespace mlir::lstm {
#define GEN_PASS_DEF_SPLITTF32GEMMSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The three parts of an operand along its reduction dimension: which of
/// them is the low part (the others are the high part).
/// [A_lo | A_hi | A_hi] and [B_hi ; B_lo ; B_hi] pair as lo·hi, hi·lo and
/// hi·hi: the small terms first, then the large ones, which tensor cores
/// add with less error to an accumulator that is still small (norm-relative
/// errors 4x smaller on the H200 than hi·hi first: docs/benchmarks.md,
/// "3xTF32 GEMMs").
constexpr int64_t kLowPartOfFirst = 0;
constexpr int64_t kLowPartOfSecond = 1;

Type elementType(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// What the pass needs of a contraction: the loop dimensions of its rows
/// (m), columns (n) and reduction (k), and where the reduction is in each
/// operand.
struct Contraction {
  unsigned m, n, k;
  std::array<int64_t, 2> reductionPositions;
};

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

/// The i1 that says whether a split hoisted out of the loops is used,
/// defined before it (at the function's start); a null Value: always.
using HoistGuard = Value;

/// An uninitialised tensor of the type of `value`'s split along `dim`.
Value emptySplit(OpBuilder &b, Location loc, Value value, int64_t dim) {
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  AffineExpr d0 = getAffineDimExpr(0, b.getContext());
  sizes[dim] =
      affine::makeComposedFoldedAffineApply(b, loc, d0 * 3, {sizes[dim]});
  return tensor::EmptyOp::create(b, loc, sizes, b.getF32Type());
}

/// Splits each operand once where it can. An operand defined outside the
/// innermost loop around its product (a weight, before the time loop) is
/// split right after its definition, once for every product that reads it
/// and every iteration; any other right before the product, and a later
/// product of the same block that reads it (products are split in program
/// order) reads that split. A hoisted split that a guard says the product
/// may not use (a batch below min-rows) is made behind an scf.if on it,
/// the other branch an uninitialised buffer, and is the product's own.
class Splitter {
public:
  Value split(OpBuilder &builder, Operation *product, Value value, int64_t dim,
              int64_t lowPart, HoistGuard guard = Value()) {
    auto loop = product->getParentOfType<LoopLikeOpInterface>();
    bool hoist =
        loop && !loop->isAncestor(value.getParentBlock()->getParentOp());
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
      auto branch = scf::IfOp::create(
          builder, loc, TypeRange{splitType(value, dim)}, used,
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

private:
  static Type splitType(Value value, int64_t dim) {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<int64_t> shape(type.getShape());
    if (!ShapedType::isDynamic(shape[dim]))
      shape[dim] *= 3;
    return RankedTensorType::get(shape, type.getElementType());
  }

  /// By operand, dimension, low part and the block of the products that
  /// share it (none for a hoisted split).
  llvm::DenseMap<std::tuple<Value, int64_t, int64_t, Block *>, Value> splits;
};

/// Whether the product's extent along loop dimension `dim` reaches `least`:
/// true or false where it is static, else an i1 computed before `op`.
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

/// What a product must have to be split.
struct Bounds {
  /// Rows, columns and terms, each.
  int64_t minRows;
  /// Multiply-adds, its batch included (a product in a loop), or 1.
  int64_t minWork;
  /// Multiply-adds for each element of the operands split at each call:
  /// rows·cols/(rows + cols) where both are, cols where only the first
  /// (the rows') is, rows where only the second is.
  int64_t minIntensity;
  /// Whether the first and the second operand are split at each call (not
  /// before the loops around the product).
  bool splitsFirst, splitsSecond;
};

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

struct SplitTF32GemmsPass
    : lstm::impl::SplitTF32GemmsPassBase<SplitTF32GemmsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minRows < 1 || maxDepth < 1) {
      getOperation()->emitError("lstm-split-tf32-gemms: min-rows and "
                                "max-depth must be at least 1 (got ")
          << static_cast<int64_t>(minRows) << " and "
          << static_cast<int64_t>(maxDepth) << ")";
      return signalPassFailure();
    }
    if (minIntensity < 1 || minIntensity >= (int64_t(1) << 31)) {
      getOperation()->emitError("lstm-split-tf32-gemms: min-intensity must "
                                "be at least 1 and below 2^31 (got ")
          << static_cast<int64_t>(minIntensity) << ")";
      return signalPassFailure();
    }
    if (minLoopWork < 1 || minLoopWork >= (int64_t(1) << 31)) {
      getOperation()->emitError("lstm-split-tf32-gemms: min-loop-work must "
                                "be at least 1 and below 2^31 (got ")
          << static_cast<int64_t>(minLoopWork) << ")";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, Contraction>> products;
    getOperation()->walk([&](linalg::LinalgOp op) {
      std::optional<Contraction> c = matchContraction(op);
      if (!c)
        return;
      // A shallow product (char-rnn's input projection, 65 terms) gains
      // less than its operands' splits cost.
      int64_t depth = op.getStaticLoopRanges()[c->k];
      if (!ShapedType::isDynamic(depth) && depth < minRows)
        return;
      if (op->getParentOfType<LoopLikeOpInterface>()) {
        // A product in a loop whose depth is known only at run time would
        // split its weights' parts at every iteration.
        if (!inLoops || ShapedType::isDynamic(depth))
          return;
      }
      products.push_back({op, *c});
    });

    IRRewriter rewriter(&getContext());
    Splitter splitter;
    for (auto [op, c] : products)
      rewrite(rewriter, splitter, op, c);
  }

  /// Replaces `op` by its split version, behind an scf.if where the
  /// extents that decide it are dynamic.
  void rewrite(IRRewriter &rewriter, Splitter &splitter, linalg::LinalgOp op,
               const Contraction &c) {
    rewriter.setInsertionPoint(op);
    // Enough rows, columns and terms (and, in a loop, work) for the tensor
    // cores to pay: decided here where the extents are static, else at run
    // time, the product as it was in the other branch.
    auto loop = op->getParentOfType<LoopLikeOpInterface>();
    auto hoisted = [&](Value v) {
      return loop && !loop->isAncestor(v.getParentBlock()->getParentOp());
    };
    Bounds bounds{minRows, loop ? int64_t(minLoopWork) : 1, minIntensity,
                  !hoisted(op.getDpsInputs()[0]),
                  !hoisted(op.getDpsInputs()[1])};
    auto extentsHere = [&](unsigned dim) {
      return extentHere(rewriter, op, dim);
    };
    // A step's weights are split before the loops, and only for the calls
    // whose extents pass the same test there (the latency network's B = 1
    // would pay for a split it never reads): the test is built at the
    // function's start from its arguments. Where it cannot be (the loops
    // do not keep the extents in a way ValueBounds can follow: a backward
    // step's states that trade their rows), the product stays as it is.
    HoistGuard hoistGuard;
    bool hoists = !bounds.splitsFirst || !bounds.splitsSecond;
    if (hoists) {
      std::variant<bool, Value> here =
          enoughWork(rewriter, op, c, bounds, [](unsigned) {
            return Value(); // only whether the test is static
          });
      if (auto *known = std::get_if<bool>(&here); known && !*known)
        return;
      if (!std::holds_alternative<bool>(here)) {
        auto function = op->getParentOfType<FunctionOpInterface>();
        OpBuilder atStart(function.getFunctionBody());
        std::variant<bool, Value> before =
            enoughWork(atStart, op, c, bounds, [&](unsigned dim) {
              return extentBeforeLoops(atStart, op, dim);
            });
        auto *guard = std::get_if<Value>(&before);
        if (!guard || !*guard)
          return;
        hoistGuard = *guard;
      }
    }
    std::variant<bool, Value> enough =
        enoughWork(rewriter, op, c, bounds, extentsHere);
    if (auto *known = std::get_if<bool>(&enough); known && !*known)
      return;
    Value condition;
    if (auto *dynamic = std::get_if<Value>(&enough))
      condition = *dynamic;

    // A zero fill of the accumulator that only the product reads goes
    // right before the (first) product of each version, where
    // lstm-gemm-to-cublas folds it into the call (beta = 0); the operands'
    // splits would otherwise stand between them.
    Value init = op.getDpsInits()[0];
    auto fill = init.getDefiningOp<linalg::FillOp>();
    if (fill && !init.hasOneUse())
      fill = nullptr;
    auto initAt = [&](OpBuilder &b) -> Value {
      return fill ? b.clone(*fill)->getResult(0) : init;
    };

    Value split;
    if (!condition) {
      split = splitProduct(rewriter, splitter, op, c, initAt, hoistGuard);
    } else {
      auto branch = scf::IfOp::create(rewriter, op.getLoc(),
                                      op->getResultTypes(), condition,
                                      /*addThenBlock=*/true,
                                      /*addElseBlock=*/true);
      OpBuilder then = branch.getThenBodyBuilder();
      scf::YieldOp::create(
          then, op.getLoc(),
          splitProduct(then, splitter, op, c, initAt, hoistGuard));
      OpBuilder otherwise = branch.getElseBodyBuilder();
      Value accumulator = initAt(otherwise);
      Operation *whole = otherwise.clone(*op);
      whole->setOperand(2, accumulator);
      scf::YieldOp::create(otherwise, op.getLoc(), whole->getResults());
      split = branch.getResult(0);
    }
    rewriter.replaceOp(op, split);
    if (fill && fill->use_empty())
      rewriter.eraseOp(fill);
  }

  /// The product on operands `first` and `second` (parts of `op`'s) split,
  /// into the accumulator that `init` gives after the splits.
  Operation *splitPart(OpBuilder &b, Splitter &splitter, linalg::LinalgOp op,
                       const Contraction &c, Value first, Value second,
                       function_ref<Value(OpBuilder &)> init,
                       HoistGuard hoistGuard = Value()) {
    Value firstParts = splitter.split(b, op, first, c.reductionPositions[0],
                                      kLowPartOfFirst, hoistGuard);
    Value secondParts = splitter.split(b, op, second, c.reductionPositions[1],
                                       kLowPartOfSecond, hoistGuard);
    Value accumulator = init(b);
    // The body multiplies and adds f32 as before; only the reduction's
    // extent, read from the operands, changes.
    Operation *split = b.clone(*op);
    split->setOperand(0, firstParts);
    split->setOperand(1, secondParts);
    split->setOperand(2, accumulator);
    split->setAttr(lstm::kTF32OperandsAttr, b.getUnitAttr());
    return split;
  }

  /// `op` with its operands split. A reduction deeper than max-depth (or
  /// of a depth known only at run time) is cut into parts of equal depth,
  /// at most max-depth terms each: the first part's product goes into the
  /// accumulator as `op`'s did, a loop adds the others' to it. Each part's
  /// sum stays as exact as max-depth allows and the parts are added in
  /// fp32 (cuBLAS's beta = 1).
  Value splitProduct(OpBuilder &b, Splitter &splitter, linalg::LinalgOp op,
                     const Contraction &c,
                     function_ref<Value(OpBuilder &)> init,
                     HoistGuard hoistGuard) {
    Value first = op.getDpsInputs()[0], second = op.getDpsInputs()[1];
    int64_t staticDepth = op.getStaticLoopRanges()[c.k];
    if (!ShapedType::isDynamic(staticDepth) && staticDepth <= maxDepth)
      return splitPart(b, splitter, op, c, first, second, init, hoistGuard)
          ->getResult(0);

    Location loc = op.getLoc();
    if (!ShapedType::isDynamic(staticDepth)) {
      // Parts of a static depth, one after the other: a step's weights (in
      // the backward, 4H terms deep) are sliced, and split, before the
      // loops.
      int64_t parts = llvm::divideCeil(staticDepth, int64_t(maxDepth));
      int64_t part = llvm::divideCeil(staticDepth, parts);
      Value sum;
      for (int64_t at = 0; at < staticDepth; at += part) {
        int64_t size = std::min(part, staticDepth - at);
        Value a =
            sliceBeforeLoops(b, op, first, c.reductionPositions[0], at, size);
        Value w =
            sliceBeforeLoops(b, op, second, c.reductionPositions[1], at, size);
        Value accumulator = sum;
        auto into = [&](OpBuilder &ib) {
          return accumulator ? accumulator : init(ib);
        };
        sum =
            splitPart(b, splitter, op, c, a, w, into, hoistGuard)->getResult(0);
      }
      return sum;
    }

    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value depth = getValueOrCreateConstantIndexOp(
        b, loc, tensor::getMixedSize(b, loc, first, c.reductionPositions[0]));
    // ceil(depth / max-depth) parts (one where the depth is 0), each of
    // ceil(depth / parts) terms but the last.
    Value parts = b.createOrFold<arith::MaxUIOp>(
        loc, constant(1),
        b.createOrFold<arith::CeilDivUIOp>(loc, depth, constant(maxDepth)));
    Value part = b.createOrFold<arith::CeilDivUIOp>(loc, depth, parts);
    auto partProduct = [&](OpBuilder &pb, Value offset, Value size,
                           function_ref<Value(OpBuilder &)> into) {
      Value a = sliceAlong(pb, loc, first, c.reductionPositions[0],
                           getAsOpFoldResult(offset), getAsOpFoldResult(size));
      Value w = sliceAlong(pb, loc, second, c.reductionPositions[1],
                           getAsOpFoldResult(offset), getAsOpFoldResult(size));
      return splitPart(pb, splitter, op, c, a, w, into)->getResult(0);
    };
    Value firstSize = b.createOrFold<arith::MinUIOp>(loc, part, depth);
    Value sum = partProduct(b, constant(0), firstSize, init);
    auto loop = scf::ForOp::create(
        b, loc, part, depth, part, ValueRange{sum},
        [&](OpBuilder &lb, Location l, Value offset, ValueRange acc) {
          Value left = lb.createOrFold<arith::SubIOp>(l, depth, offset);
          Value size = lb.createOrFold<arith::MinUIOp>(l, part, left);
          Value next = partProduct(lb, offset, size,
                                   [&](OpBuilder &) { return acc.front(); });
          scf::YieldOp::create(lb, l, next);
        });
    return loop.getResult(0);
  }
};

} // namespace
