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

#include "OperandSplits.h"
#include "ProductBounds.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
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

#include <variant>

namespace mlir::lstm {
#define GEN_PASS_DEF_SPLITTF32GEMMSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm::tf32;

namespace {

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
    if (minPartOutputs < 1 || minPartOutputs >= (int64_t(1) << 31)) {
      getOperation()->emitError("lstm-split-tf32-gemms: min-part-outputs "
                                "must be at least 1 and below 2^31 (got ")
          << static_cast<int64_t>(minPartOutputs) << ")";
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
    Bounds bounds{minRows,
                  loop ? int64_t(minLoopWork) : 1,
                  minIntensity,
                  !hoisted(op.getDpsInputs()[0]),
                  !hoisted(op.getDpsInputs()[1]),
                  maxDepth,
                  minPartOutputs};
    auto extentsHere = [&](unsigned dim) {
      return lstm::extentHere(rewriter, op, dim);
    };
    // A step's weights are split before the loops, and only for the calls
    // whose extents pass the same test there (the latency network's B = 1
    // would pay for a split it never reads): the test is built at the
    // function's start from its arguments, through the loops' initial
    // states where ValueBounds cannot follow the loops (a backward step's
    // states that trade their rows). The step's product reads the split
    // only where that test passed as well as its own. Where no test can be
    // built there, the product stays as it is.
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
              return lstm::extentBeforeLoops(atStart, op, dim);
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
    // The split weights exist only where the test before the loops passed:
    // where it was built from the loops' initial states, the step's extents
    // passing their own test does not prove it.
    if (hoistGuard)
      condition = condition ? Value(arith::AndIOp::create(
                                  rewriter, op.getLoc(), condition, hoistGuard))
                            : hoistGuard;

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
