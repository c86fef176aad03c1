//===- EmptyLayers.cpp - Layers that statically run nothing ---------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::lstm;

bool mlir::lstm::isStaticallyEmpty(LayerOp layer) {
  if (layer.getInputs().empty())
    return false;
  auto type = cast<RankedTensorType>(layer.getInputs().front().getType());
  return type.getDimSize(0) == 0 || type.getDimSize(1) == 0;
}

LogicalResult mlir::lstm::replaceEmptyLayer(RewriterBase &rewriter,
                                            LayerOp layer) {
  for (Value out : layer.getOutputs())
    if (cast<RankedTensorType>(out.getType()).isDynamicDim(2))
      return failure();
  Location loc = layer.getLoc();
  rewriter.setInsertionPoint(layer);
  Value seq0 = layer.getInputs().front();
  // The checks of the layer's lowering that do not need a step.
  assertLayerExtents(rewriter, layer);
  SmallVector<Value> replacements;
  for (Value out : layer.getOutputs()) {
    auto type = cast<RankedTensorType>(out.getType());
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < 2; ++d)
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(rewriter, loc, seq0, d));
    replacements.push_back(tensor::EmptyOp::create(
        rewriter, loc, type.getShape(), type.getElementType(), sizes));
  }
  llvm::append_range(replacements, layer.getInits());
  rewriter.replaceOp(layer, replacements);
  return success();
}

void mlir::lstm::replaceEmptyConcats(Operation *root) {
  SmallVector<tensor::ConcatOp> empty;
  root->walk([&](tensor::ConcatOp concat) {
    if (llvm::is_contained(concat.getResultType().getShape(), 0))
      empty.push_back(concat);
  });
  IRRewriter rewriter(root->getContext());
  for (tensor::ConcatOp concat : empty) {
    rewriter.setInsertionPoint(concat);
    ReifiedRankedShapedTypeDims shape;
    if (failed(reifyResultShapes(rewriter, concat, shape)))
      continue;
    rewriter.replaceOpWithNewOp<tensor::EmptyOp>(
        concat, shape.front(), concat.getResultType().getElementType());
  }
}

void mlir::lstm::replaceEmptyLayers(Operation *root) {
  SmallVector<LayerOp> empty;
  root->walk([&](LayerOp layer) {
    if (isStaticallyEmpty(layer))
      empty.push_back(layer);
  });
  IRRewriter rewriter(root->getContext());
  for (LayerOp layer : empty)
    (void)replaceEmptyLayer(rewriter, layer);
}
