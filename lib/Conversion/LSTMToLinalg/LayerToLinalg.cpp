//===- LayerToLinalg.cpp - Lower lstm.layer to an scf.for over time -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A layer becomes an scf.for over time whose body is a copy of the cell
// (its lstm ops are lowered in turn by the other patterns), carrying the
// states and the stacked output sequences at tensor level.
//
//===----------------------------------------------------------------------===//

#include "LoweringUtils.h"

#include "lstm/Conversion/LSTMToLinalg/LSTMToLinalg.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

/// Selects per batch row between `active` and `inactive` (a tensor or, when
/// null, zeros): `mask[b] ? active[b, ...] : inactive[b, ...]`, where
/// `mask[b] = step < lengths[b]`.
Value maskRows(OpBuilder &b, Location loc, Value lengths, Value step,
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

/// Offsets of row `row` of a stacked [T, B, N] sequence.
SmallVector<OpFoldResult> rowOffsets(OpBuilder &b, Value row) {
  return {row, b.getIndexAttr(0), b.getIndexAttr(0)};
}

/// Row `row` of a stacked sequence, as a [B, N] tensor of `rowType`.
Value readRow(OpBuilder &b, Location l, Value seq, Value row, Type rowType) {
  auto type = cast<RankedTensorType>(rowType);
  SmallVector<OpFoldResult> sizes = {
      b.getIndexAttr(1), tensor::getMixedSize(b, l, seq, 1),
      type.isDynamicDim(1) ? tensor::getMixedSize(b, l, seq, 2)
                           : b.getIndexAttr(type.getDimSize(1))};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, l, type, seq, rowOffsets(b, row),
                                        sizes, strides);
}

/// `seq` with row `row` replaced by the [B, N] tensor `rowValue`.
Value writeRow(OpBuilder &b, Location l, Value rowValue, Value seq, Value row) {
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1),
                                     tensor::getMixedSize(b, l, rowValue, 0),
                                     tensor::getMixedSize(b, l, rowValue, 1)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::InsertSliceOp::create(b, l, rowValue, seq, rowOffsets(b, row),
                                       sizes, strides);
}

/// How a layer's states and outputs map onto the loop.
///
/// A state that the step emits as an output, new (h of most cells) or old
/// (the tape of a training forward), is not carried by the loop: it lives in
/// one stack of T + 1 rows, the initial state first (last when walking
/// backwards), each step reading its state from the row the previous step
/// wrote and computing the new state in place into the next. The outputs
/// are then views of that stack: the new states skip the initial row, the
/// old ones the final row. A carried state is computed into a temporary and
/// copied into its outputs instead (a copy kernel per step and output on the
/// GPU). Masked layers carry their states: a finished row keeps its state
/// but emits zeros.
struct StatePlan {
  explicit StatePlan(LayerOp op);

  /// stackOf[j] is the state whose stack output #j is a view of, and
  /// holdsOld[j] whether it is the view of the old states.
  SmallVector<std::optional<unsigned>> stackOf;
  SmallVector<bool> holdsOld;
  /// Whether state #i lives in a stack.
  SmallVector<bool> stacked;
  /// The loop's iteration values, in order: the carried states, the stacks
  /// (stackedStates[k] is the state of stack #k), the outputs that are not
  /// views of a stack (plainOutputs[k] is the output of accumulator #k).
  size_t numCarried = 0;
  SmallVector<unsigned> stackedStates;
  SmallVector<unsigned> plainOutputs;
};

