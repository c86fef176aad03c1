//===- LSTMToLinalg.cpp - Lower the lstm dialect to linalg and scf --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Layers become an scf.for over time carrying the state and the stacked
// outputs; gates become linalg contractions plus one pointwise epilogue.
// Everything stays at tensor level so that the same output feeds the CPU and
// the GPU lowerings.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/LSTMToLinalg/LSTMToLinalg.h"

#include "LoweringUtils.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTLSTMTOLINALGPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

//===----------------------------------------------------------------------===//
// lstm.gate
//===----------------------------------------------------------------------===//

struct GateOpLowering : OpRewritePattern<GateOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GateOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = cast<RankedTensorType>(op.getResult().getType());
    Type elementType = resultType.getElementType();
    MLIRContext *ctx = rewriter.getContext();
    // The batched form has one leading group extent on every operand; the
    // per-gate extents sit `lead` positions further right.
    int64_t lead = resultType.getRank() - 2;
    int64_t rank = resultType.getRank();

    // The batch and hidden extents come from the first product, or from the
    // first addend when the gate has no products, or from the peephole
    // state when it has neither.
    bool hasProducts = !op.getInputs().empty();
    Value rows = !op.getAddends().empty() ? op.getAddends().front()
                                          : op.getPeepholeState();
    Value batchSource = hasProducts ? op.getInputs().front() : rows;
    Value hiddenSource = hasProducts ? op.getWeights().front() : rows;
    int64_t hiddenDim = (hasProducts ? 0 : 1) + lead;
    int64_t b0 = lead, k1 = lead + 1;
    for (auto [k, pair] :
         llvm::enumerate(llvm::zip(op.getInputs(), op.getWeights()))) {
      auto [in, w] = pair;
      assertSameExtent(rewriter, loc, in, b0, batchSource, b0,
                       "lstm.gate: input #" + Twine(k) +
                           " has a different batch size than input #0");
      assertSameExtent(rewriter, loc, w, k1, in, k1,
                       "lstm.gate: weight #" + Twine(k) +
                           " has a different number of columns than input #" +
                           Twine(k) + " has features");
      assertSameExtent(rewriter, loc, w, lead, hiddenSource, hiddenDim,
                       "lstm.gate: weight #" + Twine(k) +
                           " has a different number of rows than weight #0");
    }
    for (auto [a, addend] : llvm::enumerate(op.getAddends())) {
      assertSameExtent(rewriter, loc, addend, b0, batchSource, b0,
                       "lstm.gate: addend #" + Twine(a) +
                           " does not match the gate's batch size");
      assertSameExtent(rewriter, loc, addend, k1, hiddenSource, hiddenDim,
                       "lstm.gate: addend #" + Twine(a) +
                           " does not match the gate's hidden size");
    }
    for (auto [j, bias] : llvm::enumerate(op.getBiases()))
      assertSameExtent(rewriter, loc, bias, lead, hiddenSource, hiddenDim,
                       "lstm.gate: bias #" + Twine(j) +
                           " does not match the gate's hidden size");
    if (Value p = op.getPeephole()) {
      assertSameExtent(rewriter, loc, p, lead, hiddenSource, hiddenDim,
                       "lstm.gate: the peephole weight does not match the "
                       "gate's hidden size");
      assertSameExtent(rewriter, loc, op.getPeepholeState(), b0, batchSource,
                       b0,
                       "lstm.gate: the peephole state has a different batch "
                       "size than the inputs");
      assertSameExtent(rewriter, loc, op.getPeepholeState(), k1, hiddenSource,
                       hiddenDim,
                       "lstm.gate: the peephole state does not match the "
                       "gate's hidden size");
    }
    if (lead) {
      // Every operand must have the same number of groups.
      for (auto [i, v] : llvm::enumerate(op.getOperands()))
        assertSameExtent(rewriter, loc, v, 0, batchSource, 0,
                         "lstm.gate: operand #" + Twine(i) +
                             " has a different number of groups than the "
                             "first");
    }
    SmallVector<std::pair<Value, int64_t>> from;
    if (lead)
      from.push_back({batchSource, 0});
    from.push_back({batchSource, b0});
    from.push_back({hiddenSource, hiddenDim});
    SmallVector<Value> sizes = dynamicSizes(rewriter, loc, resultType, from);
    Value empty = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                          elementType, sizes);
    Value zero = arith::ConstantOp::create(rewriter, loc,
                                           rewriter.getZeroAttr(elementType));
    Value acc = linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);

    if (lead) {
      // acc[l, b, h] += in[l, b, k] * w[l, h, k]: one batched GEMM per
      // product, the weights read transposed through the indexing maps.
      AffineExpr ld, bd, hd, kd;
      bindDims(ctx, ld, bd, hd, kd);
      ArrayAttr maps = rewriter.getAffineMapArrayAttr(
          {AffineMap::get(4, 0, {ld, bd, kd}, ctx),
           AffineMap::get(4, 0, {ld, hd, kd}, ctx),
           AffineMap::get(4, 0, {ld, bd, hd}, ctx)});
      for (auto [in, w] : llvm::zip(op.getInputs(), op.getWeights())) {
        auto matmul =
            linalg::BatchMatmulOp::create(rewriter, loc, TypeRange{resultType},
                                          ValueRange{in, w}, ValueRange{acc});
        matmul.setIndexingMapsAttr(maps);
        acc = matmul.getResult(0);
      }
    } else {
      // acc[b, h] += in[b, k] * w[h, k], one contraction per product.
      AffineExpr bd, hd, kd;
      bindDims(ctx, bd, hd, kd);
      auto inMap = AffineMap::get(3, 0, {bd, kd}, ctx);
      auto wMap = AffineMap::get(3, 0, {hd, kd}, ctx);
      auto accMap = AffineMap::get(3, 0, {bd, hd}, ctx);
      SmallVector<utils::IteratorType> contractionIters = {
          utils::IteratorType::parallel, utils::IteratorType::parallel,
          utils::IteratorType::reduction};
      for (auto [in, w] : llvm::zip(op.getInputs(), op.getWeights())) {
        acc = linalg::GenericOp::create(
                  rewriter, loc, resultType, ValueRange{in, w}, ValueRange{acc},
                  ArrayRef<AffineMap>{inMap, wMap, accMap}, contractionIters,
                  [](OpBuilder &b, Location l, ValueRange args) {
                    Value prod = arith::MulFOp::create(b, l, args[0], args[1]);
                    Value sum = arith::AddFOp::create(b, l, args[2], prod);
                    linalg::YieldOp::create(b, l, sum);
                  })
                  .getResult(0);
      }
    }

    // Epilogue: acc + addends + biases (+ peephole * state), then the
    // activation. With no products, acc is the zero fill above. Biases and
    // the peephole weight are indexed by (group,) feature.
    auto rowMap = AffineMap::getMultiDimIdentityMap(rank, ctx);
    SmallVector<AffineExpr> vecExprs;
    if (lead)
      vecExprs.push_back(getAffineDimExpr(0, ctx));
    vecExprs.push_back(getAffineDimExpr(rank - 1, ctx));
    auto vecMap = AffineMap::get(rank, 0, vecExprs, ctx);
    SmallVector<Value> ins = {acc};
    SmallVector<AffineMap> maps = {rowMap};
    for (Value addend : op.getAddends()) {
      ins.push_back(addend);
      maps.push_back(rowMap);
    }
    for (Value bias : op.getBiases()) {
      ins.push_back(bias);
      maps.push_back(vecMap);
    }
    bool hasPeephole = static_cast<bool>(op.getPeephole());
    if (hasPeephole) {
      ins.push_back(op.getPeephole());
      maps.push_back(vecMap);
      ins.push_back(op.getPeepholeState());
      maps.push_back(rowMap);
    }
    maps.push_back(rowMap);
    // Addends and biases are both plain summands, in that order.
    unsigned numTerms = op.getAddends().size() + op.getBiases().size();
    Activation act = op.getActivation();
    Value out = tensor::EmptyOp::create(rewriter, loc, resultType.getShape(),
                                        elementType, sizes);
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    auto epilogue = linalg::GenericOp::create(
        rewriter, loc, resultType, ins, ValueRange{out}, maps, iters,
        [&](OpBuilder &b, Location l, ValueRange args) {
          Value v = args[0];
          for (unsigned j = 0; j < numTerms; ++j)
            v = arith::AddFOp::create(b, l, v, args[1 + j]);
          if (hasPeephole) {
            Value pc = arith::MulFOp::create(b, l, args[1 + numTerms],
                                             args[2 + numTerms]);
            v = arith::AddFOp::create(b, l, v, pc);
          }
          linalg::YieldOp::create(b, l, buildActivation(b, l, act, v));
        });
    rewriter.replaceOp(op, epilogue.getResults());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// lstm.one_minus
