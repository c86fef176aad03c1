//===- Pipelines.cpp - The optimisation and CPU pipelines -----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// lstm-optimize and lstm-to-cpu; the GPU's lowering is NVVMPipeline.cpp's,
// the stages both lowerings share PipelineStages.cpp's, the pipelines'
// registration PipelineRegistration.cpp's.
//
//===----------------------------------------------------------------------===//

#include "lstm/Pipelines/Pipelines.h"
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
using namespace mlir::lstm::pipelines;

void lstm::buildLSTMOptimizePipeline(OpPassManager &pm,
                                     const LSTMOptimizeOptions &options) {
  // Combining first: the other passes see one GEMM per operand. The
  // wavefront before hoisting: hoisting layer k's input projection would
  // make it wait for all of layer k-1 and break the chain the wavefront
  // needs (layer 0's, which reads x, is hoisted in the stacks it leaves
  // alone). Fusion last, over the cells as the others left them.
  if (options.combine)
    pm.addPass(createLSTMCombineGateGemmsPass());
  // The gradient functions are made from the combined cells (one GEMM per
  // backward step on the recurrent state) and optimised with the rest.
  if (options.differentiate)
    pm.addPass(createLSTMDifferentiatePass());
  // A backward cell's gradients assembled twice (Cho's GRU's dG and its
  // leading columns [dr dz], the recurrent product's operand) once, the
  // second a slice of the first: the wavefront then sees that product read
  // the link output, and combines it with the link's.
  pm.addPass(createShareAssembledColumnsPass());
  if (options.wavefront) {
    LSTMWavefrontPassOptions wavefront;
    wavefront.persistent = options.persistent;
    wavefront.sideOutputMaxProduct = options.sideOutputMaxProduct;
    wavefront.productLinks = options.productLinks;
    // Hoisting is what the layers would have instead: a stack whose
    // wavefront runs no fewer products in sequence (two LSTM layers) stays
    // layers (docs/benchmarks.md, "Two layers as layers").
    wavefront.fewerProductsOnly = options.hoist;
    pm.addPass(createLSTMWavefrontPass(wavefront));
  }
  if (options.hoist)
    pm.addPass(createLSTMHoistInputProjectionPass());
  if (options.fuse)
    pm.addPass(createLSTMFuseElementwisePass());
  pm.addPass(createCanonicalizer());
  pm.addPass(createCSEPass());
  // CSE can make two outputs of a layer one value (the gradient functions'
  // cotangents of a combined GEMM): the canonicalizer then drops one.
  pm.addPass(createCanonicalizer());
}

void lstm::buildLSTMToCPUPipeline(OpPassManager &pm,
                                  const LSTMToCPUOptions &options) {
  // Hoisted projections where enough threads split their GEMMs, the
  // steps' products where few run them.
  if (options.hoistMinThreads > 1) {
    LSTMHoistByThreadsPassOptions byThreads;
    byThreads.minThreads = options.hoistMinThreads;
    byThreads.threadsFunction = "lstmRuntimeCpuGetThreads";
    pm.addPass(createLSTMHoistByThreadsPass(byThreads));
  }
  // Hoisted projections a chunk of steps at a time, read while in cache.
  if (options.chunkBytes > 0) {
    LSTMChunkHoistedProjectionsPassOptions chunks;
    chunks.chunkBytes = options.chunkBytes;
    // A chunk of chunkBytes per thread of the products: each has its cache.
    chunks.threadsFunction = "lstmRuntimeCpuGetThreads";
    pm.addPass(createLSTMChunkHoistedProjectionsPass(chunks));
  }
  // Each layer on parts of its batch, one a thread, for the whole sequence:
  // no threads meeting at every step.
  if (options.splitBatch && options.threads) {
    LSTMSplitBatchPassOptions split;
    split.threadsFunction = "lstmRuntimeCpuGetThreads";
    pm.addPass(createLSTMSplitBatchPass(split));
  }
  buildTensorPipeline(pm, options.runtimeChecks);
  // A product that a pointwise op adds last accumulates into the rest of
  // the sum (as on the GPU: one pass over the step's values fewer).
  perSymbol(pm).addPass(lstm::createAccumulateIntoProductsPass());
  // Each part's stack built in the whole layer's output, which the next
  // layer reads as a view.
  if (options.splitBatch && options.threads) {
    pm.addNestedPass<func::FuncOp>(lstm::createWritePartStacksInPlacePass());
    pm.addNestedPass<func::FuncOp>(lstm::createCollapseBeforeSlicePass());
  }
  buildBufferizationPipeline(pm);
  // The products in the CPU runtime's GEMMs (oneDNN, OpenBLAS), the rest as
  // loops.
  if (options.blas) {
    ConvertGemmToBlasPassOptions gemm;
    gemm.minSize = options.blasMinSize;
    pm.addPass(createConvertGemmToBlasPass(gemm));
    // A time loop's recurrent weight packed once before the loop. The
    // calls' sizes and strides, read from views made in the loop, fold to
    // the values they are made of and leave the loop first.
    pm.addPass(createCanonicalizer());
    pm.addPass(createLoopInvariantCodeMotionPass());
    pm.addPass(createPrepareLoopGemmsPass());
  }
  if (options.approximateMath)
    pm.addPass(createApproximateMathPass());
  // The elementwise loops as functions of a range of their first dimension
  // (a step's cell: of the batch), which the runtime splits among its
  // threads.
  pm.addPass(createConvertLinalgToParallelLoopsPass());
  if (options.threads)
    pm.addPass(lstm::createOutlineParallelLoopsPass());
  buildHostToLLVMPipeline(pm, /*cpuRuntime=*/true);
  pm.addPass(createReconcileUnrealizedCastsPass());
  if (options.threads)
    pm.addPass(lstm::createDispatchParallelBodiesPass());
  // A buffer too large for the process stops the run with its size.
  pm.addPass(lstm::createCheckAllocationsPass(
      lstm::CheckAllocationsPassOptions{/*cpuRuntime=*/true}));
  pm.addPass(createCanonicalizer());
}
