//===- Pipelines.h - Named pass pipelines of the project --------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_PIPELINES_PIPELINES_H
#define LSTM_PIPELINES_PIPELINES_H

#include "lstm/Conversion/Utils/GpuTargetOptions.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <string>

namespace mlir {
class OpPassManager;

namespace lstm {

struct LSTMToCPUOptions {
  /// Whether the generated code checks the dynamic extents of the tensor
  /// ops before the lstm ops (lstm-generate-runtime-checks). The lstm ops
  /// check theirs regardless.
  bool runtimeChecks = true;
  /// Whether the products (f32 and f64) run in the CPU runtime's GEMMs
  /// (oneDNN, OpenBLAS)
  /// (lstm-gemm-to-blas), and the smallest m·n·k·batch sent there.
  bool blas = true;
  int64_t blasMinSize = 0;
  /// Whether f32 tanh, exp, log, ... become polynomial approximations
  /// (lstm-approximate-math) rather than libm calls.
  bool approximateMath = true;
  /// Whether the elementwise loops run on the CPU runtime's threads
  /// (lstm-outline-parallel-loops, lstm-dispatch-parallel-bodies) rather
  /// than on the calling thread only.
  bool threads = true;
  /// The bytes of a hoisted input projection computed at a time, per
  /// thread of the products (lstm-chunk-hoisted-projections); 0 (the
  /// default) leaves each whole: 1 MiB measured 1-5% faster on one and two
  /// threads, 1-4% slower on 4 to 16 (docs/benchmarks.md, "Hoisted
  /// projections a chunk of steps at a time").
  int64_t chunkBytes = 0;
  /// The least number of threads (at run time) that runs the hoisted input
  /// projections as they are; with fewer, the layers compute them in their
  /// steps (lstm-hoist-by-threads). 1 or less: always hoisted. 3 by
  /// measurement: in the steps 5-11% faster on one thread, 0-3% on two,
  /// up to 24% slower on three and more (docs/benchmarks.md, "Hoisted or
  /// in the steps, by thread count").
  int64_t hoistMinThreads = 3;
  /// Whether each layer whose cell computes a row from that row alone runs
  /// on parts of its batch, a thread each, for the whole sequence
  /// (lstm-split-batch) rather than with its products and cells split
  /// among the threads at every step.
  bool splitBatch = true;
};

/// Lowers a module of `lstm` (and upstream tensor-level) IR through linalg,
/// one-shot bufferization and loops to the LLVM dialect, ready for the JIT or
/// for translation to LLVM IR.
void buildLSTMToCPUPipeline(OpPassManager &pm,
                            const LSTMToCPUOptions &options = {});

/// Which of the four optimisations `--lstm-optimize` runs, and whether it
/// adds the gradient functions.
struct LSTMOptimizeOptions {
  bool combine = true;
  bool wavefront = true;
  bool hoist = true;
  bool fuse = true;
  /// Run lstm-differentiate after combining (so that the backward step has
  /// one recurrent GEMM); the other passes then optimise the gradient
  /// functions too.
  bool differentiate = false;
  /// Leave stacks to the persistent kernels at the batch sizes their cost
  /// model takes them, the wavefront above (lstm-wavefront's `persistent`).
  bool persistent = false;
  /// lstm-wavefront's `side-output-max-product`: 0, stacks that store
  /// outputs (a training forward) stay layers; on the GPU 2^28 pays
  /// (docs/benchmarks.md), on the CPU the wavefront measured slower.
  int64_t sideOutputMaxProduct = 0;
  /// lstm-wavefront's `product-links`: stacks' backward as wavefronts too.
  bool productLinks = false;
};

/// The optimisation pipeline on `lstm` IR (it stays `lstm` IR, for either
/// lowering): lstm-combine-gate-gemms, (lstm-differentiate,)
/// lstm-share-assembled-columns, lstm-wavefront, lstm-hoist-input-projection,
/// lstm-fuse-elementwise, each when enabled, in that order, with
/// canonicalisation and CSE after them.
void buildLSTMOptimizePipeline(OpPassManager &pm,
                               const LSTMOptimizeOptions &options);

struct LSTMToNVVMOptions {
  /// The GPU architecture and PTX features of the kernels.
  std::string chip = kDefaultGpuChip.str();
  std::string features = kDefaultPtxFeatures.str();
  /// Threads per block of the generated kernels.
  int64_t blockSize = 256;
  /// The CUDA toolkit (ptxas, libdevice); empty means
  /// defaultCudaToolkitPath().
  std::string cudaPath;
  /// Whether GEMMs go to cuBLAS (lstm-gemm-to-cublas), and the smallest
  /// m·n·k·batch that does; smaller ones are generated kernels.
  bool cublas = true;
  int64_t cublasMinSize = 0;
  /// The GEMM arithmetic: fp32 (no TF32), tf32 or bf16 (bf16 operands,
  /// rounded from fp32 by lstm-gemm-operands-to-bf16, fp32 accumulation).
  GemmComputeType computeType = GemmComputeType::fp32;
  /// Under the fp32 compute type, whether a sequence's products (outside
  /// the time loops: hoisted input projections, the backward's products
  /// through the weights) run on TF32 tensor cores with each operand split
  /// into two TF32 values (3xTF32, lstm-split-tf32-gemms), within fp32's
  /// tolerance: those of at least 128 rows and columns and a static depth
  /// of at most 2048.
  bool splitTF32Gemms = true;
  /// As LSTMToCPUOptions::runtimeChecks (the checks run on the host).
  bool runtimeChecks = true;
  /// Whether layers whose cell lstm-to-persistent handles run as one
  /// persistent kernel each (the others keep the per-step lowering). Their
  /// products run on tensor cores (sm_80 and later, where a warp's weights
  /// fit in its registers as the instructions' fragments, from the batch
  /// the cost model starts them at): TF32 or bf16 operands under tf32 and
  /// bf16, each operand split into two TF32 values under fp32 (3xTF32, as
  /// exact as fp32 FMAs); `persistentTensorCores` false keeps fp32 FMAs
  /// (their operands rounded to bf16 under bf16).
  bool persistent = false;
  bool persistentTensorCores = true;
  /// With tensor cores, how many warps split each tile's depth
  /// (lstm-to-persistent's `tensor-cores-split-depth`; 1: none; 0: only
  /// where a warp's weights would not fit its registers otherwise; -1:
  /// chosen, as 0 where the dot products' kernel does not reach the
  /// tensor cores' batches, else none).
  int64_t persistentSplitDepth = -1;
  /// With `persistent`, the per-step lowering beside each kernel for the
  /// batches and GPUs the kernel does not run at (lstm-to-persistent's
  /// `per-step-fallback`); without it such a run fails, saying so.
  bool perStepFallback = true;
  /// Whether the persistent kernels compute their indices in 32 bits
  /// (lstm-narrow-kernel-indices).
  bool narrowKernelIndices = true;
  /// With `persistent`, the kernels outlined as soon as lstm-to-persistent
  /// makes them and in NVVM once the host code is in buffers
  /// (lstm-specialize-kernel-arguments gives them what their launches
  /// pass), before the rest of the lowering; compileToSharedLibrary then
  /// serialises them beside it. Off by default until their speed is
  /// measured: the kernels differ from the others' in a few instructions
  /// (docs/benchmarks.md, "The persistent kernels outlined before
  /// bufferization").
  bool persistentFirst = false;
  /// The most streams that independent products of the host code run on at
  /// once (lstm-fork-independent-work; 1: one stream).
  int64_t streams = 4;
};

/// Lowers a module of `lstm` IR to host code in the LLVM dialect that calls
/// the `mgpu*` runtime ABI, with the kernels in NVVM serialised to a fatbin
/// for `options.chip` (through the CUDA toolkit's ptxas). Function arguments
/// and results are device buffers.
/// The CUDA toolkit used when none is given: $CUDA_HOME or $CUDA_PATH, else
/// the one found when the project was configured if its bin/ptxas exists,
/// else the one whose ptxas is on PATH.
std::string defaultCudaToolkitPath();

void buildLSTMToNVVMPipeline(OpPassManager &pm,
                             const LSTMToNVVMOptions &options);

/// buildLSTMToNVVMPipeline in its three parts, for a caller that runs them
/// apart (compileToSharedLibrary serialises the kernels beside the host
/// code's lowering): the lowering up to the kernels in NVVM (gpu.modules
/// with their target, the host code still in upstream dialects); then the
/// host code to the LLVM dialect, which needs nothing of the kernels but
/// their symbols (it runs as well once they have left the module, an empty
/// gpu.binary of each module's name in its place); and
/// buildKernelBinaryPipeline.
void buildLSTMToNVVMKernelsPipeline(OpPassManager &pm,
                                    const LSTMToNVVMOptions &options);
void buildLSTMToNVVMHostPipeline(OpPassManager &pm);

/// buildLSTMToNVVMKernelsPipeline in its two parts, for a caller that
/// serialises the persistent kernels while the rest is lowered: the host
/// code up to buffers and, with `options.persistent` and
/// `options.persistentFirst`, lstm-to-persistent's kernels outlined and in
/// NVVM (in modules of their own, with their target); then the rest of the
/// lowering to the kernels in NVVM.
void buildLSTMToNVVMBuffersPipeline(OpPassManager &pm,
                                    const LSTMToNVVMOptions &options);
void buildLSTMToNVVMLaunchesPipeline(OpPassManager &pm,
                                     const LSTMToNVVMOptions &options);

/// gpu-module-to-binary with the toolkit at `cudaPath` (empty:
/// defaultCudaToolkitPath()): each gpu.module in NVVM becomes a gpu.binary
/// holding its fatbin. The end of buildLSTMToNVVMPipeline.
void buildKernelBinaryPipeline(OpPassManager &pm, StringRef cudaPath);

/// Registers the named pipelines (`lstm-optimize`, `lstm-to-cpu`,
/// `lstm-to-nvvm`) with the pass registry.
void registerLSTMPipelines();

} // namespace lstm
} // namespace mlir

#endif // LSTM_PIPELINES_PIPELINES_H
