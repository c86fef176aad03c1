//===- NVVMPipeline.cpp - The GPU's lowering -----------------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// lstm-to-nvvm: the kernels in NVVM, the host code in the LLVM dialect and
// the kernels' binary; and where the CUDA toolkit is.
//
//===----------------------------------------------------------------------===//

#include "PipelineStages.h"
#include "lstm/Pipelines/Pipelines.h"

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

void lstm::buildLSTMToNVVMPipeline(OpPassManager &pm,
                                   const LSTMToNVVMOptions &options) {
  buildLSTMToNVVMKernelsPipeline(pm, options);
  buildLSTMToNVVMHostPipeline(pm);
  buildKernelBinaryPipeline(pm, options.cudaPath);
}

/// The kernel modules' target: the chip and PTX features of `options`.
static std::unique_ptr<Pass>
createAttachTarget(const lstm::LSTMToNVVMOptions &options) {
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  return createGpuNVVMAttachTarget(target);
}

/// The kernels to NVVM, with `hostControlFlow` the host functions' loops
/// and branches to cf too. Modules in NVVM already pass through unchanged.
static void buildKernelsToNVVM(OpPassManager &pm, bool hostControlFlow) {
  OpPassManager &toCF =
      hostControlFlow ? perSymbol(pm) : pm.nest<gpu::GPUModuleOp>();
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
}

void lstm::buildLSTMToNVVMKernelsPipeline(OpPassManager &pm,
                                          const LSTMToNVVMOptions &options) {
  buildLSTMToNVVMBuffersPipeline(pm, options);
  buildLSTMToNVVMLaunchesPipeline(pm, options);
}

void lstm::buildLSTMToNVVMBuffersPipeline(OpPassManager &pm,
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
  bool persistentFirst = options.persistent && options.persistentFirst;
  if (persistentFirst) {
    // The kernels leave the host functions at once (the only launches
    // yet): the host passes up to the buffers then do not walk their
    // unrolled bodies.
    pm.addPass(createGpuKernelOutliningPass());
    OpPassManager &outlined = pm.nest<gpu::GPUModuleOp>();
    outlined.addPass(createCanonicalizer());
    outlined.addPass(createCSEPass());
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
  // A product that a pointwise op adds last accumulates into the rest of
  // the sum (Cho's GRU's backward step: one kernel fewer). After the
  // concatenation above, which makes one product of two that a cell adds.
  perSymbol(pm).addPass(lstm::createAccumulateIntoProductsPass());
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
  if (persistentFirst) {
    // The kernels take the buffers' layouts and the constants their
    // launches pass (what the kernels' bodies had folded when they stayed
    // in the host functions up to here), then go to NVVM:
    // compileToSharedLibrary serialises them beside the rest of the
    // lowering.
    pm.addPass(lstm::createSpecializeKernelArgumentsPass());
    OpPassManager &specialized = pm.nest<gpu::GPUModuleOp>();
    specialized.addPass(createCanonicalizer());
    specialized.addPass(createCSEPass());
    // One module; identical kernels once specialized (a training forward's
    // in `@f_grad` and `@f_train`) as one.
    pm.addPass(lstm::createMergeGPUModulesPass());
    // Their address arithmetic in 32 bits, in a module of their own (the
    // other kernels keep 64-bit indices: nothing bounds their buffers).
    if (options.narrowKernelIndices)
      pm.addPass(lstm::createNarrowKernelIndicesPass());
    // Their grid barriers, in scf (lowered just below).
    pm.addPass(lstm::createLowerGridBarriersPass());
    pm.addPass(createAttachTarget(options));
    buildKernelsToNVVM(pm, /*hostControlFlow=*/false);
  }
}

void lstm::buildLSTMToNVVMLaunchesPipeline(OpPassManager &pm,
                                           const LSTMToNVVMOptions &options) {
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
  // One module for all kernels: one code generation and ptxas run (with
  // persistent-first the persistent kernels, in NVVM already, stay in
  // theirs).
  pm.addPass(lstm::createMergeGPUModulesPass());
  // The persistent kernels' address arithmetic in 32 bits, in a module of
  // their own (the other kernels keep 64-bit indices: nothing bounds their
  // buffers); with persistent-first, those of kernels that a pipeline
  // before this one made (lstm-to-persistent as a pass of its own).
  if (options.narrowKernelIndices)
    pm.addPass(lstm::createNarrowKernelIndicesPass());
  // The persistent kernels' grid barriers, in scf (lowered just below).
  pm.addPass(lstm::createLowerGridBarriersPass());
  // Launches, allocations and frees become asynchronous on one stream.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());

  pm.addPass(createAttachTarget(options));
  buildKernelsToNVVM(pm, /*hostControlFlow=*/true);
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
