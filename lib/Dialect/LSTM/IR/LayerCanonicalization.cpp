//===- LayerCanonicalization.cpp - lstm.layer's canonical form ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Every output of a layer is a [T, B, N] sequence written at every step,
// and every input after the first one read at every step: what a layer
// returns or reads without need costs memory traffic each step. The
// gradient functions of lstm-differentiate make such layers (one sequence
// per weight gradient, several of them the same values), and these
// patterns take out what is not needed.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Utils/AssembledTensors.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::lstm;

namespace {

/// What becomes of an output sequence.
struct OutputFate {
  enum Kind { Kept, Unread, SameAs, SliceOf } kind = Kept;
  /// The output it repeats or is a slice of.
  unsigned of = 0;
  /// The column where its slice begins.
  int64_t column = 0;
};

/// Drops the output sequences of a layer that nothing reads, those that
/// yield the same value as another output (their uses take the other
/// one), and those that yield whole columns of another output at every
/// step (their uses take a view of the other's sequence): each output is a
/// [T, B, N] buffer written at every step. The gradient functions of
/// lstm-differentiate produce all three kinds (Cho's GRU's backward cell
/// yields its gates' gradients whole for the input weights' gradient and
/// two slices of them for the recurrent ones').
struct SimplifyLayerOutputs : OpRewritePattern<LayerOp> {
  using OpRewritePattern::OpRewritePattern;

  /// Widest outputs first: an output is a slice of a kept one, which
  /// nothing wider contains.
  SmallVector<OutputFate> decide(LayerOp op) const {
    YieldOp yield = op.getYield();
    unsigned numOutputs = op.getOutputs().size();
    SmallVector<unsigned> order = llvm::to_vector(llvm::seq(numOutputs));
    auto width = [&](unsigned j) {
      return getColumnWidth(yield.getOutputs()[j])
          .value_or(ShapedType::kDynamic);
    };
    llvm::stable_sort(
        order, [&](unsigned a, unsigned b) { return width(a) > width(b); });
    SmallVector<OutputFate> fates(numOutputs);
    SmallVector<unsigned> kept;
    for (unsigned j : order) {
      Value result = op.getOutputs()[j];
      Value yielded = yield.getOutputs()[j];
      OutputFate &fate = fates[j];
      if (result.use_empty()) {
        fate.kind = OutputFate::Unread;
        continue;
      }
      for (unsigned k : kept) {
        Value other = yield.getOutputs()[k];
        if (other == yielded &&
            op.getOutputs()[k].getType() == result.getType()) {
          fate = {OutputFate::SameAs, k, 0};
          break;
        }
        auto resultType = cast<RankedTensorType>(result.getType());
        auto otherType = cast<RankedTensorType>(op.getOutputs()[k].getType());
        if (resultType.getRank() != 3 || otherType.getRank() != 3 ||
            resultType.getElementType() != otherType.getElementType() ||
            width(k) <= width(j) || width(j) == ShapedType::kDynamic)
          continue;
        if (std::optional<int64_t> column = getSliceColumn(yielded, other)) {
          fate = {OutputFate::SliceOf, k, *column};
          break;
        }
      }
      if (fate.kind == OutputFate::Kept)
        kept.push_back(j);
    }
    return fates;
  }

