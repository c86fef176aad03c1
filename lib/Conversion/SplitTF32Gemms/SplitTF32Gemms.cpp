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
// result's norm at a depth of 2048, against 4e-7 for fp32 FMAs), hence the
// pass's max-depth. cuBLAS has no such mode on Hopper (its fp32 emulation
// is for later GPUs), so the pass rewrites the product itself: C = A·B over
// depth K becomes one TF32 product over depth 3K,
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
// or columns keep fp32 FMAs, decided at run time where the extent is
// dynamic (a batch), with both versions behind an scf.if.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/SplitTF32Gemms/SplitTF32Gemms.h"
#include "lstm/Conversion/Utils/TF32.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
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

/// Splits each operand once where it can. An operand defined outside the
/// innermost loop around its product (a weight, before the time loop) is
/// split right after its definition, once for every product that reads it
/// and every iteration; any other right before the product, and a later
/// product of the same block that reads it (products are split in program
/// order) reads that split.
class Splitter {
public:
  Value split(OpBuilder &builder, Operation *product, Value value, int64_t dim,
              int64_t lowPart) {
    auto loop = product->getParentOfType<LoopLikeOpInterface>();
    bool hoist =
        loop && !loop->isAncestor(value.getParentBlock()->getParentOp());
    Block *block = hoist ? nullptr : builder.getInsertionBlock();
    Value &split = splits[{value, dim, lowPart, block}];
    if (split)
      return split;
    OpBuilder::InsertionGuard guard(builder);
    if (hoist)
      builder.setInsertionPointAfterValue(value);
    split = splitOperand(builder, product->getLoc(), value, dim, lowPart);
    return split;
  }

private:
  /// By operand, dimension, low part and the block of the products that
  /// share it (none for a hoisted split).
  llvm::DenseMap<std::tuple<Value, int64_t, int64_t, Block *>, Value> splits;
};

/// Whether the product's extent along loop dimension `dim` reaches `least`:
/// true or false where it is static, else an i1 computed before `op`.
std::variant<bool, Value> reaches(OpBuilder &b, linalg::LinalgOp op,
                                  unsigned dim, int64_t least) {
  int64_t extent = op.getStaticLoopRanges()[dim];
  if (!ShapedType::isDynamic(extent))
    return extent >= least;
  // The extent as an input's size (not the accumulator's, whose zero fill
  // should keep the product as its one user).
  Location loc = op.getLoc();
  Value size;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (std::optional<unsigned> position =
            map.getResultPosition(getAffineDimExpr(dim, op.getContext()))) {
      size = tensor::DimOp::create(b, loc, input->get(), *position);
      break;
    }
  }
  if (!size)
    return true;
  return Value(
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, size,
                            arith::ConstantIndexOp::create(b, loc, least)));
}

struct SplitTF32GemmsPass
    : lstm::impl::SplitTF32GemmsPassBase<SplitTF32GemmsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, Contraction>> products;
    getOperation()->walk([&](linalg::LinalgOp op) {
      std::optional<Contraction> c = matchContraction(op);
      if (!c)
        return;
      // A static depth, within the bound: tensor cores' accumulation adds an
      // error that grows with it.
      // A shallow one (char-rnn's input projection, 65 terms) gains less
      // than its operands' splits cost.
      int64_t depth = op.getStaticLoopRanges()[c->k];
      if (ShapedType::isDynamic(depth) || depth > maxDepth || depth < minRows)
        return;
      if (!inLoops && op->getParentOfType<LoopLikeOpInterface>())
        return;
      products.push_back({op, *c});
    });

    IRRewriter rewriter(&getContext());
    Splitter splitter;
    for (auto [op, c] : products) {
      rewriter.setInsertionPoint(op);
      // Enough rows and columns for the tensor cores to pay: decided here
      // where the extents are static, else at run time, the product as it
      // was in the other branch.
      Value condition;
      bool never = false;
      for (unsigned dim : {c.m, c.n}) {
        std::variant<bool, Value> enough = reaches(rewriter, op, dim, minRows);
        if (auto *known = std::get_if<bool>(&enough)) {
          never |= !*known;
          continue;
        }
        Value v = std::get<Value>(enough);
        condition = condition ? arith::AndIOp::create(rewriter, op.getLoc(),
                                                      condition, v)
                              : v;
      }
      if (never)
        continue;

      auto splitProduct = [&](OpBuilder &b) -> Operation * {
        Value first = splitter.split(b, op, op.getDpsInputs()[0],
                                     c.reductionPositions[0], kLowPartOfFirst);
        Value second =
            splitter.split(b, op, op.getDpsInputs()[1], c.reductionPositions[1],
                           kLowPartOfSecond);
        // The body multiplies and adds f32 as before; only the reduction's
        // extent, read from the operands, changes.
        Operation *split = b.clone(*op);
        split->setOperand(0, first);
        split->setOperand(1, second);
        split->setAttr(lstm::kTF32OperandsAttr, b.getUnitAttr());
        return split;
      };

      if (!condition) {
        Operation *split = splitProduct(rewriter);
        rewriter.replaceOp(op, split->getResults());
        continue;
      }
      // Both versions. A zero fill of the accumulator that only the product
      // reads goes into each branch, where lstm-gemm-to-cublas folds it into
      // the call (beta = 0).
      Value init = op.getDpsInits()[0];
      auto fill = init.getDefiningOp<linalg::FillOp>();
      if (fill && !init.hasOneUse())
        fill = nullptr;
      auto branch = scf::IfOp::create(
          rewriter, op.getLoc(), op->getResultTypes(), condition,
          /*addThenBlock=*/true, /*addElseBlock=*/true);
      auto fillIn = [&](OpBuilder &b, Operation *product) {
        if (!fill)
          return;
        product->setOperand(2, b.clone(*fill)->getResult(0));
      };
      {
        OpBuilder b = branch.getThenBodyBuilder();
        Operation *split = splitProduct(b);
        b.setInsertionPoint(split);
        fillIn(b, split);
        b.setInsertionPointAfter(split);
        scf::YieldOp::create(b, op.getLoc(), split->getResults());
      }
      {
        OpBuilder b = branch.getElseBodyBuilder();
        Operation *whole = b.clone(*op);
        b.setInsertionPoint(whole);
        fillIn(b, whole);
        b.setInsertionPointAfter(whole);
        scf::YieldOp::create(b, op.getLoc(), whole->getResults());
      }
      rewriter.replaceOp(op, branch.getResults());
      if (fill && fill->use_empty())
        rewriter.eraseOp(fill);
    }
  }
};

} // namespace
