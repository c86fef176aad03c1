//===- Pipelines.cpp - Named pass pipelines of the project ----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Pipelines/Pipelines.h"

#include "lstm/Conversion/Passes.h"
#include "lstm/Dialect/LSTM/Transforms/Passes.h"
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
static std::unique_ptr<Pass> createCanonicalizer() {
  return createCanonicalizerPass(
      GreedyRewriteConfig().setUseTopDownTraversal(false));
}

std::string mlir::lstm::defaultCudaToolkitPath() {
  // $CUDA_HOME or $CUDA_PATH, as nvcc's users set them.
  for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(var); value && *value)
      return value;
  // The toolkit found when the project was configured, if it is here.
  llvm::SmallString<256> configured(LSTM_CUDA_TOOLKIT_DIR);
  llvm::sys::path::append(configured, "bin", "ptxas");
  if (llvm::sys::fs::can_execute(configured))
    return LSTM_CUDA_TOOLKIT_DIR;
  // Else the one whose ptxas is on PATH (<toolkit>/bin/ptxas): the compiler
  // may run on another machine than the one it was built on (the wheel).
  if (llvm::ErrorOr<std::string> ptxas =
          llvm::sys::findProgramByName("ptxas")) {
    llvm::SmallString<256> real;
    if (llvm::sys::fs::real_path(*ptxas, real))
      real = *ptxas;
    return llvm::sys::path::parent_path(llvm::sys::path::parent_path(real))
        .str();
  }
  return LSTM_CUDA_TOOLKIT_DIR;
}

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

/// A nested pipeline for op-agnostic passes that work within a function
/// (the canonicalizer, CSE, rewrites of one op into others): it runs on each
/// function and kernel module of the module on its own, and the pass manager
/// runs those in parallel, where a pass on the module would walk them one
/// after another on one thread (a training library's forward and backward
/// functions hold most of the code, side by side on the 2-core machine).
static OpPassManager &perSymbol(OpPassManager &pm) { return pm.nestAny(); }

