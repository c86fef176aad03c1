//===- GateToLinalg.cpp - Lower lstm.gate and lstm.one_minus to linalg ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A gate becomes one linalg contraction per product, accumulated into a
// zero-filled tensor, and one elementwise epilogue (addends, biases, the
// peephole term, the activation). `lstm.one_minus` is one elementwise op.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

//===----------------------------------------------------------------------===//
// lstm.gate
//===----------------------------------------------------------------------===//

/// Where a gate's extents come from. The batch and hidden extents come from
/// the first product, or from the first addend when the gate has no
/// products, or from the peephole state when it has neither. The batched
/// form has one leading group extent on every operand; the per-gate extents
/// sit `lead` positions further right.
struct GateExtents {
  GateExtents(GateOp::Adaptor gate, RankedTensorType resultType) {
    lead = resultType.getRank() - 2;
    bool hasProducts = !gate.getInputs().empty();
    Value rows = !gate.getAddends().empty() ? gate.getAddends().front()
                                            : gate.getPeepholeState();
    batchSource = hasProducts ? gate.getInputs().front() : rows;
    hiddenSource = hasProducts ? gate.getWeights().front() : rows;
    hiddenDim = (hasProducts ? 0 : 1) + lead;
  }

  /// The (value, dimension) pairs that give the result's extents.
  SmallVector<std::pair<Value, int64_t>> resultSources() const {
    SmallVector<std::pair<Value, int64_t>> from;
    if (lead)
      from.push_back({batchSource, 0});
    from.push_back({batchSource, batchDim()});
    from.push_back({hiddenSource, hiddenDim});
    return from;
  }

  int64_t batchDim() const { return lead; }
  int64_t featureDim() const { return lead + 1; }

  int64_t lead;
  Value batchSource, hiddenSource;
  int64_t hiddenDim;
};

/// Run-time checks of the extents that the verifier cannot see (dynamic
/// ones): every operand agrees with the gate's batch, hidden and group
/// extents.
static void assertGateExtents(OpBuilder &b, Location loc, GateOp::Adaptor gate,
                              const GateExtents &e) {
  int64_t b0 = e.batchDim(), k1 = e.featureDim();
  auto sameHidden = [&](Value v, int64_t dim, const Twine &what) {
    assertSameExtent(b, loc, v, dim, e.hiddenSource, e.hiddenDim,
                     "lstm.gate: " + what);
  };
  auto sameBatch = [&](Value v, const Twine &what) {
    assertSameExtent(b, loc, v, b0, e.batchSource, b0, "lstm.gate: " + what);
  };
  for (auto [k, pair] :
       llvm::enumerate(llvm::zip(gate.getInputs(), gate.getWeights()))) {
    auto [in, w] = pair;
    sameBatch(in, "input #" + Twine(k) +
                      " has a different batch size than input #0");
    assertSameExtent(b, loc, w, k1, in, k1,
                     "lstm.gate: weight #" + Twine(k) +
                         " has a different number of columns than input #" +
                         Twine(k) + " has features");
    sameHidden(w, e.lead,
               "weight #" + Twine(k) +
                   " has a different number of rows than weight #0");
  }
  for (auto [a, addend] : llvm::enumerate(gate.getAddends())) {
    sameBatch(addend,
              "addend #" + Twine(a) + " does not match the gate's batch size");
    sameHidden(addend, k1,
               "addend #" + Twine(a) +
                   " does not match the gate's hidden size");
  }
  for (auto [j, bias] : llvm::enumerate(gate.getBiases()))
    sameHidden(bias, e.lead,
               "bias #" + Twine(j) + " does not match the gate's hidden size");
  if (Value p = gate.getPeephole()) {
    sameHidden(p, e.lead,
               "the peephole weight does not match the gate's hidden size");
    sameBatch(gate.getPeepholeState(), "the peephole state has a different "
                                       "batch size than the inputs");
    sameHidden(gate.getPeepholeState(), k1,
               "the peephole state does not match the gate's hidden size");
  }
  if (e.lead) {
    // Every operand must have the same number of groups.
    for (auto [i, v] : llvm::enumerate(gate.getOperands()))
      assertSameExtent(b, loc, v, 0, e.batchSource, 0,
                       "lstm.gate: operand #" + Twine(i) +
                           " has a different number of groups than the "
                           "first");
  }
}