StatePlan::StatePlan(LayerOp op)
    : stackOf(op.getOutputs().size()), holdsOld(op.getOutputs().size()),
      stacked(op.getInits().size()) {
  YieldOp yield = op.getYield();
  // The output that is a stacked state's new value, if any: the stack is
  // then that output's buffer.
  SmallVector<std::optional<unsigned>> newOutput(op.getInits().size());
  if (!op.getLengths()) {
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
  for (unsigned i = 0, e = stacked.size(); i < e; ++i) {
    if (stacked[i])
      stackedStates.push_back(i);
    else
      ++numCarried;
  }
  for (unsigned j = 0, e = stackOf.size(); j < e; ++j)
    if (!stackOf[j])
      plainOutputs.push_back(j);
}

/// The lowering of one layer: its extents, its StatePlan and the steps
/// that build the loop and the layer's replacements.
class LayerLowering {
public:
  LayerLowering(OpBuilder &b, LayerOp op, LayerOp::Adaptor adaptor)
      : b(b), op(op), adaptor(adaptor), plan(op), loc(op.getLoc()) {
    Value seq0 = adaptor.getInputs().front();
    seqLen = tensor::DimOp::create(b, loc, seq0, 0);
    batch = tensor::DimOp::create(b, loc, seq0, 1);
    c0 = arith::ConstantIndexOp::create(b, loc, 0);
    c1 = arith::ConstantIndexOp::create(b, loc, 1);
  }

  /// The values that replace the layer's results.
  SmallVector<Value> lower() {
    assertLayerExtents(b, op);
    return buildResults(buildLoop());
  }

private:
  /// An empty stacked sequence of `type` with `extraRows` more rows: a
  /// bufferization.alloc_tensor, each a buffer of its own. (Equal
  /// tensor.empty ops are one value after CSE; the loop's iteration values
  /// started from it would share a buffer, and one-shot bufferization gave
  /// all but one of them a buffer of its own and the loop's results strided
  /// types, which a copy then turned back into a plain buffer.)
  Value emptySequence(RankedTensorType type, int64_t extraRows) {
    SmallVector<int64_t> shape(type.getShape());
    SmallVector<Value> sizes;
    if (type.isDynamicDim(0))
      sizes.push_back(
          extraRows ? arith::AddIOp::create(
                          b, loc, seqLen,
                          arith::ConstantIndexOp::create(b, loc, extraRows))
                          .getResult()
                    : seqLen);
    else
      shape[0] += extraRows;
    if (type.isDynamicDim(1))
      sizes.push_back(batch);
    return bufferization::AllocTensorOp::create(
        b, loc, RankedTensorType::get(shape, type.getElementType()), sizes);
  }

  /// The loop's initial iteration values, in StatePlan's order.
  SmallVector<Value> buildIterInits() {
    Value initRow = op.isReverse() ? seqLen : c0;
    SmallVector<Value> iterInits;
    for (auto [i, init] : llvm::enumerate(adaptor.getInits()))
      if (!plan.stacked[i])
        iterInits.push_back(init);
    for (unsigned i : plan.stackedStates) {
      // The stack has the type of the state's first output, one more row.
      unsigned j = llvm::find(plan.stackOf, std::optional<unsigned>(i)) -
                   plan.stackOf.begin();
      auto type = cast<RankedTensorType>(op.getOutputs()[j].getType());
      iterInits.push_back(writeRow(b, loc, adaptor.getInits()[i],
                                   emptySequence(type, 1), initRow));
    }
    for (unsigned j : plan.plainOutputs)
      iterInits.push_back(emptySequence(
          cast<RankedTensorType>(op.getOutputs()[j].getType()), 0));
    return iterInits;
  }

  /// The time loop: per step, the slices of the inputs and the old states
  /// mapped onto the cell's arguments, a copy of the cell, and the new
  /// states and outputs written back.
  scf::ForOp buildLoop() {
    bool reverse = op.isReverse();
    Value lengths = adaptor.getLengths();
    YieldOp yield = op.getYield();
    size_t numStacks = plan.stackedStates.size();
    // In a stack, step t writes row t + shift and reads the row of the
    // previous step: t (forward) or t + 1 (reverse).
    Value rowShift = reverse ? c0 : c1;
    return scf::ForOp::create(
        b, loc, c0, seqLen, c1, buildIterInits(),
        [&](OpBuilder &nb, Location l, Value iv, ValueRange iterArgs) {
          // Reverse layers walk t = T-1 .. 0 and write at their own index.
          Value t = iv;
          if (reverse) {
            Value last = arith::SubIOp::create(nb, l, seqLen, c1);
            t = arith::SubIOp::create(nb, l, last, iv);
          }
          ValueRange carried = iterArgs.take_front(plan.numCarried);
          ValueRange stacks = iterArgs.slice(plan.numCarried, numStacks);
          ValueRange accs = iterArgs.drop_front(plan.numCarried + numStacks);
          Value writeRowIndex = arith::AddIOp::create(nb, l, t, rowShift);
          Value readRowIndex =
              reverse ? arith::AddIOp::create(nb, l, t, c1).getResult() : t;

          IRMapping map;
          for (auto [seq, arg] :
               llvm::zip(adaptor.getInputs(), op.getInputSlices()))
            map.map(arg, readRow(nb, l, seq, t, arg.getType()));
          SmallVector<Value> oldStates;
          size_t nextCarried = 0, nextStack = 0;
          for (auto [i, arg] : llvm::enumerate(op.getStateArgs())) {
            Value state = plan.stacked[i] ? readRow(nb, l, stacks[nextStack++],
                                                    readRowIndex, arg.getType())
                                          : carried[nextCarried++];
            map.map(arg, state);
            oldStates.push_back(state);
          }

          for (Operation &inner : op.getBody().front().without_terminator())
            nb.clone(inner, map);

          SmallVector<Value> next;
          for (auto [i, newState] : llvm::enumerate(yield.getState())) {
            if (plan.stacked[i])
              continue;
            Value v = map.lookupOrDefault(newState);
            if (lengths)
              v = maskRows(nb, l, lengths, t, v, oldStates[i]);
            next.push_back(v);
          }
          for (auto [k, i] : llvm::enumerate(plan.stackedStates))
            next.push_back(writeRow(nb, l,
                                    map.lookupOrDefault(yield.getState()[i]),
                                    stacks[k], writeRowIndex));
          for (auto [k, j] : llvm::enumerate(plan.plainOutputs)) {
            Value v = map.lookupOrDefault(yield.getOutputs()[j]);
            if (lengths)
              v = maskRows(nb, l, lengths, t, v, Value());
            next.push_back(writeRow(nb, l, v, accs[k], t));
          }
          scf::YieldOp::create(nb, l, next);
        });
  }

  /// The layer's results from the loop's: the stacked outputs (views of a
  /// stack, or accumulated sequences), then the final states.
  SmallVector<Value> buildResults(scf::ForOp loop) {
    bool reverse = op.isReverse();
    Value finalRow = reverse ? c0 : seqLen;
    auto stackResult = [&](unsigned state) -> Value {
      return loop.getResult(
          plan.numCarried +
          (llvm::find(plan.stackedStates, state) - plan.stackedStates.begin()));
    };
    SmallVector<Value> results;
    for (auto [j, result] : llvm::enumerate(op.getOutputs())) {
      if (!plan.stackOf[j]) {
        results.push_back(loop.getResult(
            plan.numCarried + plan.stackedStates.size() +
            (llvm::find(plan.plainOutputs, j) - plan.plainOutputs.begin())));
        continue;
      }
      // New states start after the initial row, old ones at the first row
      // (forward); the other way round walking backwards.
      Value stack = stackResult(*plan.stackOf[j]);
      Value firstRow = plan.holdsOld[j] == reverse ? c1 : c0;
      auto type = cast<RankedTensorType>(result.getType());
      SmallVector<OpFoldResult> sizes = {
          type.isDynamicDim(0) ? OpFoldResult(seqLen)
                               : b.getIndexAttr(type.getDimSize(0)),
          tensor::getMixedSize(b, loc, stack, 1),
          b.getIndexAttr(type.getDimSize(2))};
      SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
      results.push_back(tensor::ExtractSliceOp::create(
          b, loc, type, stack, rowOffsets(b, firstRow), sizes, strides));
    }
    size_t nextCarried = 0;
    for (auto [i, init] : llvm::enumerate(op.getInits()))
      results.push_back(plan.stacked[i] ? readRow(b, loc, stackResult(i),
                                                  finalRow, init.getType())
                                        : loop.getResult(nextCarried++));
    return results;
  }

  OpBuilder &b;
  LayerOp op;
  LayerOp::Adaptor adaptor;
  StatePlan plan;
  Location loc;
  Value seqLen, batch, c0, c1;
};

struct LayerOpLowering : OpConversionPattern<LayerOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(LayerOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    // Before anything is created: a pattern that fails must leave the IR as
    // it was. (The pass reports these layers before it converts.)
    for (Value result : op.getOutputs())
      if (cast<RankedTensorType>(result.getType()).isDynamicDim(2))
        return rewriter.notifyMatchFailure(
            op, "outputs need a static feature size");
    rewriter.replaceOp(op, LayerLowering(rewriter, op, adaptor).lower());
    return success();
  }
};

} // namespace

SmallVector<bool> mlir::lstm::perStepOutputsInStateStacks(LayerOp layer) {
  StatePlan plan(layer);
  SmallVector<bool> views;
  for (std::optional<unsigned> state : plan.stackOf)
    views.push_back(state.has_value());
  return views;
}

void mlir::lstm::populateLayerToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<LayerOpLowering>(patterns.getContext());
}