/// The tensor level both targets share: the run-time checks of the tensor
/// ops as the passes before left them, the dialect to linalg/scf, pointwise
/// arith/math to linalg, then fuse the pointwise generics of each step.
static void buildTensorPipeline(OpPassManager &pm, bool runtimeChecks) {
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
static void buildBufferizationPipeline(OpPassManager &pm) {
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
static void buildHostToLLVMPipeline(OpPassManager &pm, bool cpuRuntime) {
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

void lstm::buildLSTMToNVVMPipeline(OpPassManager &pm,
                                   const LSTMToNVVMOptions &options) {
  buildLSTMToNVVMKernelsPipeline(pm, options);
  buildLSTMToNVVMHostPipeline(pm);
  buildKernelBinaryPipeline(pm, options.cudaPath);
}

void lstm::buildLSTMToNVVMKernelsPipeline(OpPassManager &pm,
                                          const LSTMToNVVMOptions &options) {
  // The layers that run as one kernel each leave the tensor level as a
  // gpu.launch. Its products are fp32 FMAs below the batch the tensor
  // cores start at, and on tensor cores from there: TF32 or bf16 operands
  // as the compute type says, and under fp32 each operand split into two
  // TF32 values (3xTF32), as exact as the FMAs; under the bf16 compute type
  // the FMAs round their operands to bf16 first, as
  // lstm-gemm-operands-to-bf16 does the GEMMs'.
  if (options.persistent) {
    ConvertLSTMToPersistentPassOptions persistent = persistentPassOptionsForGpu(
        options.computeType, options.chip, options.persistentTensorCores);
    persistent.tensorCoresSplitDepth = options.persistentSplitDepth;
    persistent.perStepFallback = options.perStepFallback;
    pm.addPass(lstm::createConvertLSTMToPersistentPass(persistent));
  }
  buildTensorPipeline(pm, options.runtimeChecks);
  // Whether cuBLAS multiplies with fp32 FMAs (under fp32 a product that
  // split-tf32-gemms takes has the FMAs' version beside it where the batch
  // is dynamic: the choices below stay fp32's).
  bool fmaGemms = options.computeType == GemmComputeType::fp32;
  // Without tensor cores cuBLAS runs a wavefront's deep batched products
  // (a backward stack's links) with most of the GPU idle: their reductions
  // split into a wider batch (docs/benchmarks.md, "Split reductions").
  if (options.cublas && fmaGemms)
    pm.addPass(lstm::createSplitBatchedGemmsPass());
  // Two products that a cell adds (a wavefront diagonal's input and
  // recurrent ones) run as one cuBLAS call of twice the depth.
  if (options.cublas) {
    // Products of different widths (Cho's GRU's input and recurrent ones,
    // of 3 and 2 gates' columns) not concatenated with zero weights: in fp32
    // the zeros cost more than the launch they save; under TF32 the
    // concatenation made appleyard's GRU forward 17% faster and large's 9%
    // slower, whose zeros are 16 times as many (docs/benchmarks.md, "Cho's
    // GRU's products as one batch").
    lstm::ConcatSummedProductsPassOptions concat;
    concat.padColumns = false;
    // In fp32 cuBLAS runs a batch of twice the matrices at half the depth
    // on twice the tiles, faster than the deeper product (appleyard's
    // forward diagonal: 33.7 against 42.8 µs); with tensor cores the two
    // take the same time and the deeper one leaves the cell one read.
    concat.stackBatches = fmaGemms;
    // Cho's GRU's input and recurrent products as one batch, the recurrent
    // weights padded: 29.2 against 34.8 µs at appleyard's forward diagonal.
    concat.padStacks = fmaGemms;
    pm.addPass(lstm::createConcatSummedProductsPass(concat));
  }
  // fp32 products on TF32 tensor cores, each operand split in two TF32
  // values (3xTF32), after the pointwise fusion as the bf16 rounding below.
  if (options.cublas && options.computeType == GemmComputeType::fp32 &&
      options.splitTF32Gemms) {
    // A sequence's products and a step's: the step's weights are split
    // before the loops only for the calls whose batch reaches the bounds
    // (the latency network at B = 1 splits nothing; docs/benchmarks.md,
    // "3xTF32 in parts").
    pm.addPass(lstm::createSplitTF32GemmsPass());
  }
  // cuBLAS's fp32 kernels multiply some of a step's weights faster stored
  // [K, N] than as a gate keeps them, [N, K] (appleyard's forward diagonal
  // 29.5 against 32.9 µs), others slower (large's step at B = 32): the
  // runtime measures which before each loop, after the passes above have
  // chosen which products stay fp32.
  if (options.cublas && fmaGemms)
    pm.addPass(lstm::createTransposeLoopWeightsPass(
        lstm::TransposeLoopWeightsPassOptions{options.computeType,
                                              options.cublasMinSize}));
  // bf16 GEMM operands are rounded copies made at tensor level, after the
  // pointwise fusion: earlier, the fusion would fold the rounding into the
  // contraction's body, which would then read fp32 memory again.
  if (options.computeType == GemmComputeType::bf16)
    pm.addPass(lstm::createGemmOperandsToBF16Pass());
  buildBufferizationPipeline(pm);

  // Every buffer lives on the device; GEMMs go to cuBLAS, every other linalg
  // op becomes one kernel.
  pm.addNestedPass<func::FuncOp>(createConvertHostMemoryToGPUPass());
  // Independent products (a backward's weight gradients) on several
  // streams, before they become cuBLAS calls: the linalg ops say what they
  // read and write.
  // (One stream leaves the code alone; fewer is the pass's error.)
  if (options.streams != 1) {
    lstm::ForkIndependentWorkPassOptions fork;
    fork.maxStreams = options.streams;
    pm.addPass(lstm::createForkIndependentWorkPass(fork));
  }
  if (options.cublas) {
    ConvertGemmToCublasPassOptions gemm;
    gemm.minSize = options.cublasMinSize;
    gemm.computeType = options.computeType;
    pm.addPass(createConvertGemmToCublasPass(gemm));
  }
  OpPassManager &toLoops = perSymbol(pm);
  toLoops.addPass(createConvertLinalgToParallelLoopsPass());
  toLoops.addPass(createCanonicalizer());
  ConvertParallelLoopsToGPUPassOptions launch;
  launch.blockSize = options.blockSize;
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopsToGPUPass(launch));
  // The extents a launch delinearises its index by are computed on the host
  // from the loops' bounds: folded here, the static ones go into the kernel
  // as constants (below) and their divisions become shifts and masks, not
  // 64-bit divisions by a kernel argument.
  perSymbol(pm).addPass(createCanonicalizer());
  // Independent consecutive launches (copies and fills of a few kilobytes)
  // as one.
  pm.addNestedPass<func::FuncOp>(lstm::createMergeGPULaunchesPass());
  // Constants (and index arithmetic on them) that the canonicalizer hoisted
  // out of the kernels go back in: as kernel arguments, a division by the
  // hidden size would be a 64-bit division by an unknown divisor.
  pm.addPass(createGpuLaunchSinkIndexComputationsPass());
  pm.addPass(createGpuKernelOutliningPass());
  // One module for all kernels: one code generation and ptxas run.
  pm.addPass(lstm::createMergeGPUModulesPass());
  // The persistent kernels' address arithmetic in 32 bits, in a module of
  // their own (the other kernels keep 64-bit indices: nothing bounds their
  // buffers).
  if (options.narrowKernelIndices)
    pm.addPass(lstm::createNarrowKernelIndicesPass());
  // The persistent kernels' grid barriers, in scf (lowered just below).
  pm.addPass(lstm::createLowerGridBarriersPass());
  // Launches, allocations and frees become asynchronous on one stream.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &toCF = perSymbol(pm);
  toCF.addPass(createLowerAffinePass());
  toCF.addPass(createSCFToControlFlowPass());
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  // The persistent kernels' asynchronous copies (cp.async), first: their
  // shared-memory operands are converted with the gpu address spaces.
  kernels.addPass(lstm::createConvertNVGPUToNVVMPass());
  // The persistent kernels' fused multiply-adds as LLVM's intrinsic, not
  // as calls of libdevice for the code generation to inline.
  kernels.addPass(lstm::createConvertFmaToLLVMPass());
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizer());
  kernels.addPass(createCSEPass());
  // The persistent kernels' 32-bit module and the others' as one again: one
  // libdevice link, code generation and ptxas run instead of two.
  lstm::MergeGPUModulesPassOptions lowered;
  lowered.afterLowering = true;
  pm.addPass(lstm::createMergeGPUModulesPass(lowered));
}

void lstm::buildLSTMToNVVMHostPipeline(OpPassManager &pm) {
  buildHostToLLVMPipeline(pm, /*cpuRuntime=*/false);
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(lstm::createCheckAllocationsPass());
  pm.addPass(createCanonicalizer());
}

void lstm::buildKernelBinaryPipeline(OpPassManager &pm, StringRef cudaPath) {
  // Kernels to PTX and, through ptxas, to a fatbin.
  GpuModuleToBinaryPassOptions binary;
  // ptxas compiles the kernels of the (one) module on every core.
  binary.cmdOptions = "--split-compile=0";
  binary.toolkitPath =
      cudaPath.empty() ? lstm::defaultCudaToolkitPath() : cudaPath.str();
  pm.addPass(createGpuModuleToBinaryPass(binary));
}

namespace {
struct OptimizePipelineOptions : PassPipelineOptions<OptimizePipelineOptions> {
  Option<bool> combine{*this, "combine",
                       llvm::cl::desc("Combine the gate GEMMs per operand"),
                       llvm::cl::init(true)};
  Option<bool> wavefront{
      *this, "wavefront",
      llvm::cl::desc("Run stacks as a wavefront over their diagonals"),
      llvm::cl::init(true)};
  Option<bool> hoist{*this, "hoist",
                     llvm::cl::desc("Hoist the input projections out of the "
                                    "time loop"),
                     llvm::cl::init(true)};
  Option<bool> fuse{*this, "fuse",
                    llvm::cl::desc("Fuse each step's pointwise work"),
                    llvm::cl::init(true)};
  Option<bool> differentiate{
      *this, "differentiate",
      llvm::cl::desc("Add the gradient functions (lstm-differentiate, after "
                     "combining)"),
      llvm::cl::init(false)};
  Option<bool> persistent{
      *this, "persistent",
      llvm::cl::desc("Leave stacks to lstm-to-persistent's kernels at the "
                     "batch sizes its cost model runs all their layers at, "
                     "the wavefront above (lstm-wavefront's option)"),
      llvm::cl::init(false)};
  Option<int64_t> sideOutputMaxProduct{
      *this, "side-output-max-product",
      llvm::cl::desc("Stacks whose outputs are read outside them (a training "
                     "forward's) as a wavefront at batches whose per-step "
                     "products are at most this many multiply-adds; 0 (the "
                     "default) for none (lstm-wavefront's option)"),
      llvm::cl::init(0)};
  Option<bool> productLinks{
      *this, "product-links",
      llvm::cl::desc("Stacks' backward (layers passing their outputs on "
                     "through a product) as wavefronts too "
                     "(lstm-wavefront's option)"),
      llvm::cl::init(false)};
};

/// Run-time checks of the tensor ops (lstm-generate-runtime-checks), in both
/// lowerings.
static llvm::cl::desc
    runtimeChecksDesc("Check the dynamic extents of the tensor ops at run time "
                      "(lstm-generate-runtime-checks)");

struct CPUPipelineOptions : PassPipelineOptions<CPUPipelineOptions> {
  Option<bool> runtimeChecks{*this, "runtime-checks", runtimeChecksDesc,
                             llvm::cl::init(true)};
  Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Send the GEMMs to oneDNN (f32) and OpenBLAS (f64)"),
      llvm::cl::init(true)};
  Option<int64_t> blasMinSize{
      *this, "blas-min-size",
      llvm::cl::desc(
          "Smallest m*n*k*batch sent to the GEMM library; smaller GEMMs "
          "become loops"),
      llvm::cl::init(0)};
  Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("f32 tanh, exp, log as vectorisable polynomials "
                     "(lstm-approximate-math) instead of libm calls"),
      llvm::cl::init(true)};
  Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("Run the elementwise loops on the CPU runtime's threads "
                     "(lstm-outline-parallel-loops, "
                     "lstm-dispatch-parallel-bodies)"),
      llvm::cl::init(true)};
  Option<int64_t> chunkBytes{
      *this, "chunk-bytes",
      llvm::cl::desc("Compute each hoisted input projection this many bytes "
                     "of steps a thread at a time "
                     "(lstm-chunk-hoisted-projections); 0: whole"),
      llvm::cl::init(lstm::LSTMToCPUOptions().chunkBytes)};
  Option<int64_t> hoistMinThreads{
      *this, "hoist-min-threads",
      llvm::cl::desc("The least number of threads at run time that runs the "
                     "hoisted input projections hoisted; fewer compute them "
                     "in the steps (lstm-hoist-by-threads; 1 or less: always "
                     "hoisted)"),
      llvm::cl::init(lstm::LSTMToCPUOptions().hoistMinThreads)};
  Option<bool> splitBatch{
      *this, "split-batch",
      llvm::cl::desc("Run each layer whose rows are independent on parts of "
                     "its batch, a thread each (lstm-split-batch)"),
      llvm::cl::init(lstm::LSTMToCPUOptions().splitBatch)};
};