/// acc += Σ_k inputs[k]·weights[k]ᵀ, one contraction per product (the
/// weights stored [hidden, features] and read transposed through the
/// indexing maps): batched matmuls in the batched form, generics otherwise.
static Value buildProducts(OpBuilder &b, Location loc, GateOp::Adaptor gate,
                           RankedTensorType resultType, Value acc) {
  MLIRContext *ctx = b.getContext();
  bool batched = resultType.getRank() == 3;
  if (batched) {
    // acc[l, b, h] += in[l, b, k] * w[l, h, k].
    AffineExpr ld, bd, hd, kd;
    bindDims(ctx, ld, bd, hd, kd);
    ArrayAttr maps =
        b.getAffineMapArrayAttr({AffineMap::get(4, 0, {ld, bd, kd}, ctx),
                                 AffineMap::get(4, 0, {ld, hd, kd}, ctx),
                                 AffineMap::get(4, 0, {ld, bd, hd}, ctx)});
    for (auto [in, w] : llvm::zip(gate.getInputs(), gate.getWeights())) {
      auto matmul = linalg::BatchMatmulOp::create(
          b, loc, TypeRange{resultType}, ValueRange{in, w}, ValueRange{acc});
      matmul.setIndexingMapsAttr(maps);
      acc = matmul.getResult(0);
    }
    return acc;
  }
  // acc[b, h] += in[b, k] * w[h, k].
  AffineExpr bd, hd, kd;
  bindDims(ctx, bd, hd, kd);
  auto inMap = AffineMap::get(3, 0, {bd, kd}, ctx);
  auto wMap = AffineMap::get(3, 0, {hd, kd}, ctx);
  auto accMap = AffineMap::get(3, 0, {bd, hd}, ctx);
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel,
                                                utils::IteratorType::parallel,
                                                utils::IteratorType::reduction};
  for (auto [in, w] : llvm::zip(gate.getInputs(), gate.getWeights())) {
    acc = linalg::GenericOp::create(
              b, loc, resultType, ValueRange{in, w}, ValueRange{acc},
              ArrayRef<AffineMap>{inMap, wMap, accMap}, iterators,
              [](OpBuilder &nb, Location l, ValueRange args) {
                Value prod = arith::MulFOp::create(nb, l, args[0], args[1]);
                Value sum = arith::AddFOp::create(nb, l, args[2], prod);
                linalg::YieldOp::create(nb, l, sum);
              })
              .getResult(0);
  }
  return acc;
}

/// activation(acc + addends + biases (+ peephole ⊙ state)) as one
/// elementwise op into `out`. Biases and the peephole weight are indexed by
/// (group,) feature.
static Value buildEpilogue(OpBuilder &b, Location loc, GateOp::Adaptor gate,
                           Activation activation, RankedTensorType resultType,
                           Value acc, Value out) {
  MLIRContext *ctx = b.getContext();
  int64_t rank = resultType.getRank();
  bool batched = rank == 3;
  auto rowMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
  SmallVector<AffineExpr> vecExprs;
  if (batched)
    vecExprs.push_back(getAffineDimExpr(0, ctx));
  vecExprs.push_back(getAffineDimExpr(rank - 1, ctx));
  auto vecMap = AffineMap::get(rank, 0, vecExprs, ctx);
  SmallVector<Value> ins = {acc};
  SmallVector<AffineMap> maps = {rowMap};
  for (Value addend : gate.getAddends()) {
    ins.push_back(addend);
    maps.push_back(rowMap);
  }
  for (Value bias : gate.getBiases()) {
    ins.push_back(bias);
    maps.push_back(vecMap);
  }
  bool hasPeephole = static_cast<bool>(gate.getPeephole());
  if (hasPeephole) {
    ins.push_back(gate.getPeephole());
    maps.push_back(vecMap);
    ins.push_back(gate.getPeepholeState());
    maps.push_back(rowMap);
  }
  maps.push_back(rowMap);
  // Addends and biases are both plain summands, in that order.
  unsigned numTerms = gate.getAddends().size() + gate.getBiases().size();
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, resultType, ins, ValueRange{out}, maps, iterators,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value v = args[0];
               for (unsigned j = 0; j < numTerms; ++j)
                 v = arith::AddFOp::create(nb, l, v, args[1 + j]);
               if (hasPeephole) {
                 Value pc = arith::MulFOp::create(nb, l, args[1 + numTerms],
                                                  args[2 + numTerms]);
                 v = arith::AddFOp::create(nb, l, v, pc);
               }
               linalg::YieldOp::create(nb, l,
                                       buildActivation(nb, l, activation, v));
             })
      .getResult(0);
}

struct GateOpLowering : OpConversionPattern<GateOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(GateOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elementType = resultType.getElementType();
    GateExtents extents(adaptor, resultType);
    assertGateExtents(rewriter, loc, adaptor, extents);

    SmallVector<Value> sizes =
        dynamicSizes(rewriter, loc, resultType, extents.resultSources());
    auto empty = [&]() -> Value {
      return tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                     elementType, sizes);
    };
    // With no products, the accumulator stays this zero fill.
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getZeroAttr(elementType));
    Value acc =
        linalg::FillOp::create(rewriter, loc, zero, empty()).getResult(0);
    acc = buildProducts(rewriter, loc, adaptor, resultType, acc);
    rewriter.replaceOp(op,
                       buildEpilogue(rewriter, loc, adaptor, op.getActivation(),
                                     resultType, acc, empty()));
    return success();
  }
};

//===----------------------------------------------------------------------===//
// lstm.one_minus
//===----------------------------------------------------------------------===//

struct OneMinusOpLowering : OpConversionPattern<OneMinusOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(OneMinusOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<std::pair<Value, int64_t>> from;
    for (int64_t i = 0; i < type.getRank(); ++i)
      from.push_back({input, i});
    Value out = tensor::EmptyOp::create(
        rewriter, loc, type.getShape(), type.getElementType(),
        dynamicSizes(rewriter, loc, type, from));
    auto id = rewriter.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{input}, ValueRange{out},
        ArrayRef<AffineMap>{id, id}, iters,
        [](OpBuilder &b, Location l, ValueRange args) {
          Value one = arith::ConstantOp::create(
              b, l, b.getFloatAttr(args[0].getType(), 1.0));
          linalg::YieldOp::create(
              b, l, arith::SubFOp::create(b, l, one, args[0]).getResult());
        });
    rewriter.replaceOp(op, generic.getResults());
    return success();
  }
};

} // namespace

void mlir::lstm::populateGateToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<GateOpLowering, OneMinusOpLowering>(patterns.getContext());
}
