//===- LSTMToPersistent.h - A layer's time loop as one kernel ---*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_LSTMTOPERSISTENT_LSTMTOPERSISTENT_H
#define LSTM_CONVERSION_LSTMTOPERSISTENT_LSTMTOPERSISTENT_H

#include "lstm/Conversion/Utils/GpuTargetOptions.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lstm {

#define GEN_PASS_DECL_CONVERTLSTMTOPERSISTENTPASS
#include "lstm/Conversion/Passes.h.inc"

/// Kernels whose names start with this are launched cooperatively by the
/// CUDA runtime (lstm/Runtime/CudaRuntime.h): they synchronise their whole
/// grid.
inline constexpr llvm::StringLiteral kPersistentKernelPrefix =
    "lstm_persistent";

/// Discardable attribute of the `scf.if` with which lstm-wavefront{persistent
/// =true} runs a stack's layers (then branch) or its wavefront (else branch),
/// by batch size: lstm-to-persistent adds its run-time conditions of the
/// layers' kernels (the grid fits the GPU, so does the shared memory) to the
/// branch condition and converts the layers without a per-step copy of their
/// own: where a kernel cannot run, the stack runs as the wavefront.
inline constexpr llvm::StringLiteral kPersistentStackAttr =
    "lstm.persistent_stack";

/// Discardable attribute of the per-step copy of a layer that
/// lstm-to-persistent left beside its kernel (the run-time choice of the
/// cost model): the pass leaves such layers alone.
inline constexpr llvm::StringLiteral kPerStepFallbackAttr =
    "lstm.persistent_fallback";

/// The CUDA runtime's function that the cost model's run-time choice calls:
/// the SM count of the current GPU (lstm/Runtime/CudaRuntime.h).
inline constexpr llvm::StringLiteral kMultiprocessorCountName =
    "lstmRuntimeGpuMultiprocessors";

/// The CUDA runtime's function that a branch without the per-step lowering
/// (lstm-to-persistent{per-step-fallback=false}) calls where a kernel does
/// not run, with the batch size (lstm/Runtime/CudaRuntime.h): it records a
/// failure that says so.
inline constexpr llvm::StringLiteral kMissingFallbackName =
    "lstmRuntimeMissingPerStepFallback";

/// The CUDA runtime's function that gives the most dynamic shared memory a
/// block of the current GPU may use once its kernel opts in, in bytes
/// (lstm/Runtime/CudaRuntime.h): the run-time choice asks it for kernels
/// that may stage more than kSharedMemoryWithoutOptIn.
inline constexpr llvm::StringLiteral kSharedMemoryPerBlockName =
    "lstmRuntimeGpuSharedMemoryPerBlock";

/// Dynamic shared memory, in bytes, that every GPU gives a block without
/// opting in.
inline constexpr int64_t kSharedMemoryWithoutOptIn = 48 * 1024;

/// How lstm-to-persistent builds a layer's kernel (the pass's options).
struct PersistentOptions {
  /// Threads per block, a multiple of 32 in [32, 1024]; 0: chosen per layer
  /// (512, or 256 where a warp's weights fill more than half of the 64
  /// registers a lane keeps them in, so that a lane may use more).
  int64_t blockSize = 0;
  /// Most blocks of the grid, all resident at once.
  int64_t maxBlocks = 128;
  /// Only where the cost model expects the kernel to be faster, chosen at
  /// run time where it depends on the batch or the GPU.
  bool costModel = true;
  /// Stage with cp.async (nvgpu.device_async_copy; sm_80 and later) where
  /// the widths allow 16-byte copies.
  bool asyncCopies = true;
  /// Most bytes of shared memory a block stages the products' inputs in.
  int64_t sharedMemory = 32 * 1024;
  /// A chain of layers (each reading the projection of the one before's
  /// output) as one kernel, their steps a wavefront.
  bool stacks = true;
  /// Blocks that split the batch's rows as well as the units where a block
  /// has warps to spare for the rows: a block stages only its own rows.
  bool rowTiles = true;
  /// Units a warp computes at once, in one pass over the staged values
  /// (1, 2 or 4; fewer where their weights would not fit in the registers);
  /// 0: chosen by the layout (as many as give each staged value about four
  /// product columns, where the weights leave the rows grouped).
  int64_t unitsAtOnce = 0;
  /// Under the cost model, the per-step lowering of a layer beside its
  /// kernel, for the batches and GPUs the kernel does not run at; without
  /// it, such a run fails with lstmRuntimeMissingPerStepFallback's message.
  bool perStepFallback = true;
  /// Round both operands of every product to bf16 (to nearest, ties to
  /// even) before its fp32 multiply-adds: the arithmetic of the bf16 compute
  /// type (a GEMM with bf16 operands and fp32 accumulation), whose products
  /// of two bf16 values are exact in fp32. The weights are rounded once, as
  /// the registers are loaded; the staged values as the warps read them.
  bool bf16Operands = false;
  /// Compute the products on tensor cores (`mma.sync`, sm_80 and later)
  /// where a warp's weights fit in its registers as the instruction's
  /// fragments: bf16 operands (m16n8k16) under bf16Operands, else TF32
  /// (m16n8k8, both operands rounded to TF32), accumulating in fp32.
  bool tensorCores = false;
  /// With tensorCores and without bf16Operands, each operand as the sum of
  /// two TF32 values, its rounding and the rounding of what that leaves,
  /// and three instructions where TF32 takes one (big · big, big · small,
  /// small · big; "3xTF32"): products as close to fp32's as its dot
  /// products (the fp32 compute type). The registers keep the weights'
  /// fp32 bits, split at each use: as many registers as TF32's.
  bool splitTF32 = false;
  /// With tensorCores, the smallest batch that runs the tensor-core kernel;
  /// below it a kernel of dot products (a second kernel, chosen at run
  /// time). 0: chosen (16 for TF32, 4 for bf16; under splitTF32 the batch
  /// after the dot products' own bound, at most 64: docs/benchmarks.md).
  int64_t tensorCoresFromBatch = 0;
  /// With tensorCores, how many of the warps that split a block's rows
  /// split each tile's depth instead, each keeping its share of the
  /// weights' fragments (a power of two; fewer where the warps or the
  /// depth do not allow it). 0: the least that fits the fragments in the
  /// registers (none where they fit whole); 1: none (docs/benchmarks.md,
  /// "The depth split": neither pays everywhere); -1: chosen, as 0 where
  /// the dot products' own kernel does not reach the batch the tensor
  /// cores start at (the split extends the kernel to batches nothing else
  /// runs it at), else none.
  int64_t tensorCoresSplitDepth = -1;
};