struct NVVMPipelineOptions : PassPipelineOptions<NVVMPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU architecture"),
                           llvm::cl::init(lstm::kDefaultGpuChip.str())};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX features"),
                               llvm::cl::init(lstm::kDefaultPtxFeatures.str())};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("Threads per block of the kernels"),
                            llvm::cl::init(256)};
  Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit with ptxas and libdevice (default: the "
                     "one found at configure time)"),
      llvm::cl::init("")};
  Option<bool> cublas{*this, "cublas",
                      llvm::cl::desc("Send the GEMMs to cuBLAS"),
                      llvm::cl::init(true)};
  Option<int64_t> cublasMinSize{
      *this, "cublas-min-size",
      llvm::cl::desc("Smallest m*n*k*batch sent to cuBLAS; smaller GEMMs "
                     "become generated kernels"),
      llvm::cl::init(0)};
  Option<lstm::GemmComputeType> computeType{
      *this, "compute-type", llvm::cl::desc("GEMM arithmetic"),
      llvm::cl::init(lstm::GemmComputeType::fp32),
      lstm::gemmComputeTypeValues()};
  Option<bool> runtimeChecks{*this, "runtime-checks", runtimeChecksDesc,
                             llvm::cl::init(true)};
  Option<bool> splitTF32Gemms{
      *this, "split-tf32-gemms",
      llvm::cl::desc("Under compute-type=fp32, a sequence's products on "
                     "TF32 tensor cores with each operand split into two "
                     "TF32 values (3xTF32, lstm-split-tf32-gemms); false: "
                     "fp32 FMAs"),
      llvm::cl::init(lstm::LSTMToNVVMOptions().splitTF32Gemms)};
  Option<bool> persistent{
      *this, "persistent",
      llvm::cl::desc("Run each layer that lstm-to-persistent handles as one "
                     "persistent kernel, computing in fp32 (under "
                     "compute-type=bf16 with operands rounded to bf16), on "
                     "tensor cores from the batch the cost model starts "
                     "them at"),
      llvm::cl::init(false)};
  Option<bool> persistentTensorCores{
      *this, "persistent-tensor-cores",
      llvm::cl::desc("With persistent=true, the kernels' products on "
                     "tensor cores (sm_80 and later; 3xTF32 under "
                     "compute-type=fp32); false: fp32 FMAs"),
      llvm::cl::init(true)};
  Option<int64_t> persistentSplitDepth{
      *this, "persistent-split-depth",
      llvm::cl::desc("With the kernels on tensor cores, how many warps split "
                     "each tile's depth (a power of two; 1: none); 0: "
                     "where a warp's weights would not fit its registers; "
                     "-1 (chosen): as 0 where the dot products' kernel does "
                     "not reach the tensor cores' batches, else none"),
      llvm::cl::init(-1)};
  Option<bool> perStepFallback{
      *this, "per-step-fallback",
      llvm::cl::desc("With persistent=true, the per-step lowering beside "
                     "each kernel for the batches and GPUs it does not run "
                     "at; false: such a run fails, saying so "
                     "(lstm-to-persistent's per-step-fallback)"),
      llvm::cl::init(true)};
  Option<bool> narrowKernelIndices{
      *this, "narrow-kernel-indices",
      llvm::cl::desc("Compute the persistent kernels' indices in 32 bits "
                     "(lstm-narrow-kernel-indices)"),
      llvm::cl::init(true)};
  Option<int64_t> streams{
      *this, "streams",
      llvm::cl::desc("The most streams independent products run on at once "
                     "(lstm-fork-independent-work; 1: one stream)"),
      llvm::cl::init(4)};
};
} // namespace

