//===- CublasGemm.h - A GEMM call of the runtime, for cuBLAS and cublasLt -===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//
//
// What Cublas.cpp (cuBLAS's own calls) and CublasLt.cpp (the algorithms
// that cublasLt offers, chosen by measurement) share: one strided batched
// GEMM as the entry point takes it, its cuBLAS types, the loader of the
// toolkit's libraries and a timer of work queued on a stream.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_RUNTIME_CUBLASGEMM_H
#define LSTM_LIB_RUNTIME_CUBLASGEMM_H

#include <cublas_api.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>

#pragma GCC visibility push(hidden)
namespace lstm::runtime {

/// The cuBLAS types of a compute type (LSTMRuntimeComputeType).
struct GemmTypes {
  cudaDataType inputs;
  cublasComputeType_t compute;
};

/// One strided batched GEMM's operands, row-major (as the entry point takes
/// them): C[i] = alpha · op(A[i]) · op(B[i]) + beta · C[i], i < batch.
struct BatchedGemm {
  int32_t transA, transB;
  int64_t m, n, k;
  const void *a;
  int64_t lda, strideA;
  const void *b;
  int64_t ldb, strideB;
  void *c;
  int64_t ldc, strideC, batch;
  float alpha, beta;
};

/// The largest power of two, at most 256, that divides the address of
/// every matrix of an operand (`batch` matrices `stride` elements of
/// `element` bytes apart): cublasLt's algorithms need aligned operands.
inline uint32_t operandAlignment(const void *pointer, int64_t stride,
                                 int64_t batch, size_t element) {
  auto bits = reinterpret_cast<uintptr_t>(pointer);
  if (batch > 1)
    bits |= uintptr_t(stride) * element;
  uint32_t alignment = 256;
  while (alignment > 1 && bits % alignment != 0)
    alignment /= 2;
  return alignment;
}

/// dlopen of a CUDA toolkit library `stem` (e.g. "libcublas") of major
/// version `major`: the path in environment variable `envVar`, the copy the
/// process has already (PyTorch loads its own), the loader path, the
/// toolkit the runtime was built with, $CUDA_HOME and $CUDA_PATH, then the
/// previous major version (the process's copy first). Null if none opens;
/// `tried` lists the paths.
void *openCudaLibrary(const std::string &stem, const char *envVar, int major,
                      std::string &tried);

/// Where the runs of a timing read B: `g.b` itself, or in turn each of
/// `count` copies of it, so that B comes from memory at each run, as a
/// step's weights do where the work between two steps (other products,
/// other layers' weights) has evicted them from the L2 cache.
struct BCopies {
  const void *const *copies = nullptr;
  int count = 0;
  /// The B of run `i` of a GEMM whose B is `b`.
  const void *of(int i, const void *b) const {
    return count > 0 ? copies[i % count] : b;
  }
};

/// GPU milliseconds of `reps` runs of `run(i)`, i < reps: captured on `stream`
/// (not the legacy default stream) into a CUDA graph, replayed once to warm up,
/// then timed by events around a second replay. Timing the calls as they
/// are queued would time the host where a GEMM takes less than its call
/// (cublasGemmEx's heuristics cost a few microseconds a call, a step's
/// GEMM at batch 32 takes about 7): in a CUDA graph only the GPU's time
/// counts. Negative if a run, the capture or the timing failed.
template <typename Run> float timeRuns(CUstream stream, int reps, Run &&run) {
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  CUevent start = nullptr, stop = nullptr;
  float ms = -1;
  bool ran = cuStreamBeginCapture(
                 stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS;
  if (ran) {
    for (int i = 0; i < reps && ran; ++i)
      ran = run(i);
    // Ends the capture whatever happened.
    ran = cuStreamEndCapture(stream, &graph) == CUDA_SUCCESS && ran;
  }
  if (ran && cuGraphInstantiate(&exec, graph, 0) == CUDA_SUCCESS &&
      cuEventCreate(&start, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
      cuEventCreate(&stop, CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
      cuGraphLaunch(exec, stream) == CUDA_SUCCESS &&
      cuEventRecord(start, stream) == CUDA_SUCCESS &&
      cuGraphLaunch(exec, stream) == CUDA_SUCCESS &&
      cuEventRecord(stop, stream) == CUDA_SUCCESS &&
      cuEventSynchronize(stop) == CUDA_SUCCESS &&
      cuEventElapsedTime(&ms, start, stop) != CUDA_SUCCESS)
    ms = -1;
  if (start)
    cuEventDestroy(start);
  if (stop)
    cuEventDestroy(stop);
  if (exec)
    cuGraphExecDestroy(exec);
  if (graph)
    cuGraphDestroy(graph);
  return ms;
}

/// A cublasLt plan for one GEMM shape: its descriptors and the algorithm
/// that measured fastest (CublasLt.cpp).
struct LtPlan;

/// The fastest of the algorithms cublasLt's heuristic offers for `g` (its
/// shape, operand alignments and types), each timed as `reps` runs into
/// `g.c` (scratch memory: beta is 0) by timeRuns on `stream`, if it beats
/// `baselineMs` (cuBLAS's own call, the same runs) by 10% (any, where it is
/// infinite); null otherwise, or where cublasLt cannot be loaded (not a
/// failure: cuBLAS's call serves). Its time goes to `planMs` where given.
const LtPlan *tuneLtGemm(const GemmTypes &types, const BatchedGemm &g,
                         CUstream stream, int reps, float baselineMs,
                         float *planMs = nullptr, BCopies bCopies = {});

/// Frees a plan of tuneLtGemm's that no shape keeps.
void releaseLtPlan(const LtPlan *plan);

/// GPU milliseconds of `reps` runs of `g` in the fastest of the forms the
/// runtime chooses among (Cublas.cpp: cuBLAS's batched call, its calls one
/// by one, cublasLt's algorithms), timed on `stream` into `g.c` (scratch
/// memory: beta is 0), B read from `bCopies`; negative after a failure.
float timeFastestGemm(int32_t computeType, const BatchedGemm &g,
                      CUstream stream, int reps, BCopies bCopies);

/// Runs `g` with `plan` (made for its shape) on `stream`, its workspace from
/// the stream's device memory. False after a failure (recorded).
bool runLtGemm(const LtPlan &plan, const BatchedGemm &g, CUstream stream);

} // namespace lstm::runtime
#pragma GCC visibility pop

#endif // LSTM_LIB_RUNTIME_CUBLASGEMM_H
