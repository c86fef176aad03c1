/*===- CudaRuntime.h - C API of the project's CUDA runtime --------*- C -*-===//
 *
 * Part of lstm-compiler, under the Apache License v2.0 with LLVM
 * Exceptions. See LICENSE for license information.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * The runtime implements the `mgpu*` ABI that upstream `gpu-to-llvm` emits
 * (module load, launch, streams, events, memory) on the CUDA driver API.
 * Those entry points return no status, so a failing CUDA call is recorded
 * here instead: the first failure of a thread (the call, its status and
 * message) is kept, later work of the run is skipped, and the caller of a
 * compiled network asks for it when the network returns.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LSTM_RUNTIME_CUDARUNTIME_H
#define LSTM_RUNTIME_CUDARUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The first CUDA failure recorded on this thread since the last clear, as
/// "cuMemAlloc(...) failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)", or
/// NULL when every call succeeded.
const char *lstmRuntimeLastError(void);

/// Forgets the recorded failure so that the next run starts clean.
void lstmRuntimeClearError(void);

/// Frees device memory returned by a compiled network (its results),
/// ordered on the run's stream.
void lstmRuntimeFree(void *devicePointer);

/// Frees `count` buffers of compiled networks' results, `pointers[i]`
/// ordered on `streams[i]` (NULL: the runtime's own stream), as
/// lstmRuntimeSetStream then lstmRuntimeFree would for each, in one call;
/// the stream of this thread's runs stays as it was.
void lstmRuntimeFreeOnStreams(int64_t count, void *const *pointers,
                              void *const *streams);

/// Hands the device buffers this thread's runs keep for reuse (scratch
/// buffers are cached by size between steps and runs) back to the driver.
void lstmRuntimeEmptyCache(void);

/// Makes `cuStream` (a CUstream, e.g. PyTorch's current stream) the stream
/// that this thread's runs are ordered on; NULL returns to the runtime's own
/// stream. A run is asynchronous: it returns once its work is queued.
void lstmRuntimeSetStream(void *cuStream);

/// Waits for the work queued on the run's stream; returns nonzero when a
/// failure is recorded (see lstmRuntimeLastError).
int lstmRuntimeSynchronize(void);

/// Makes `streams - 1` side streams wait for the work queued so far on the
/// run's stream (nothing for `streams` <= 1). Generated code
/// (lstm-fork-independent-work) calls it before work that it splits among
/// streams, then lstmRuntimeStreamSelect before each stream's share, then
/// lstmRuntimeStreamJoin.
void lstmRuntimeStreamFork(int32_t streams);

/// Sends the launches, allocations and GEMMs that follow to side stream
/// `stream` of the last fork (1 to streams - 1), or to the run's stream (0,
/// or any stream that the fork did not make).
void lstmRuntimeStreamSelect(int32_t stream);

/// Makes the run's stream wait for the work queued on the side streams of
/// the last fork, and selects it again.
void lstmRuntimeStreamJoin(void);

/// The number of SMs of the current context's GPU (0 after a failure,
/// recorded): what the persistent kernels' run-time choice compares their
/// grid with (lstm-to-persistent). LSTM_RUNTIME_GPU_MULTIPROCESSORS=n
/// makes it min(n, the GPU's): a test runs the per-step fallback with it.
int32_t lstmRuntimeGpuMultiprocessors(void);

/// The most dynamic shared memory, in bytes, that a block of the current
/// context's GPU may use once its kernel opts in (0 after a failure,
/// recorded): what a persistent kernel's run-time choice compares its
/// staging with where a batch needs more than the 48 KiB every GPU gives
/// (lstm-to-persistent; mgpuLaunchKernel opts such kernels in).
/// LSTM_RUNTIME_GPU_SHARED_MEMORY=n makes it min(n, the GPU's), as for the
/// SM count.
int32_t lstmRuntimeGpuSharedMemoryPerBlock(void);

/// Called by a library compiled without the per-step lowering beside its
/// persistent kernels (lstm-to-persistent{per-step-fallback=false}) where a
/// kernel does not run: a batch of `batch` rows above the kernel's bound, or
/// a GPU with fewer SMs than its blocks or less shared memory a block than
/// its staging. Records a failure saying so (the rest of the run is then
/// skipped, as after any failure) and, where it is the first failure since
/// the last clear, makes lstmRuntimeNeedsPerStepFallback() return nonzero:
/// the caller may then compile the network with the fallback and call it
/// again (lstmc does, on demand).
void lstmRuntimeMissingPerStepFallback(int64_t batch);

/// Nonzero when the failure recorded since the last clear is
/// lstmRuntimeMissingPerStepFallback's.
int32_t lstmRuntimeNeedsPerStepFallback(void);

/// The precision of a GEMM: fp32 inputs with fp32 arithmetic (no TF32), fp32
/// inputs with TF32 tensor-core arithmetic, bf16 inputs with fp32
/// accumulation. The result is fp32 in each case.
enum LSTMRuntimeComputeType {
  LSTM_RUNTIME_COMPUTE_FP32 = 0,
  LSTM_RUNTIME_COMPUTE_TF32 = 1,
  LSTM_RUNTIME_COMPUTE_BF16 = 2,
};

/// C = alpha·op(A)·op(B) + beta·C on the run's stream through cuBLAS, for
/// row-major matrices in device memory (op(A) is m×k, op(B) k×n, C m×n; the
/// leading dimensions are the row strides, in elements).
void lstmRuntimeGemm(int32_t computeType, int32_t transA, int32_t transB,
                     int64_t m, int64_t n, int64_t k, float alpha,
                     const void *a, int64_t lda, const void *b, int64_t ldb,
                     float beta, void *c, int64_t ldc);

/// `batch` independent GEMMs as lstmRuntimeGemm, the i-th on the matrices at
/// element offsets i·stride of a, b and c.
void lstmRuntimeGemmStridedBatched(int32_t computeType, int32_t transA,
                                   int32_t transB, int64_t m, int64_t n,
                                   int64_t k, float alpha, const void *a,
                                   int64_t lda, int64_t strideA, const void *b,
                                   int64_t ldb, int64_t strideB, float beta,
                                   void *c, int64_t ldc, int64_t strideC,
                                   int64_t batch);

/// The transB (1: B stored [n, k] and read transposed; 0: stored [k, n])
/// under which `batch` products C = op(A)·op(B) of these sizes (C m×n,
/// fp32) run faster, measured on scratch operands once per shape and device
/// (the transposed layout must win by 5%); 1 where nothing can be measured
/// (during a stream capture, or after a failure). lstm-transpose-loop-weights
/// asks it before a loop whose product reads weights that the loop does not
/// change. LSTM_RUNTIME_WEIGHTS_LAYOUT=nk answers 1 and =kn 0 without
/// measuring, =auto (or unset) measures.
int32_t lstmRuntimeGemmFasterTransB(int32_t computeType, int32_t transA,
                                    int64_t m, int64_t n, int64_t k,
                                    int64_t batch);

#ifdef __cplusplus
}
#endif

#endif /* LSTM_RUNTIME_CUDARUNTIME_H */
