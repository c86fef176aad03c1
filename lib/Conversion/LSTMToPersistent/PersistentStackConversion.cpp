//===- PersistentStackConversion.cpp - Stacks into one kernel each ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Where a stack's layers become one kernel (PersistentStack.cpp): the
// chains that the cost model picks (chooseStacks), each chain's ops put in
// the branches of an scf.if on the kernel's run-time condition (the
// layers' own kernels or the per-step lowering in the other branch), and,
// where the kernel computes on tensor cores, its kernel of dot products
// for the batches below.
//
//===----------------------------------------------------------------------===//

#include "PersistentStack.h"
#include "PersistentStackKernel.h"

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "lstm-to-persistent"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// `chain`'s ops into the branches of an scf.if on `condition`
/// (branchChain), the copies marked for the per-step lowering (the stack's
/// kernel was faster than the layers' own at every batch measured), or
/// without `fallback` not compiled (perStepFallbackResults).
static void branchOnKernel(RewriterBase &rewriter, const Chain &chain,
                           ArrayRef<Operation *> dead, Value condition,
                           bool fallback) {
  LayerOp last = chain.layers.back();
  Location loc = last.getLoc();
  SmallVector<LayerOp> copies = branchChain(rewriter, chain, dead, condition);
  // The per-step layers' views of their state stacks in buffers like the
  // kernel's, or every result would be copied after the branch.
  SmallVector<Value> yielded;
  for (LayerOp copy : copies) {
    rewriter.modifyOpInPlace(copy, [&] {
      copy->setAttr(kPerStepFallbackAttr, rewriter.getUnitAttr());
    });
    llvm::append_range(yielded,
                       perStepFallbackResults(rewriter, loc, copy, fallback));
  }
  scf::YieldOp::create(rewriter, loc, yielded);
}

/// Where the stack's kernel computes on tensor cores: the chain's ops in
/// the then branch of an `scf.if` on `batch` >= `fromBatch`
/// (branchChain), their copies in its else branch replaced by the stack's
/// kernel of dot products (or, should it have none, marked for the
/// per-step lowering).
static void splitOnTensorCores(RewriterBase &rewriter, const Chain &chain,
                               ArrayRef<Operation *> dead, Value batch,
                               function_ref<std::string()> nextKernelName,
                               const PersistentOptions &options,
                               int64_t fromBatch) {
  LayerOp last = chain.layers.back();
  Location loc = last.getLoc();
  rewriter.setInsertionPoint(last);
  Value large = tensorCoresRun(rewriter, loc, batch, fromBatch);
  SmallVector<LayerOp> copies = branchChain(rewriter, chain, dead, large);
  SmallVector<Value> yielded;
  for (LayerOp copy : copies)
    llvm::append_range(yielded, copy->getResults());
  scf::YieldOp::create(rewriter, loc, yielded);
  PersistentOptions dots = options;
  dots.tensorCores = false;
  SmallVector<Chain> chains = findChains(copies);
  if (chains.size() == 1 && chains.front().layers.size() == copies.size()) {
    StackKernel kernel(rewriter, chains.front(), dots);
    if (succeeded(kernel.plan()))
      if (FailureOr<SmallVector<Operation *>> copyDead =
              prepareChain(rewriter, chains.front());
          succeeded(copyDead)) {
        kernel.build(nextKernelName(), *copyDead);
        return;
      }
  }
  for (LayerOp copy : copies)
    rewriter.modifyOpInPlace(copy, [&] {
      copy->setAttr(kPerStepFallbackAttr, rewriter.getUnitAttr());
    });
}

