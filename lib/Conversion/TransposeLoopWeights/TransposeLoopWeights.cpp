//===- TransposeLoopWeights.cpp - A loop's fp32 weights reduction-major ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A step's product multiplies the step's values by weights that no step
// changes. The weights come as [N, K] (the gate's output columns, then its
// terms), which cuBLAS multiplies through its "T" form; stored [K, N] (the
// "N" form) cuBLAS's fp32 kernels run some shapes faster and others slower
// (lib/Runtime/GemmWeightsLayout.cpp), so the runtime is asked before the
// loop, at each call, and answers from a measurement it makes once per
// shape. A transposition costs one read and write of the weights, against
// one read of them per step.
//
// The pass runs on tensors, before bufferization, so that the transposed
// weights are an ordinary value that one-shot bufferization gives a buffer,
// made where the loop starts. It leaves the contraction's body alone: only
// the operand and its indexing map change, which lstm-gemm-to-cublas reads
// as a transposition flag.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/TransposeLoopWeights/TransposeLoopWeights.h"

#include "lstm/Conversion/SplitTF32Gemms/SplitTF32Gemms.h"
#include "lstm/Conversion/Utils/ProductExtents.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include "llvm/ADT/DenseMap.h"

#include <tuple>

namespace mlir::lstm {
#define GEN_PASS_DEF_TRANSPOSELOOPWEIGHTSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

constexpr StringLiteral kQueryFunction = "lstmRuntimeGemmFasterTransB";

/// A product whose second input (its weights) the loops around it do not
/// change.
struct LoopWeight {
  /// The outermost loop around the product that does not define them.
  LoopLikeOpInterface loop;
  /// The product's row, column and reduction dimensions, and its batch's.
  unsigned m, n, k;
  SmallVector<unsigned> batch;
  /// Whether the first input is read transposed ([K, M]).
  bool transA;
};

/// What `op` is if it is an f32 contraction on tensors (not one made for
/// TF32) with one row, column and reduction dimension, in a loop that does
/// not define its second input but does define its first, reading the
/// second with the reduction last and the columns before it.
std::optional<LoopWeight> matchLoopWeight(linalg::LinalgOp op) {
  if (op->hasAttr(lstm::kTF32OperandsAttr))
    return std::nullopt;
  std::optional<lstm::Contraction> c = lstm::matchF32Contraction(op);
  if (!c)
    return std::nullopt;
  MLIRContext *context = op.getContext();
  unsigned m = c->m, n = c->n, k = c->k;
  auto dim = [&](unsigned d) { return getAffineDimExpr(d, context); };
  AffineMap first = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  AffineMap second = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  unsigned rank = second.getNumResults(), firstRank = first.getNumResults();
  if (rank < 2 || firstRank < 2 || !second.isProjectedPermutation() ||
      !first.isProjectedPermutation() || second.getResult(rank - 1) != dim(k) ||
      second.getResult(rank - 2) != dim(n))
    return std::nullopt;
  // The first input's matrix as cuBLAS reads it: [M, K] or transposed.
  AffineExpr firstLast = first.getResult(firstRank - 1);
  AffineExpr firstBefore = first.getResult(firstRank - 2);
  bool transA = firstLast == dim(m);
  if (!(firstLast == dim(k) && firstBefore == dim(m)) &&
      !(transA && firstBefore == dim(k)))
    return std::nullopt;
  Value weights = op.getDpsInputs()[1];
  LoopLikeOpInterface loop;
  for (Operation *parent = op->getParentOp();
       parent && !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp()) {
    auto around = dyn_cast<LoopLikeOpInterface>(parent);
    if (!around)
      continue;
    if (!around.isDefinedOutsideOfLoop(weights))
      break;
    loop = around;
  }
  // A product that no loop around it changes is not a step's.
  if (!loop || loop.isDefinedOutsideOfLoop(op.getDpsInputs()[0]))
    return std::nullopt;
  return LoopWeight{loop, m, n, k, c->batch, transA};
}

/// A test of `loop`'s start that the product must fail to run: where `op`
/// is in the else branch of an scf.if whose condition is `g`, or `g ∧ x`,
/// with `g` defined before `loop`. Null where there is none.
Value guardBeforeLoop(Operation *op, LoopLikeOpInterface loop) {
  auto branch = dyn_cast<scf::IfOp>(op->getParentOp());
  if (!branch || op->getParentRegion() != &branch.getElseRegion())
    return Value();
  Value condition = branch.getCondition();
  if (loop.isDefinedOutsideOfLoop(condition))
    return condition;
  if (auto both = condition.getDefiningOp<arith::AndIOp>())
    for (Value side : {both.getLhs(), both.getRhs()})
      if (loop.isDefinedOutsideOfLoop(side))
        return side;
  return Value();
}

/// `value` with its last two dimensions swapped.
Value transposeLastTwo(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t rank = type.getRank();
  SmallVector<int64_t> permutation =
      llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(permutation[rank - 2], permutation[rank - 1]);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  std::swap(sizes[rank - 2], sizes[rank - 1]);
  Value init = tensor::EmptyOp::create(b, loc, sizes, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      ->getResult(0);
}

/// The runtime's answer for the weights of a loop: whether the product
/// reads them transposed (an i1 before the loop), and the transposition
/// (of a fully dynamic type: where it is not made, an empty tensor of no
/// elements stands for it).
struct Transposition {
  Value used, weights;
};

struct TransposeLoopWeightsPass
    : lstm::impl::TransposeLoopWeightsPassBase<TransposeLoopWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, LoopWeight>> products;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (std::optional<LoopWeight> weight = matchLoopWeight(op))
        products.push_back({op, *weight});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, weight] : products)
      rewrite(rewriter, op, weight);
  }

  /// The extent of `op`'s loop dimension `dim` before `weight.loop`, as an
  /// i64 built at `b`'s insertion point; null where it cannot be built.
  Value extentBefore(OpBuilder &b, linalg::LinalgOp op, unsigned dim) {
    Location loc = op.getLoc();
    int64_t extent = op.getStaticLoopRanges()[dim];
    if (!ShapedType::isDynamic(extent))
      return arith::ConstantIntOp::create(b, loc, extent, 64);
    Value index = lstm::extentBeforeLoops(b, op, dim);
    if (!index)
      return Value();
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  }

  /// The question and the transposition before `weight.loop` for `op`'s
  /// weights (where `guard` does not hold, where there is one), made once
  /// for each value, loop and guard; nothing where the product's sizes
  /// cannot be built there.
  std::optional<Transposition> transpositionFor(OpBuilder &b,
                                                linalg::LinalgOp op,
                                                const LoopWeight &weight,
                                                Value guard) {
    Value weights = op.getDpsInputs()[1];
    LoopLikeOpInterface loop = weight.loop;
    auto key = std::make_tuple(weights, loop.getOperation(), guard);
    if (auto it = transpositions.find(key); it != transpositions.end())
      return it->second;
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPoint(loop);
    Location loc = loop->getLoc();
    SmallVector<Value> sizes;
    for (unsigned dim : {weight.m, weight.n, weight.k})
      sizes.push_back(extentBefore(b, op, dim));
    Value batch = arith::ConstantIntOp::create(b, loc, 1, 64);
    for (unsigned dim : weight.batch) {
      Value extent = extentBefore(b, op, dim);
      batch =
          extent ? b.createOrFold<arith::MulIOp>(loc, batch, extent) : Value();
      if (!batch)
        break;
    }
    sizes.push_back(batch);
    if (llvm::is_contained(sizes, Value()))
      return std::nullopt;
    // A product below min-size stays a generated kernel (lstm-gemm-to-cublas):
    // the runtime is not asked about it (nor cuBLAS loaded for that).
    Value enough;
    if (minSize > 1) {
      Value work = sizes[0];
      for (Value size : ArrayRef(sizes).drop_front())
        work = b.createOrFold<arith::MulIOp>(loc, work, size);
      if (std::optional<int64_t> known = getConstantIntValue(work)) {
        if (*known < minSize)
          return std::nullopt;
      } else {
        enough = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sge, work,
            arith::ConstantIntOp::create(b, loc, minSize, 64));
      }
    }

    SmallVector<Value> arguments{
        arith::ConstantIntOp::create(
            b, loc, static_cast<int64_t>(computeType.getValue()), 32),
        arith::ConstantIntOp::create(b, loc, weight.transA ? 1 : 0, 32)};
    llvm::append_range(arguments, sizes);
    func::FuncOp query = declareQuery();
    auto ask = [&](OpBuilder &ab) {
      return func::CallOp::create(ab, loc, query, arguments).getResult(0);
    };
    Value transB;
    if (!enough) {
      transB = ask(b);
    } else {
      auto asked = scf::IfOp::create(b, loc, TypeRange{b.getI32Type()}, enough,
                                     /*addThenBlock=*/true,
                                     /*addElseBlock=*/true);
      OpBuilder then = asked.getThenBodyBuilder();
      scf::YieldOp::create(then, loc, ValueRange{ask(then)});
      OpBuilder otherwise = asked.getElseBodyBuilder();
      scf::YieldOp::create(
          otherwise, loc,
          ValueRange{arith::ConstantIntOp::create(otherwise, loc, 1, 32)});
      transB = asked.getResult(0);
    }
    Value used =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, transB,
                              arith::ConstantIntOp::create(b, loc, 0, 32));
    if (guard)
      used = arith::AndIOp::create(
          b, loc, used,
          arith::XOrIOp::create(b, loc, guard,
                                arith::ConstantIntOp::create(b, loc, 1, 1)));

    // Where the transposition is not read, an empty tensor stands for it:
    // its extents (dynamic in the branch's type) zero, so that no buffer of
    // the weights' size is allocated for it.
    auto type = cast<RankedTensorType>(weights.getType());
    SmallVector<int64_t> dynamic(type.getRank(), ShapedType::kDynamic);
    auto anyShape = RankedTensorType::get(dynamic, type.getElementType());
    auto branch = scf::IfOp::create(b, loc, TypeRange{anyShape}, used,
                                    /*addThenBlock=*/true,
                                    /*addElseBlock=*/true);
    OpBuilder then = branch.getThenBodyBuilder();
    Value made = transposeLastTwo(then, loc, weights);
    scf::YieldOp::create(
        then, loc,
        ValueRange{tensor::CastOp::create(then, loc, anyShape, made)});
    OpBuilder otherwise = branch.getElseBodyBuilder();
    Value zero = arith::ConstantIndexOp::create(otherwise, loc, 0);
    SmallVector<Value> zeros(type.getRank(), zero);
    scf::YieldOp::create(
        otherwise, loc,
        ValueRange{tensor::EmptyOp::create(otherwise, loc, anyShape, zeros)});
    Transposition t{used, branch.getResult(0)};
    transpositions[key] = t;
    return t;
  }

  /// `int32_t lstmRuntimeGemmFasterTransB(int32_t computeType, int32_t
  /// transA, int64_t m, int64_t n, int64_t k, int64_t batch)`, declared
  /// once in the module.
  func::FuncOp declareQuery() {
    ModuleOp module = getOperation();
    if (auto f = module.lookupSymbol<func::FuncOp>(kQueryFunction))
      return f;
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto f = func::FuncOp::create(
        b, module.getLoc(), kQueryFunction,
        b.getFunctionType({i32, i32, i64, i64, i64, i64}, {i32}));
    f.setPrivate();
    return f;
  }

  /// `op` reading `transposed` as its weights where given, built at `b`'s
  /// insertion point (the accumulator's zero fill cloned before it where
  /// only `op` reads it, for lstm-gemm-to-cublas to fold into the call).
  Operation *productOf(OpBuilder &b, linalg::LinalgOp op, Value transposed,
                       bool cloneFill) {
    Value accumulator =
        cloneFill ? b.clone(*op.getDpsInits()[0].getDefiningOp())->getResult(0)
                  : Value();
    Operation *product = b.clone(*op);
    if (accumulator)
      product->setOperand(op.getNumDpsInputs(), accumulator);
    if (!transposed)
      return product;
    product->setOperand(1, transposed);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<AffineExpr> results(maps[1].getResults());
    std::swap(results[results.size() - 2], results[results.size() - 1]);
    maps[1] = AffineMap::get(maps[1].getNumDims(), maps[1].getNumSymbols(),
                             results, op.getContext());
    product->setAttr("indexing_maps", b.getAffineMapArrayAttr(maps));
    return product;
  }

  void rewrite(IRRewriter &rewriter, linalg::LinalgOp op,
               const LoopWeight &weight) {
    Value guard = guardBeforeLoop(op, weight.loop);
    std::optional<Transposition> t =
        transpositionFor(rewriter, op, weight, guard);
    if (!t)
      return;
    Value init = op.getDpsInits()[0];
    auto fill = init.getDefiningOp<linalg::FillOp>();
    bool cloneFill = fill && init.hasOneUse();
    rewriter.setInsertionPoint(op);
    auto branch =
        scf::IfOp::create(rewriter, op.getLoc(), op->getResultTypes(), t->used,
                          /*addThenBlock=*/true, /*addElseBlock=*/true);
    OpBuilder then = branch.getThenBodyBuilder();
    scf::YieldOp::create(
        then, op.getLoc(),
        productOf(then, op, t->weights, cloneFill)->getResults());
    OpBuilder otherwise = branch.getElseBodyBuilder();
    scf::YieldOp::create(
        otherwise, op.getLoc(),
        productOf(otherwise, op, Value(), cloneFill)->getResults());
    rewriter.replaceOp(op, branch.getResults());
    if (cloneFill && fill->use_empty())
      rewriter.eraseOp(fill);
  }

  DenseMap<std::tuple<Value, Operation *, Value>, Transposition> transpositions;
};

} // namespace