  LogicalResult matchAndRewrite(LayerOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<OutputFate> fates = decide(op);
    if (llvm::all_of(fates, [](const OutputFate &f) {
          return f.kind == OutputFate::Kept;
        }))
      return failure();

    // The yield's operands before it yields the kept ones only.
    SmallVector<Value> yielded = llvm::to_vector(op.getYield().getOutputs());
    unsigned numOutputs = op.getOutputs().size();
    SmallVector<std::optional<unsigned>> position(numOutputs);
    SmallVector<Value> keptValues;
    SmallVector<Type> keptTypes;
    for (unsigned j = 0; j < numOutputs; ++j) {
      if (fates[j].kind != OutputFate::Kept)
        continue;
      position[j] = keptValues.size();
      keptValues.push_back(yielded[j]);
      keptTypes.push_back(op.getOutputs()[j].getType());
    }
    auto simplified = LayerOp::create(
        rewriter, op.getLoc(), keptTypes, op.getFinals().getTypes(),
        op.getDirection(), op.getInputs(), op.getInits(), op.getLengths());
    simplified->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(op.getBody(), simplified.getBody(),
                                simplified.getBody().end());
    YieldOp newYield = simplified.getYield();
    rewriter.modifyOpInPlace(
        newYield, [&] { newYield.getOutputsMutable().assign(keptValues); });

    SmallVector<Value> replacements;
    for (unsigned j = 0; j < numOutputs; ++j) {
      const OutputFate &fate = fates[j];
      switch (fate.kind) {
      case OutputFate::Kept:
        replacements.push_back(simplified.getOutputs()[*position[j]]);
        break;
      case OutputFate::Unread:
        replacements.push_back(Value());
        break;
      case OutputFate::SameAs:
        replacements.push_back(simplified.getOutputs()[*position[fate.of]]);
        break;
      case OutputFate::SliceOf: {
        Value whole = simplified.getOutputs()[*position[fate.of]];
        Location loc = op.getLoc();
        SmallVector<OpFoldResult> sizes =
            tensor::getMixedSizes(rewriter, loc, whole);
        sizes[2] = rewriter.getIndexAttr(*getColumnWidth(yielded[j]));
        SmallVector<OpFoldResult> offsets = {
            rewriter.getIndexAttr(0), rewriter.getIndexAttr(0),
            rewriter.getIndexAttr(fate.column)};
        SmallVector<OpFoldResult> strides(3, rewriter.getIndexAttr(1));
        Value view = tensor::ExtractSliceOp::create(rewriter, loc, whole,
                                                    offsets, sizes, strides);
        if (view.getType() != op.getOutputs()[j].getType())
          view = tensor::CastOp::create(rewriter, loc,
                                        op.getOutputs()[j].getType(), view);
        replacements.push_back(view);
        break;
      }
      }
    }
    llvm::append_range(replacements, simplified.getFinals());
    rewriter.replaceOp(op, replacements);
    return success();
  }
};

/// Drops the input sequences after the first that the cell does not read
/// (the backward of an LSTM layer receives its h_{t-1} sequence for the
/// weight gradient after the loop, not for its steps): a stacked loop
/// would gather them a diagonal at a time. The first input stays: the
/// layer's length and batch size are read from it.
struct DropUnreadInputs : OpRewritePattern<LayerOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(LayerOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<unsigned> unread;
    for (auto [i, slice] : llvm::enumerate(op.getInputSlices()))
      if (i > 0 && slice.use_empty())
        unread.push_back(i);
    if (unread.empty())
      return failure();
    SmallVector<Value> inputs;
    for (auto [i, input] : llvm::enumerate(op.getInputs()))
      if (!llvm::is_contained(unread, i))
        inputs.push_back(input);
    auto simplified =
        LayerOp::create(rewriter, op.getLoc(), op.getOutputs().getTypes(),
                        op.getFinals().getTypes(), op.getDirection(), inputs,
                        op.getInits(), op.getLengths());
    simplified->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(op.getBody(), simplified.getBody(),
                                simplified.getBody().end());
    Block &cell = simplified.getBody().front();
    rewriter.modifyOpInPlace(simplified, [&] {
      for (unsigned i : llvm::reverse(unread))
        cell.eraseArgument(i);
    });
    rewriter.replaceOp(op, simplified->getResults());
    return success();
  }
};
} // namespace

/// An output sequence is [T, B, ...] with T and B those of the first input
/// (the verifier holds the layer to that), its other extents static; a
/// final state has its initial state's extents. Extents known before the
/// layer: a buffer the layer's outputs go into can be made before it.
LogicalResult
LayerOp::reifyResultShapes(OpBuilder &builder,
                           ReifiedRankedShapedTypeDims &reifiedReturnShapes) {
  for (Value output : getOutputs()) {
    auto type = cast<RankedTensorType>(output.getType());
    // A step's own dynamic extent is not known before the layer runs.
    for (int64_t d = 2; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        return failure();
  }
  Location loc = getLoc();
  // A static extent of the result's type, else the extent of `source`.
  auto extent = [&](RankedTensorType type, int64_t d, Value source,
                    int64_t sourceDim) -> OpFoldResult {
    if (!type.isDynamicDim(d))
      return builder.getIndexAttr(type.getDimSize(d));
    return tensor::getMixedSize(builder, loc, source, sourceDim);
  };
  Value input = getInputs().front();
  for (Value output : getOutputs()) {
    auto type = cast<RankedTensorType>(output.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(d < 2 ? extent(type, d, input, d)
                            : builder.getIndexAttr(type.getDimSize(d)));
    reifiedReturnShapes.push_back(sizes);
  }
  for (auto [final, init] : llvm::zip(getFinals(), getInits())) {
    auto type = cast<RankedTensorType>(final.getType());
    SmallVector<OpFoldResult> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d)
      sizes.push_back(extent(type, d, init, d));
    reifiedReturnShapes.push_back(sizes);
  }
  return success();
}

void LayerOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<SimplifyLayerOutputs, DropUnreadInputs>(context);
}
