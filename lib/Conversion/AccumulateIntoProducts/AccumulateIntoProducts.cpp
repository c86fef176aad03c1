//===- AccumulateIntoProducts.cpp - A sum's product as its accumulator ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A pointwise op whose result is `x + P`, P a product into zeros read by
// nothing else, computes `x` alone; the product then accumulates into that
// (a GEMM call with beta = 1) and takes the sum's place. The sum's pass
// over memory, a kernel launch a step on the GPU, goes; `x` is computed
// before the product, where the work before it is pointwise too (Cho's
// GRU's backward step: the product through R_n's transpose and the
// reset gate's gradient), and a launch merge can run both as one.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/AccumulateIntoProducts/AccumulateIntoProducts.h"

#include "lstm/Dialect/LSTM/Utils/Matmul.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_ACCUMULATEINTOPRODUCTSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// A sum `x + P` at the root of a pointwise generic and the contraction
/// that computes P.
struct SummedProduct {
  linalg::GenericOp sum;
  /// The root addition and which of its operands is P's block argument.
  arith::AddFOp root;
  unsigned productSide;
  /// The generic's input operand that P comes in through.
  OpOperand *productOperand;
  linalg::LinalgOp product;
};

/// The contraction that computes `value` into zeros, in `reader`'s block,
/// if `value` is its only result and `reader` its only reader.
static linalg::LinalgOp zeroFilledContraction(Value value, Operation *reader) {
  auto product = value.getDefiningOp<linalg::LinalgOp>();
  if (!product || product->getBlock() != reader->getBlock() ||
      product->getNumResults() != 1 || product.getNumDpsInits() != 1 ||
      !product.hasPureTensorSemantics() ||
      !linalg::isaContractionOpInterface(product))
    return nullptr;
  if (!value.hasOneUse() || *value.getUsers().begin() != reader)
    return nullptr;
  if (!lstm::getZeroFill(product.getDpsInits().front()))
    return nullptr;
  return product;
}

/// `op` as the sum of a product and something else, if it is one.
static std::optional<SummedProduct> matchSummedProduct(linalg::GenericOp op) {
  if (op.getNumResults() != 1 || op.getNumDpsInits() != 1 ||
      !op.hasPureTensorSemantics() ||
      op.getNumLoops() != op.getNumParallelLoops())
    return std::nullopt;
  Block *body = op.getBody();
  // The result is a function of the inputs alone.
  if (!op.getRegionOutputArgs().front().use_empty())
    return std::nullopt;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto root = yield.getValues().front().getDefiningOp<arith::AddFOp>();
  if (!root || root->getBlock() != body || !root->hasOneUse())
    return std::nullopt;
  AffineMap resultMap = op.getIndexingMapsArray().back();
  if (!resultMap.isIdentity())
    return std::nullopt;
  auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
  for (unsigned side : {1u, 0u}) {
    auto arg = dyn_cast<BlockArgument>(root->getOperand(side));
    Value rest = root->getOperand(1 - side);
    if (!arg || arg.getOwner() != body ||
        arg.getArgNumber() >= op.getNumDpsInputs() || !arg.hasOneUse())
      continue;
    // A sum of two operands would become a copy of one: nothing gained.
    if (auto restArg = dyn_cast<BlockArgument>(rest);
        restArg && restArg.getOwner() == body)
      continue;
    OpOperand *operand = op.getDpsInputOperand(arg.getArgNumber());
    if (operand->get().getType() != resultType ||
        op.getMatchingIndexingMap(operand) != resultMap)
      continue;
    // P comes in through this operand only.
    if (llvm::count_if(op->getOpOperands(), [&](OpOperand &other) {
          return other.get() == operand->get();
        }) != 1)
      continue;
    linalg::LinalgOp product = zeroFilledContraction(operand->get(), op);
    if (!product)
      continue;
    return SummedProduct{op, root, side, operand, product};
  }
  return std::nullopt;
}

/// `x` as a generic of the sum's other operands, where the sum was; the
/// product accumulating into it right after, in the sum's place.
static void accumulateIntoProduct(RewriterBase &rewriter, SummedProduct match) {
  linalg::GenericOp sum = match.sum;
  Location loc = sum.getLoc();
  unsigned dropped = match.productOperand->getOperandNumber();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (OpOperand *input : sum.getDpsInputOperands()) {
    if (input->getOperandNumber() == dropped)
      continue;
    inputs.push_back(input->get());
    maps.push_back(sum.getMatchingIndexingMap(input));
  }
  maps.push_back(sum.getIndexingMapsArray().back());
  Value rest = match.root->getOperand(1 - match.productSide);

  rewriter.setInsertionPoint(sum);
  auto partial = linalg::GenericOp::create(
      rewriter, loc, sum.getResultTypes(), inputs, sum.getDpsInits(), maps,
      sum.getIteratorTypesArray(),
      [&](OpBuilder &b, Location, ValueRange args) {
        // The old body's arguments, the product's left out, onto the new.
        IRMapping mapping;
        unsigned next = 0;
        for (BlockArgument arg : sum.getBody()->getArguments()) {
          if (arg.getArgNumber() == dropped)
            continue;
          mapping.map(arg, args[next++]);
        }
        for (Operation &op : sum.getBody()->without_terminator())
          if (&op != match.root.getOperation())
            b.clone(op, mapping);
        linalg::YieldOp::create(b, loc, mapping.lookupOrDefault(rest));
      });
  partial->setDiscardableAttrs(sum->getDiscardableAttrDictionary());

  linalg::LinalgOp product = match.product;
  linalg::FillOp zeros = lstm::getZeroFill(product.getDpsInits().front());
  rewriter.moveOpAfter(product, partial);
  rewriter.modifyOpInPlace(product, [&] {
    product.getDpsInitsMutable()[0].set(partial->getResult(0));
  });
  rewriter.replaceOp(sum, product->getResults());
  if (zeros && zeros->use_empty())
    rewriter.eraseOp(zeros);
}

struct AccumulateIntoProductsPass
    : lstm::impl::AccumulateIntoProductsPassBase<AccumulateIntoProductsPass> {
  void runOnOperation() override {
    SmallVector<SummedProduct> matches;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (std::optional<SummedProduct> match = matchSummedProduct(op))
        matches.push_back(*match);
    });
    // Each match has its own sum and product (a product has one reader):
    // rewriting one leaves the others as they were matched.
    IRRewriter rewriter(&getContext());
    for (SummedProduct &match : matches)
      accumulateIntoProduct(rewriter, match);
  }
};

} // namespace
