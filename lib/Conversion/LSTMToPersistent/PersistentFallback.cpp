//===- PersistentFallback.cpp - The per-step branch beside a kernel -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Where the cost model decides at run time, a kernel (a layer's, or a
// stack's) sits in the then branch of an `scf.if` whose else branch runs the
// same layers with the per-step lowering. Both branches must yield buffers
// of the same layout, or every result is copied after the branch.
//
//===----------------------------------------------------------------------===//

#include "PersistentFallback.h"
#include "PersistentKernelBuilder.h"
#include "lstm/Conversion/LSTMToLinalg/LSTMToLinalg.h"
#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"

using namespace mlir;
using namespace mlir::lstm;

SmallVector<Value> persistent::copiesInNewBuffers(RewriterBase &rewriter,
                                                  Location loc,
                                                  ValueRange values,
                                                  ArrayRef<bool> copy) {
  SmallVector<Value> copies;
  for (auto [i, value] : llvm::enumerate(values)) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || (!copy.empty() && !copy[i])) {
      copies.push_back(value);
      continue;
    }
    Value view = bufferization::ToBufferOp::create(
        rewriter, loc, stridedMemRef(type.getShape(), type.getElementType()),
        value, /*read_only=*/true);
    SmallVector<Value> extents;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        extents.push_back(tensor::DimOp::create(rewriter, loc, value, d));
    Value buffer = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        extents);
    memref::CopyOp::create(rewriter, loc, view, buffer);
    copies.push_back(bufferization::ToTensorOp::create(
        rewriter, loc, type, buffer, /*restrict=*/true, /*writable=*/true));
  }
  return copies;
}

/// The branch's results without the per-step lowering: a call of the
/// runtime that records the failure, and empty tensors of `perStep`'s result
/// extents. Fails, changing nothing, where the extents are not known from
/// `perStep`'s operands.
static FailureOr<SmallVector<Value>>
missingFallbackResults(RewriterBase &rewriter, Location loc, LayerOp perStep) {
  OpBuilder::InsertionGuard guard(rewriter);
  ReifiedRankedShapedTypeDims extents;
  rewriter.setInsertionPoint(perStep);
  if (failed(reifyResultShapes(rewriter, perStep, extents)))
    return failure();
  func::FuncOp missing = persistent::declareRuntimeFunction(
      rewriter, perStep->getParentOfType<ModuleOp>(), kMissingFallbackName,
      rewriter.getFunctionType({rewriter.getI64Type()}, {}));
  Value batch = tensor::DimOp::create(rewriter, loc,
                                      perStep.getInputs().front(), int64_t{1});
  func::CallOp::create(rewriter, loc, missing,
                       ValueRange{arith::IndexCastOp::create(
                           rewriter, loc, rewriter.getI64Type(), batch)});
  SmallVector<Value> results;
  for (auto [result, shape] : llvm::zip(perStep->getResults(), extents)) {
    auto type = cast<RankedTensorType>(result.getType());
    results.push_back(
        tensor::EmptyOp::create(rewriter, loc, shape, type.getElementType()));
  }
  // Later ops of the branch that read it (a stack's projection between its
  // layers) read the empty tensors instead.
  rewriter.replaceOp(perStep, results);
  return results;
}

SmallVector<Value> persistent::perStepFallbackResults(RewriterBase &rewriter,
                                                      Location loc,
                                                      LayerOp perStep,
                                                      bool fallback) {
  if (!fallback) {
    FailureOr<SmallVector<Value>> empty =
        missingFallbackResults(rewriter, loc, perStep);
    if (succeeded(empty))
      return *empty;
  }
  SmallVector<bool> copy = perStepOutputsInStateStacks(perStep);
  copy.resize(perStep->getNumResults(), true);
  return copiesInNewBuffers(rewriter, loc, perStep->getResults(), copy);
}
