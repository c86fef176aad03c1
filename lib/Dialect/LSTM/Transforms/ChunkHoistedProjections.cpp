//===- ChunkHoistedProjections.cpp - Hoisted projections a chunk at a time ===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A hoisted input projection is one GEMM over all T·B rows; its [T, B, N]
// result is read back one step at a time. On a CPU the steps find it out of
// cache. Splitting the layer into chunks of steps, each projecting its own
// rows just before its steps run, keeps a GEMM of many rows and reads the
// projection while it is still in cache.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/HoistedInputs.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMCHUNKHOISTEDPROJECTIONSPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

/// The bytes of `gate`'s weights, if their shapes are static.
static std::optional<int64_t> staticWeightBytes(GateOp gate) {
  int64_t bytes = 0;
  for (Value weight : gate.getWeights()) {
    auto type = cast<RankedTensorType>(weight.getType());
    if (!type.hasStaticShape())
      return std::nullopt;
    bytes += type.getNumElements() *
             std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  }
  return bytes;
}

/// `type` with its first dimension dynamic.
static RankedTensorType withDynamicSteps(Type type) {
  auto ranked = cast<RankedTensorType>(type);
  SmallVector<int64_t> shape(ranked.getShape());
  shape[0] = ShapedType::kDynamic;
  return ranked.clone(shape);
}

/// Steps [t0, t0 + steps) of the [T, ...] tensor `seq`.
static Value sliceSteps(OpBuilder &b, Location loc, Value seq, Value t0,
                        Value steps) {
  auto type = cast<RankedTensorType>(seq.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, seq);
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[0] = t0;
  sizes[0] = steps;
  return tensor::ExtractSliceOp::create(b, loc, withDynamicSteps(type), seq,
                                        offsets, sizes, strides);
}

/// The projection of steps [t0, t0 + steps): `hoisted`'s ops cloned on
/// those steps of its sequence.
static Value projectSteps(OpBuilder &b, Location loc, HoistedInput hoisted,
                          Value t0, Value steps) {
  Value part = sliceSteps(b, loc, hoisted.sequence, t0, steps);
  IRMapping mapping;
  for (OpOperand &operand : hoisted.gate->getOpOperands()) {
    auto collapse = operand.get().getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse || collapse.getSrc() != hoisted.sequence ||
        mapping.contains(collapse.getResult()))
      continue;
    mapping.map(collapse.getResult(),
                tensor::CollapseShapeOp::create(
                    b, loc, part, collapse.getReassociationIndices())
                    .getResult());
  }
  Operation *gate = b.clone(*hoisted.gate, mapping);
  gate->getResult(0).setType(withDynamicSteps(gate->getResult(0).getType()));
  SmallVector<OpFoldResult> shape = hoisted.expand.getMixedOutputShape();
  shape[0] = steps;
  auto type = withDynamicSteps(hoisted.expand.getType());
  return tensor::ExpandShapeOp::create(b, loc, type, gate->getResult(0),
                                       hoisted.expand.getReassociationIndices(),
                                       shape);
}