//===----------------------------------------------------------------------===//

struct OneMinusOpLowering : OpRewritePattern<OneMinusOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(OneMinusOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<std::pair<Value, int64_t>> from;
    for (int64_t i = 0; i < type.getRank(); ++i)
      from.push_back({op.getInput(), i});
    Value out = tensor::EmptyOp::create(
        rewriter, loc, type.getShape(), type.getElementType(),
        dynamicSizes(rewriter, loc, type, from));
    auto id = rewriter.getMultiDimIdentityMap(type.getRank());
    SmallVector<utils::IteratorType> iters(type.getRank(),
                                           utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{op.getInput()}, ValueRange{out},
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

//===----------------------------------------------------------------------===//
// lstm.layer
//===----------------------------------------------------------------------===//

/// Selects per batch row between `active` and `inactive` (a tensor or, when
/// null, zeros): `mask[b] ? active[b, ...] : inactive[b, ...]`, where
/// `mask[b] = step < lengths[b]`.
static Value maskRows(OpBuilder &b, Location loc, Value lengths, Value step,
                      Value active, Value inactive) {
  auto type = cast<RankedTensorType>(active.getType());
  MLIRContext *ctx = b.getContext();
  int64_t rank = type.getRank();
  SmallVector<std::pair<Value, int64_t>> from;
  for (int64_t i = 0; i < rank; ++i)
    from.push_back({active, i});
  Value out =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType(),
                              dynamicSizes(b, loc, type, from));
  auto id = AffineMap::getMultiDimIdentityMap(rank, ctx);
  auto rowMap = AffineMap::get(rank, 0, {getAffineDimExpr(0, ctx)}, ctx);
  SmallVector<Value> ins = {lengths, active};
  SmallVector<AffineMap> maps = {rowMap, id};
  if (inactive) {
    ins.push_back(inactive);
    maps.push_back(id);
  }
  maps.push_back(id);
  Type lengthType = cast<RankedTensorType>(lengths.getType()).getElementType();
  Value stepInt = arith::IndexCastOp::create(b, loc, lengthType, step);
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, type, ins, ValueRange{out}, maps, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               Value live = arith::CmpIOp::create(
                   nb, l, arith::CmpIPredicate::slt, stepInt, args[0]);
               Value other =
                   inactive ? args[2]
                            : arith::ConstantOp::create(
                                  nb, l, nb.getZeroAttr(type.getElementType()))
                                  .getResult();
               linalg::YieldOp::create(
                   nb, l,
                   arith::SelectOp::create(nb, l, live, args[1], other)
                       .getResult());
             })
      .getResult(0);
}

