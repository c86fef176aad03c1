//===- PipelineRegistration.cpp - The pipelines by name -------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The pipelines as lstm-opt and the pass registry name them, with their
// textual options.
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
  Option<bool> persistentFirst{
      *this, "persistent-first",
      llvm::cl::desc("With persistent=true, the kernels outlined at once and "
                     "lowered to NVVM before the rest "
                     "(lstm-specialize-kernel-arguments after bufferization)"),
      llvm::cl::init(false)};
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
        options.persistentFirst = o.persistentFirst;
        options.streams = o.streams;
        buildLSTMToNVVMPipeline(pm, options);
        return success();
      },
      [](function_ref<void(const ::mlir::detail::PassOptions &)> printOptions) {
        printOptions(NVVMPipelineOptions());
      });
}