static Value indexConstant(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// Rewrites `layer` into the loop over chunks.
static void chunkLayer(IRRewriter &rewriter, LayerOp layer,
                       HoistedInput hoisted, int64_t chunkBytes,
                       int64_t weightsPerChunk, func::FuncOp threadsFunction) {
  Location loc = layer.getLoc();
  rewriter.setInsertionPoint(layer);
  // T, B and N from the projection's shape (not from the projection, which
  // the chunks replace).
  SmallVector<OpFoldResult> projectionShape =
      hoisted.expand.getMixedOutputShape();
  auto asValue = [&](OpFoldResult size) {
    return getValueOrCreateConstantIndexOp(rewriter, loc, size);
  };
  Value steps = asValue(projectionShape[0]);
  Value batch = asValue(projectionShape[1]);
  Value columns = asValue(projectionShape[2]);
  // Steps a chunk: max(1, chunk / (B · N · element size)), the chunk
  // `chunkBytes` (a thread's where the threads are known: each has its
  // cache). Where `chunkBytes` is not more than `weightsPerChunk` times the
  // projection's weights, the projection stays whole (one chunk of T
  // steps): the weights, which the GEMM streams (and a GEMM library packs
  // at every call, once a chunk), would push the chunk out of a thread's
  // cache before the steps read it.
  auto inputType = cast<RankedTensorType>(hoisted.expand.getType());
  int64_t elementBytes =
      std::max<int64_t>(1, inputType.getElementTypeBitWidth() / 8);
  auto mul = [&](Value a, Value b) {
    return arith::MulIOp::create(rewriter, loc, a, b).getResult();
  };
  Value one = indexConstant(rewriter, loc, 1);
  Value size = indexConstant(rewriter, loc, elementBytes);
  Value stepBytes = arith::MaxUIOp::create(rewriter, loc,
                                           mul(mul(batch, columns), size), one);
  Value chunkSize = indexConstant(rewriter, loc, chunkBytes);
  if (threadsFunction)
    chunkSize =
        mul(chunkSize, buildThreadCount(rewriter, loc, threadsFunction));
  Value chunk = arith::MaxUIOp::create(
      rewriter, loc,
      arith::DivUIOp::create(rewriter, loc, chunkSize, stepBytes), one);
  // Static weights were decided before (the layer is not chunked where they
  // are too large); dynamic ones at run time.
  if (weightsPerChunk && !staticWeightBytes(hoisted.gate)) {
    Value weightBytes = indexConstant(rewriter, loc, 0);
    for (Value weight : hoisted.gate.getWeights()) {
      Value bytes = size;
      for (int64_t d = 0,
                   e = cast<RankedTensorType>(weight.getType()).getRank();
           d < e; ++d)
        bytes = mul(bytes, getValueOrCreateConstantIndexOp(
                               rewriter, loc,
                               tensor::getMixedSize(rewriter, loc, weight, d)));
      weightBytes = arith::AddIOp::create(rewriter, loc, weightBytes, bytes);
    }
    Value pays = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::ult,
        mul(weightBytes, indexConstant(rewriter, loc, weightsPerChunk)),
        indexConstant(rewriter, loc, chunkBytes));
    chunk = arith::SelectOp::create(
        rewriter, loc, pays, chunk,
        arith::MaxUIOp::create(rewriter, loc, steps, one));
  }

  size_t numOutputs = layer.getOutputs().size();
  SmallVector<Value> inits;
  // Each output [T, B, N] (N static: see the pass's filter).
  for (Value output : layer.getOutputs()) {
    auto type = cast<RankedTensorType>(output.getType());
    SmallVector<OpFoldResult> shape = {
        projectionShape[0], projectionShape[1],
        rewriter.getIndexAttr(type.getDimSize(2))};
    inits.push_back(
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType()));
  }
  llvm::append_range(inits, layer.getInits());

  bool reverse = layer.isReverse();
  auto loop = scf::ForOp::create(
      rewriter, loc, indexConstant(rewriter, loc, 0), steps, chunk, inits,
      [&](OpBuilder &b, Location loc, Value start, ValueRange carried) {
        Value left = arith::SubIOp::create(b, loc, steps, start);
        Value count = arith::MinUIOp::create(b, loc, chunk, left);
        // A reverse layer's chunks run from the end of the sequence.
        Value first =
            reverse ? arith::SubIOp::create(b, loc, left, count).getResult()
                    : start;
        Value projected = projectSteps(b, loc, hoisted, first, count);
        SmallVector<Type> outputTypes, finalTypes;
        for (Value output : layer.getOutputs())
          outputTypes.push_back(withDynamicSteps(output.getType()));
        for (Value init : layer.getInits())
          finalTypes.push_back(init.getType());
        auto part = LayerOp::create(b, loc, outputTypes, finalTypes,
                                    layer.getDirection(), ValueRange{projected},
                                    carried.drop_front(numOutputs),
                                    /*lengths=*/Value());
        IRMapping mapping;
        layer.getBody().cloneInto(&part.getBody(), mapping);
        SmallVector<Value> yielded;
        for (auto [whole, piece] :
             llvm::zip(carried.take_front(numOutputs), part.getOutputs())) {
          auto type = cast<RankedTensorType>(whole.getType());
          SmallVector<OpFoldResult> offsets = {first, b.getIndexAttr(0),
                                               b.getIndexAttr(0)};
          SmallVector<OpFoldResult> sizes = {
              count, projectionShape[1], b.getIndexAttr(type.getDimSize(2))};
          SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
          yielded.push_back(tensor::InsertSliceOp::create(
              b, loc, piece, whole, offsets, sizes, strides));
        }
        llvm::append_range(yielded, part.getFinals());
        scf::YieldOp::create(b, loc, yielded);
      });
  // The finals carry the inits' types; a layer's finals may be more static.
  SmallVector<Value> results;
  for (auto [result, value] : llvm::zip(layer->getResults(), loop.getResults()))
    results.push_back(value.getType() == result.getType()
                          ? Value(value)
                          : Value(tensor::CastOp::create(
                                rewriter, loc, result.getType(), value)));
  rewriter.replaceOp(layer, results);
  // The whole projection, if nothing else reads it.
  if (hoisted.expand->use_empty())
    rewriter.eraseOp(hoisted.expand);
  if (hoisted.gate->use_empty()) {
    SmallVector<Operation *> collapses;
    for (Value operand : hoisted.gate->getOperands())
      if (auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>())
        collapses.push_back(collapse);
    rewriter.eraseOp(hoisted.gate);
    for (Operation *collapse : collapses)
      if (collapse->use_empty())
        rewriter.eraseOp(collapse);
  }
}