struct LayerOpLowering : OpRewritePattern<LayerOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerOp op,
                                PatternRewriter &rewriter) const override {
    // Before anything is created: a pattern that fails must leave the IR as
    // it was.
    for (Value result : op.getOutputs())
      if (cast<RankedTensorType>(result.getType()).isDynamicDim(2))
        return rewriter.notifyMatchFailure(
            op, "outputs need a static feature size");
    Location loc = op.getLoc();
    Value seq0 = op.getInputs().front();
    Value seqLen = tensor::DimOp::create(rewriter, loc, seq0, 0);
    Value batch = tensor::DimOp::create(rewriter, loc, seq0, 1);
    Value c0 = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value c1 = arith::ConstantIndexOp::create(rewriter, loc, 1);
    assertLayerExtents(rewriter, op);

    size_t numStates = op.getInits().size();
    Value lengths = op.getLengths();
    bool reverse = op.isReverse();
    Block &cell = op.getBody().front();
    YieldOp yield = op.getYield();

    // A state that the step emits as an output, new (h of most cells) or
    // old (the tape of a training forward), is not carried by the loop: it
    // lives in one stack of T + 1 rows, the initial state first (last when
    // walking backwards), each step reading its state from the row the
    // previous step wrote and computing the new state in place into the
    // next. The outputs are then views of that stack: the new states skip
    // the initial row, the old ones the final row. A carried state is
    // computed into a temporary and copied into its outputs instead (a copy
    // kernel per step and output on the GPU). Masked layers carry their
    // states: a finished row keeps its state but emits zeros.
    //
    // stackOf[j] is the state whose stack output #j is a view of, and
    // holdsOld[j] whether it is the view of the old states.
    SmallVector<std::optional<unsigned>> stackOf(op.getOutputs().size());
    SmallVector<bool> holdsOld(op.getOutputs().size(), false);
    SmallVector<bool> stacked(numStates, false);
    // The output that is a stacked state's new value, if any: the stack is
    // then that output's buffer.
    SmallVector<std::optional<unsigned>> newOutput(numStates);
    if (!lengths) {
      for (auto [i, arg, newState] :
           llvm::enumerate(op.getStateArgs(), yield.getState())) {
        for (auto [j, out] : llvm::enumerate(yield.getOutputs())) {
          if (stackOf[j])
            continue;
          if (out == arg) {
            stackOf[j] = i;
            holdsOld[j] = true;
          } else if (out == newState && !newOutput[i]) {
            stackOf[j] = i;
            newOutput[i] = j;
          }
        }
        stacked[i] = llvm::is_contained(stackOf, std::optional<unsigned>(i));
      }
    }
    // In a stack, step t writes row t + shift and reads the row of the
    // previous step: t (forward) or t + 1 (reverse).
    Value rowShift = reverse ? c0 : c1;
    Value initRow = reverse ? seqLen : c0;
    Value finalRow = reverse ? c0 : seqLen;

    // Row `row` of a stacked sequence, as a [B, N] tensor, and back.
    auto rowOffsets = [](OpBuilder &b, Value row) {
      return SmallVector<OpFoldResult>{row, b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
    };
    auto readRow = [&](OpBuilder &b, Location l, Value seq, Value row,
                       Type rowType) -> Value {
      auto type = cast<RankedTensorType>(rowType);
      SmallVector<OpFoldResult> sizes = {
          b.getIndexAttr(1), tensor::getMixedSize(b, l, seq, 1),
          type.isDynamicDim(1) ? tensor::getMixedSize(b, l, seq, 2)
                               : b.getIndexAttr(type.getDimSize(1))};
      SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
      return tensor::ExtractSliceOp::create(b, l, type, seq, rowOffsets(b, row),
                                            sizes, strides);
    };
    auto writeRow = [&](OpBuilder &b, Location l, Value rowValue, Value seq,
                        Value row) -> Value {
      SmallVector<OpFoldResult> sizes = {
          b.getIndexAttr(1), tensor::getMixedSize(b, l, rowValue, 0),
          tensor::getMixedSize(b, l, rowValue, 1)};
      SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
      return tensor::InsertSliceOp::create(b, l, rowValue, seq,
                                           rowOffsets(b, row), sizes, strides);
    };
    // An empty stacked sequence of `type` with `extraRows` more rows.
    auto emptySequence = [&](RankedTensorType type,
                             int64_t extraRows) -> Value {
      SmallVector<int64_t> shape(type.getShape());
      SmallVector<Value> sizes;
      if (type.isDynamicDim(0))
        sizes.push_back(
            extraRows ? arith::AddIOp::create(rewriter, loc, seqLen,
                                              arith::ConstantIndexOp::create(
                                                  rewriter, loc, extraRows))
                            .getResult()
                      : seqLen);
      else
        shape[0] += extraRows;
      if (type.isDynamicDim(1))
        sizes.push_back(batch);
      return tensor::EmptyOp::create(rewriter, loc, shape,
                                     type.getElementType(), sizes);
    };

    // Loop-carried values: the carried states, the stacks, the outputs that
    // are not views of a stack.
    SmallVector<Value> iterInits;
    for (auto [i, init] : llvm::enumerate(op.getInits()))
      if (!stacked[i])
        iterInits.push_back(init);
    size_t numCarried = iterInits.size();
    SmallVector<unsigned> stackedStates;
    for (auto [i, init] : llvm::enumerate(op.getInits())) {
      if (!stacked[i])
        continue;
      // The stack has the type of the state's outputs, one more row.
      std::optional<unsigned> j;
      for (auto [k, owner] : llvm::enumerate(stackOf))
        if (owner == i && !j)
          j = k;
      auto type = cast<RankedTensorType>(op.getOutputs()[*j].getType());
      iterInits.push_back(
          writeRow(rewriter, loc, init, emptySequence(type, 1), initRow));
      stackedStates.push_back(i);
    }
    size_t numStacks = stackedStates.size();
    SmallVector<unsigned> plainOutputs;
    for (auto [j, result] : llvm::enumerate(op.getOutputs())) {
      if (stackOf[j])
        continue;
      auto type = cast<RankedTensorType>(result.getType());
      iterInits.push_back(emptySequence(type, 0));
      plainOutputs.push_back(j);
    }

    auto loop = scf::ForOp::create(
        rewriter, loc, c0, seqLen, c1, iterInits,
        [&](OpBuilder &b, Location l, Value iv, ValueRange iterArgs) {
          // Reverse layers walk t = T-1 .. 0 and write at their own index.
          Value t = iv;
          if (reverse) {
            Value last = arith::SubIOp::create(b, l, seqLen, c1);
            t = arith::SubIOp::create(b, l, last, iv);
          }
          ValueRange carried = iterArgs.take_front(numCarried);
          ValueRange stacks = iterArgs.slice(numCarried, numStacks);
          ValueRange accs = iterArgs.drop_front(numCarried + numStacks);
          Value writeRowIndex = arith::AddIOp::create(b, l, t, rowShift);
          Value readRowIndex =
              reverse ? arith::AddIOp::create(b, l, t, c1).getResult() : t;

          IRMapping map;
          for (auto [seq, arg] : llvm::zip(op.getInputs(), op.getInputSlices()))
            map.map(arg, readRow(b, l, seq, t, arg.getType()));
          SmallVector<Value> oldStates;
          size_t nextCarried = 0, nextStack = 0;
          for (auto [i, arg] : llvm::enumerate(op.getStateArgs())) {
            Value state = stacked[i] ? readRow(b, l, stacks[nextStack++],
                                               readRowIndex, arg.getType())
                                     : carried[nextCarried++];
            map.map(arg, state);
            oldStates.push_back(state);
          }

          for (Operation &inner : cell.without_terminator())
            b.clone(inner, map);

          SmallVector<Value> next;
          for (auto [i, newState] : llvm::enumerate(yield.getState())) {
            if (stacked[i])
              continue;
            Value v = map.lookupOrDefault(newState);
            if (lengths)
              v = maskRows(b, l, lengths, t, v, oldStates[i]);
            next.push_back(v);
          }
          for (auto [k, i] : llvm::enumerate(stackedStates))
            next.push_back(writeRow(b, l,
                                    map.lookupOrDefault(yield.getState()[i]),
                                    stacks[k], writeRowIndex));
          for (auto [k, j] : llvm::enumerate(plainOutputs)) {
            Value v = map.lookupOrDefault(yield.getOutputs()[j]);
            if (lengths)
              v = maskRows(b, l, lengths, t, v, Value());
            next.push_back(writeRow(b, l, v, accs[k], t));
          }
          scf::YieldOp::create(b, l, next);
        });

    // Results: the stacked outputs, then the final states.
    auto stackResult = [&](unsigned state) -> Value {
      return loop.getResult(numCarried + (llvm::find(stackedStates, state) -
                                          stackedStates.begin()));
    };
    SmallVector<Value> replacements;
    for (auto [j, result] : llvm::enumerate(op.getOutputs())) {
      if (!stackOf[j]) {
        replacements.push_back(loop.getResult(
            numCarried + numStacks +
            (llvm::find(plainOutputs, j) - plainOutputs.begin())));
        continue;
      }
      // New states start after the initial row, old ones at the first row
      // (forward); the other way round walking backwards.
      Value stack = stackResult(*stackOf[j]);
      Value firstRow = holdsOld[j] == reverse ? c1 : c0;
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<OpFoldResult> sizes = {
          type.isDynamicDim(0) ? OpFoldResult(seqLen)
                               : rewriter.getIndexAttr(type.getDimSize(0)),
          tensor::getMixedSize(rewriter, loc, stack, 1),
          rewriter.getIndexAttr(type.getDimSize(2))};
      SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
      replacements.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, type, stack, rowOffsets(rewriter, firstRow), sizes,
          strides));
    }
    size_t nextCarried = 0;
    for (auto [i, init] : llvm::enumerate(op.getInits()))
      replacements.push_back(stacked[i] ? readRow(rewriter, loc, stackResult(i),
                                                  finalRow, init.getType())
                                        : loop.getResult(nextCarried++));
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Whether every tensor of the module has a size in bytes that fits in 63
/// bits, as far as its static extents tell; reports the first that does
/// not. The lowering computes offsets and strides in 64-bit integers: a
/// weight argument of 384 x (2^63 - 1) would give negative offsets, which
/// upstream's verifiers then report on IR the user never wrote.
static LogicalResult checkTensorSizes(Operation *root) {
  auto tooLarge = [](Type type) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || !t.getElementType().isIntOrIndexOrFloat())
      return false;
    int64_t bytes = std::max<int64_t>(
        1, llvm::divideCeil(t.getElementType().getIntOrFloatBitWidth(), 8));
    for (int64_t d : t.getShape())
      if (!ShapedType::isDynamic(d) && llvm::MulOverflow(bytes, d, bytes))
        return true;
    return false;
  };
  WalkResult result = root->walk([&](Operation *op) {
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (tooLarge(arg.getType())) {
            emitError(arg.getLoc())
                << "argument #" << arg.getArgNumber() << " of type "
                << arg.getType()
                << " is larger than 2^63 bytes, more than any buffer can be";
            return WalkResult::interrupt();
          }
    for (OpResult r : op->getResults())
      if (tooLarge(r.getType())) {
        op->emitError("result #")
            << r.getResultNumber() << " of type " << r.getType()
            << " is larger than 2^63 bytes, more than any buffer can be";
        return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

/// Whether every tensor.dim with a constant index names one of the tensor's
/// dimensions; reports the first that does not. The verifier accepts any
/// index (out of range, the op is undefined at run time), but upstream's
/// folders of memref.dim, which bufferization makes of it, read the shape at
/// that index: an index of -1 crashed the GPU lowering (found by the fuzzer
/// of test/Fuzz).
static LogicalResult checkDimIndices(Operation *root) {
  WalkResult result = root->walk([](tensor::DimOp dim) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto type = dyn_cast<RankedTensorType>(dim.getSource().getType());
    if (!index || !type || (*index >= 0 && *index < type.getRank()))
      return WalkResult::advance();
    dim.emitOpError("index ") << *index << " is not a dimension of " << type
                              << " (0 to " << type.getRank() - 1 << ")";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

struct ConvertLSTMToLinalgPass
    : lstm::impl::ConvertLSTMToLinalgPassBase<ConvertLSTMToLinalgPass> {
  void runOnOperation() override {
    if (failed(checkTensorSizes(getOperation())) ||
        failed(checkDimIndices(getOperation())))
      return signalPassFailure();
    // Layers that statically run no step are their initial states and empty
    // outputs (EmptyLayers.h): lowered, they would slice dimensions of
    // extent 0, which upstream's verifiers reject.
    replaceEmptyLayers(getOperation());
    replaceEmptyConcats(getOperation());
    RewritePatternSet patterns(&getContext());
    populateLSTMToLinalgPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError(
          "convert-lstm-to-linalg: the rewrite did not converge");
      return signalPassFailure();
    }
    // Whatever a pattern declined to lower is reported, not left behind.
    WalkResult result =
        getOperation()->walk<WalkOrder::PreOrder>([](Operation *op) {
          if (auto layer = dyn_cast<LayerOp>(op))
            for (auto [i, out] : llvm::enumerate(layer.getOutputs()))
              if (cast<RankedTensorType>(out.getType()).isDynamicDim(2)) {
                layer.emitOpError("output #")
                    << i << " of type " << out.getType()
                    << " cannot be lowered: the output sequence needs a static "
                       "feature extent (N of [T, B, N])";
                return WalkResult::interrupt();
              }
          if (isa<LSTMDialect>(op->getDialect())) {
            op->emitError("could not be lowered to linalg (see the op's "
                          "documentation for the supported forms)");
            return WalkResult::interrupt();
          }
          return WalkResult::advance();
        });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace

void mlir::lstm::populateLSTMToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LayerOpLowering, GateOpLowering, OneMinusOpLowering>(
      patterns.getContext());
  populatePointwiseToLinalgPatterns(patterns);
}
