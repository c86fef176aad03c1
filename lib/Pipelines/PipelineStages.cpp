//===- PipelineStages.cpp - Stages the pipelines share --------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "PipelineStages.h"

#include "lstm/Conversion/Passes.h"
#include "lstm/Dialect/LSTM/Transforms/Passes.h"
#include "lstm/Pipelines/Pipelines.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include <cstdlib>

using namespace mlir;

/// The canonicalizer as the pipelines run it: the worklist filled bottom-up
/// (post-order, GreedyRewriteConfig's own default), where the pass's default
/// fills it top-down. Both drive the same patterns to the same fixpoint (the
/// latency stack's IR after lstm-to-persistent came out identical), but the
/// top-down fill took three times as long over a persistent kernel's
/// unrolled products: 0.22-0.31 s against 0.08-0.09 s on that stack's
/// 3xTF32 kernel (docs/benchmarks.md, "Compile time").
std::unique_ptr<Pass> lstm::pipelines::createCanonicalizer() {
  return createCanonicalizerPass(
      GreedyRewriteConfig().setUseTopDownTraversal(false));
}

/// A nested pipeline for op-agnostic passes that work within a function
/// (the canonicalizer, CSE, rewrites of one op into others): it runs on each
/// function and kernel module of the module on its own, and the pass manager
/// runs those in parallel, where a pass on the module would walk them one
/// after another on one thread (a training library's forward and backward
/// functions hold most of the code, side by side on the 2-core machine).
OpPassManager &lstm::pipelines::perSymbol(OpPassManager &pm) {
  return pm.nestAny();
}

/// The tensor level both targets share: the run-time checks of the tensor
/// ops as the passes before left them, the dialect to linalg/scf, pointwise
/// arith/math to linalg, then fuse the pointwise generics of each step.
void lstm::pipelines::buildTensorPipeline(OpPassManager &pm,
                                          bool runtimeChecks) {
  if (runtimeChecks)
    pm.addNestedPass<func::FuncOp>(lstm::createGenerateRuntimeChecksPass());
  pm.addPass(lstm::createConvertLSTMToLinalgPass());
  perSymbol(pm).addPass(createConvertElementwiseToLinalgPass());
  // The run-time checks read the extents of intermediate values of a step
  // (tensor.dim of a linalg op's result): rewritten to their sources, so
  // that the dims are no other use that keeps a fused producer alive.
  if (runtimeChecks)
    perSymbol(pm).addPass(memref::createResolveRankedShapeTypeResultDimsPass());
  pm.addPass(lstm::createFusePointwiseGenericsPass());
  OpPassManager &cleanUp = perSymbol(pm);
  cleanUp.addPass(createCanonicalizer());
  cleanUp.addPass(createCSEPass());
  // A stack's layer reads the sequence below as a view, not a copy.
  pm.addNestedPass<func::FuncOp>(lstm::createCollapseBeforeSlicePass());
}

/// The tensor level to buffers, for both targets.
void lstm::pipelines::buildBufferizationPipeline(OpPassManager &pm) {
  // Buffers: whole-module one-shot bufferization with identity layouts at
  // function boundaries (callers pass plain strided descriptors), then
  // ownership-based deallocation.
  // The caller owns the arguments: bufferization must not write them.
  pm.addNestedPass<func::FuncOp>(lstm::createReadOnlyArgumentsPass());
  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // The recurrent state is a fresh tensor each step.
  bufferization.allowReturnAllocsFromLoops = true;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A layer's sequence that goes whole into a bigger tensor is built in
  // its slice (the layers' branch of a wavefront's batch bound).
  pm.addPass(lstm::createWriteSequencesInPlacePass());
  // A gradient assembled twice (Cho's GRU's dG and its leading columns)
  // once.
  pm.addPass(lstm::createShareAssembledColumnsPass());
  // A diagonal's saved activations computed in the store's slot.
  pm.addPass(lstm::createWriteResultsInPlacePass());
  // Each product its own zeros, each result its own init: one buffer
  // shared by several writers is copied around.
  pm.addPass(lstm::createSeparateSharedInitsPass());
  // tensor.empty as alloc_tensor, whose buffer one-shot bufferization
  // knows to have the identity layout: a tensor.empty's is an unknown type
  // to it, fully dynamic, and an scf.if with one in a branch (the
  // persistent kernels' cost-model branches) yields fully dynamic layouts,
  // which the function's results then copy into identity buffers (27 us a
  // char-rnn training step on the H200).
  pm.addPass(bufferization::createEmptyTensorToAllocTensorPass());
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // What is still computed into a temporary and copied into place is
  // written in place (a backward step's dz into dG).
  pm.addNestedPass<func::FuncOp>(lstm::createElideCopiesPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  // Deallocation leaves bufferization.clone where ownership is unknown.
  pm.addPass(createConvertBufferizationToMemRefPass());
  // An insert whose part was written in place is a copy of a view onto
  // itself: CSE makes the two views one value, the canonicalizer drops it.
  OpPassManager &cleanUp = perSymbol(pm);
  cleanUp.addPass(createCSEPass());
  cleanUp.addPass(createCanonicalizer());
  // The checks of a cell's ops compare extents that no step changes: once
  // before the time loop, not once per step.
  pm.addNestedPass<func::FuncOp>(lstm::createHoistRuntimeChecksPass());
}

/// Host code (and, on the GPU path, what is left of it) to the LLVM dialect.
/// `cpuRuntime`: buffers through the CPU runtime's allocation functions
/// (lstm/Runtime/CpuRuntime.h), which reuse large blocks, and failed checks
/// reported through it (a guarded call returns from them).
void lstm::pipelines::buildHostToLLVMPipeline(OpPassManager &pm,
                                              bool cpuRuntime) {
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  // LLVM 22's expand-strided-metadata crashes on the [T·B, N] -> [T, B, N]
  // reshapes of hoisted input projections; they are rewritten first.
  pm.addPass(lstm::createLowerDynamicExpandShapePass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = cpuRuntime;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createConvertMathToLLVMPass());
  // What has no LLVM intrinsic (tanh) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  // Failed run-time checks report on stderr (upstream's cf.assert lowering
  // prints on stdout).
  pm.addPass(lstm::createReportFailedChecksPass(
      lstm::ReportFailedChecksPassOptions{cpuRuntime}));
  pm.addPass(createConvertControlFlowToLLVMPass());
}