namespace {
struct LSTMChunkHoistedProjectionsPass
    : public lstm::impl::LSTMChunkHoistedProjectionsPassBase<
          LSTMChunkHoistedProjectionsPass> {
  using Base::Base;

  /// Whether the projection's weights, where their size is known, are
  /// small enough for chunks (see chunkLayer).
  bool weightsAllowChunks(const HoistedInput &hoisted) {
    std::optional<int64_t> bytes = staticWeightBytes(hoisted.gate);
    return !weightsPerChunk || !bytes ||
           llvm::SaturatingMultiply(static_cast<uint64_t>(*bytes),
                                    static_cast<uint64_t>(weightsPerChunk)) <
               static_cast<uint64_t>(chunkBytes);
  }

  /// `threads-function`, declared where it is not yet; null without one.
  FailureOr<func::FuncOp> threadsCallee(OpBuilder &builder) {
    if (threadsFunction.empty())
      return func::FuncOp();
    return declareThreadsFunction(builder, getOperation(), threadsFunction,
                                  getArgument());
  }

  void runOnOperation() override {
    if (weightsPerChunk < 0) {
      getOperation()->emitError("lstm-chunk-hoisted-projections: "
                                "weights-per-chunk must be >= 0, got ")
          << static_cast<int64_t>(weightsPerChunk);
      return signalPassFailure();
    }
    if (chunkBytes <= 0) {
      getOperation()->emitError("lstm-chunk-hoisted-projections: chunk-bytes "
                                "must be positive, got ")
          << static_cast<int64_t>(chunkBytes);
      return signalPassFailure();
    }
    SmallVector<LayerOp> layers;
    getOperation()->walk([&](LayerOp layer) {
      bool staticColumns = llvm::all_of(layer.getOutputs(), [](Value v) {
        return !cast<RankedTensorType>(v.getType()).isDynamicDim(2);
      });
      if (layer.getInputs().size() == 1 && !layer.getLengths() &&
          layer->getDiscardableAttrDictionary().empty() && staticColumns)
        layers.push_back(layer);
    });
    IRRewriter rewriter(&getContext());
    // Declared with the first chunked layer: nothing where none is.
    std::optional<FailureOr<func::FuncOp>> threads;
    // Matched as each is rewritten: a layer's sequence may be the results
    // of the layer before, replaced by its loop's.
    for (LayerOp layer : layers)
      if (std::optional<HoistedInput> hoisted =
              matchHoistedInput(layer.getInputs().front());
          hoisted && weightsAllowChunks(*hoisted)) {
        if (!threads)
          threads = threadsCallee(rewriter);
        if (failed(*threads))
          return signalPassFailure();
        chunkLayer(rewriter, layer, *hoisted, chunkBytes, weightsPerChunk,
                   **threads);
      }
  }
};
} // namespace