SmallVector<LayerOp> mlir::lstm::persistent::convertStackKernels(
    RewriterBase &rewriter, ArrayRef<LayerOp> layers,
    function_ref<std::string()> nextKernelName,
    const PersistentOptions &options) {
  OpBuilder::InsertionGuard guard(rewriter);
  llvm::SetVector<Operation *> left;
  for (LayerOp layer : layers)
    left.insert(layer);
  for (Chain &chain : findChains(layers)) {
    StackKernel kernel(rewriter, chain, options);
    if (failed(kernel.plan()))
      continue;
    // Before the chain changes: it plans the kernel of dot products too.
    int64_t tensorCoresFrom =
        kernel.usesTensorCores() ? kernel.tensorCoresFrom() : 1;
    FailureOr<SmallVector<Operation *>> prepared =
        prepareChain(rewriter, chain);
    if (failed(prepared)) {
      (void)rejectStack(chain.layers.front(),
                        "a layer reads a value computed from an earlier "
                        "layer's results other than its input projection");
      continue;
    }
    SmallVector<Operation *> dead = std::move(*prepared);
    for (LayerOp layer : chain.layers)
      left.remove(layer);
    LayerOp head = chain.layers.front();
    rewriter.setInsertionPoint(chain.layers.back());
    Value batch = tensor::DimOp::create(rewriter, head.getLoc(),
                                        head.getInputs().front(), 1);
    if (options.costModel)
      branchOnKernel(rewriter, chain, dead, kernel.runs(batch),
                     options.perStepFallback);
    if (tensorCoresFrom > 1)
      splitOnTensorCores(rewriter, chain, dead, batch, nextKernelName, options,
                         tensorCoresFrom);
    kernel.build(nextKernelName(), dead);
  }
  return llvm::map_to_vector(left,
                             [](Operation *op) { return cast<LayerOp>(op); });
}

LogicalResult mlir::lstm::persistent::convertWholeStack(
    RewriterBase &rewriter, ArrayRef<LayerOp> layers, Operation *before,
    Value batch, Value &condition, function_ref<std::string()> nextKernelName,
    const PersistentOptions &options) {
  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<Chain> chains = findChains(layers);
  if (chains.size() != 1 || chains.front().layers.size() != layers.size())
    return failure();
  Chain &chain = chains.front();
  StackKernel kernel(rewriter, chain, options);
  if (failed(kernel.plan()))
    return failure();
  // Before the chain changes: it plans the kernel of dot products too.
  int64_t tensorCoresFrom =
      kernel.usesTensorCores() ? kernel.tensorCoresFrom() : 1;
  FailureOr<SmallVector<Operation *>> dead = prepareChain(rewriter, chain);
  if (failed(dead))
    return rejectStack(chain.layers.front(),
                       "a layer reads a value computed from an earlier "
                       "layer's results other than its input projection");
  rewriter.setInsertionPoint(before);
  condition =
      options.costModel
          ? kernel.runs(batch)
          : arith::ConstantIntOp::create(rewriter, before->getLoc(), 1, 1)
                .getResult();
  if (tensorCoresFrom > 1)
    splitOnTensorCores(rewriter, chain, *dead, batch, nextKernelName, options,
                       tensorCoresFrom);
  kernel.build(nextKernelName(), *dead);
  return success();
}

SmallVector<StackChoice>
mlir::lstm::chooseStacks(ArrayRef<LayerOp> layers,
                         const PersistentOptions &options) {
  SmallVector<StackChoice> choices;
  if (layers.empty())
    return choices;
  // The builders only read the plans here; they build nothing.
  IRRewriter rewriter(layers.front()->getContext());
  for (Chain &chain : findChains(layers)) {
    StackKernel kernel(rewriter, chain, options);
    if (failed(kernel.plan()))
      continue;
    int64_t tensorCoresFrom =
        kernel.usesTensorCores() ? kernel.tensorCoresFrom() : 0;
    if (tensorCoresFrom > kernel.maxBatch())
      tensorCoresFrom = 0;
    choices.push_back({chain.layers, kernel.gridBlocks(),
                       kernel.threadsPerBlock(), kernel.maxBatch(),
                       tensorCoresFrom});
  }
  return choices;
}