void lstm::registerLSTMPipelines() {
  PassPipelineRegistration<OptimizePipelineOptions>(
      "lstm-optimize",
      "The four optimisations of lstm IR (gate-GEMM combining, layer-time "
      "wavefront, input-projection hoisting, elementwise fusion), each "
      "switchable",
      [](OpPassManager &pm, const OptimizePipelineOptions &o) {
        LSTMOptimizeOptions options;
        options.combine = o.combine;
        options.wavefront = o.wavefront;
        options.hoist = o.hoist;
        options.fuse = o.fuse;
        options.differentiate = o.differentiate;
        options.persistent = o.persistent;
        options.sideOutputMaxProduct = o.sideOutputMaxProduct;
        options.productLinks = o.productLinks;
        buildLSTMOptimizePipeline(pm, options);
      });
  PassPipelineRegistration<CPUPipelineOptions>(
      "lstm-to-cpu",
      "Lower the lstm dialect through linalg, bufferization and loops to the "
      "LLVM dialect for the CPU",
      [](OpPassManager &pm, const CPUPipelineOptions &o) {
        LSTMToCPUOptions options;
        options.runtimeChecks = o.runtimeChecks;
        options.blas = o.blas;
        options.blasMinSize = o.blasMinSize;
        options.approximateMath = o.approximateMath;
        options.threads = o.threads;
        options.chunkBytes = o.chunkBytes;
        options.hoistMinThreads = o.hoistMinThreads;
        options.splitBatch = o.splitBatch;
        buildLSTMToCPUPipeline(pm, options);
      });
  // Registered with the error handler PassPipelineRegistration hides: a
  // combination of options the pipeline cannot honour is an error, not
  // ignored.
  registerPassPipeline(
      "lstm-to-nvvm",
      "Lower the lstm dialect through linalg and bufferization to GPU kernels "
      "in NVVM, serialised for the chip, and host code in the LLVM dialect",
      [](OpPassManager &pm, StringRef text,
         function_ref<LogicalResult(const Twine &)> errorHandler) {
        NVVMPipelineOptions o;
        if (failed(o.parseFromString(text)))
          return failure();
        LSTMToNVVMOptions options;
        options.chip = o.chip;
        options.features = o.features;
        options.blockSize = o.blockSize;
        options.cudaPath = o.cudaPath;
        options.cublas = o.cublas;
        options.persistent = o.persistent;
        options.persistentTensorCores = o.persistentTensorCores;
        options.persistentSplitDepth = o.persistentSplitDepth;
        options.perStepFallback = o.perStepFallback;
        options.cublasMinSize = o.cublasMinSize;
        options.computeType = o.computeType;
        options.splitTF32Gemms = o.splitTF32Gemms;
        options.runtimeChecks = o.runtimeChecks;
        options.narrowKernelIndices = o.narrowKernelIndices;
        options.streams = o.streams;
        buildLSTMToNVVMPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const ::mlir::detail::PassOptions &)> printOptions) {
        printOptions(NVVMPipelineOptions());
      });
}