/// The options with which `lstm-to-nvvm{persistent=true}` builds the kernels
/// for GPU `chip` ("sm_XY") under `computeType` (the rest at their
/// defaults): the products on tensor cores from sm_80 on where
/// `tensorCores` (bf16 operands under bf16, TF32 under tf32, 3xTF32 under
/// fp32), else fp32 multiply-adds (on bf16-rounded operands under bf16);
/// cp.async from sm_80 on; the shared memory every GPU of the chip's family
/// gives a block once a kernel opts in.
PersistentOptions persistentOptionsForGpu(GemmComputeType computeType,
                                          StringRef chip, bool tensorCores);

/// The same as the pass's options.
ConvertLSTMToPersistentPassOptions
persistentPassOptionsForGpu(GemmComputeType computeType, StringRef chip,
                            bool tensorCores);

/// The smallest batch at which lstm-to-persistent runs a kernel on tensor
/// cores under `options`, for a layer (or stack) whose kernel of dot
/// products the cost model runs to batch `dotsMaxBatch` and (under
/// splitTF32) the kernel on tensor cores overtakes from batch
/// `dotsOvertakenFrom`.
int64_t tensorCoreMinBatch(const PersistentOptions &options,
                           int64_t dotsMaxBatch, int64_t dotsOvertakenFrom);

/// What lstm-to-persistent, with its cost model, does with a layer.
struct PersistentChoice {
  /// The largest batch size for which the layer runs as a persistent
  /// kernel; 0 if it never does, and then `reason` says why.
  int64_t maxBatch = 0;
  std::string reason;
  /// Whether the layer's own kernel's warps take their rows one at a time
  /// (their weights fill more than half the registers they keep them in).
  bool rowsOneAtATime = false;
  /// The smallest batch its kernel runs on tensor cores at (a kernel of
  /// dot products below it); 0 where it never does.
  int64_t tensorCoresFromBatch = 0;
};

/// The choice lstm-to-persistent makes for `layer` with these options
/// (analysis only: the IR is not changed).
PersistentChoice choosePersistent(LayerOp layer,
                                  const PersistentOptions &options = {});

/// A chain of layers that lstm-to-persistent runs as one kernel (with
/// `stacks`): its layers, in order, and the kernel's grid.
struct StackChoice {
  SmallVector<LayerOp> layers;
  int64_t blocks = 0, threads = 0;
  /// The largest batch size it runs at.
  int64_t maxBatch = 0;
  /// The smallest batch it runs on tensor cores at; 0 where it never does.
  int64_t tensorCoresFromBatch = 0;
};

/// The chains of `layers` that lstm-to-persistent plans one kernel for with
/// these options (analysis only: the IR is not changed; the pass may still
/// keep a chain apart where a layer reads an earlier one's results other
/// than through its input projection).
SmallVector<StackChoice> chooseStacks(ArrayRef<LayerOp> layers,
                                      const PersistentOptions &options = {});

/// The largest batch at which lstm-to-persistent, with its cost model, runs
/// `layers` as kernels where lstm-optimize{persistent=true} kept them for
/// batches up to `branchBound` (the wavefront above): the stack's kernel's
/// bound where they form one, else their own kernels' (on tensor cores in
/// 3xTF32, 3/8 of their bound but at least `branchBound`; else at most it); 0
/// where they do not run as kernels (analysis only).
int64_t chooseStackBranchBound(ArrayRef<LayerOp> layers, int64_t branchBound,
                               const PersistentOptions &options = {});

/// Rewrites `layer` into one persistent `gpu.launch` running all its steps
/// (see the lstm-to-persistent pass). `kernelName` names the kernel (it
/// should start with kPersistentKernelPrefix). With `options.costModel`,
/// only where the cost model expects the kernel to be faster: not at all
/// when the warps cannot keep their weights in registers, else behind an
/// `scf.if` on the batch size, the GPU's SMs and (for a kernel that may
/// stage more than kSharedMemoryWithoutOptIn) its shared memory, with the
/// per-step layer in its else branch. Fails, changing nothing, when the
/// cell is not of the form the kernel handles or the cost model rejects the
/// layer (the reason is printed under -debug-only=lstm-to-persistent).
LogicalResult convertLayerToPersistentKernel(RewriterBase &rewriter,
                                             LayerOp layer,
                                             StringRef kernelName,
                                             const PersistentOptions &options);

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_LSTMTOPERSISTENT_LSTMTOPERSISTENT_H
