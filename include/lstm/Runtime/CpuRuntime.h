/*===- CpuRuntime.h - C API of the project's CPU runtime ----------*- C -*-===//
 *
 * Part of lstm-compiler, under the Apache License v2.0 with LLVM
 * Exceptions. See LICENSE for license information.
 * SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
 *
 * What generated CPU code calls: the products of the cells (combined gate
 * GEMMs, hoisted input projections, the backward's weight gradients) run in
 * oneDNN's sgemm (float) and OpenBLAS (double), as they run in cuBLAS on
 * the GPU. The entry points have the
 * argument list of lstmRuntimeGemmStridedBatched (CudaRuntime.h) without the
 * compute type: lstm-gemm-to-blas emits both kinds of call alike.
 *
 *===----------------------------------------------------------------------===*/

#ifndef LSTM_RUNTIME_CPURUNTIME_H
#define LSTM_RUNTIME_CPURUNTIME_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// For each of `batch` products: C = alpha·op(A)·op(B) + beta·C on row-major
/// float matrices (op(A) is m×k, op(B) k×n, C m×n; leading dimensions are
/// row strides and the batch strides step between products, in elements).
/// Any size is accepted: what exceeds the BLAS's 32-bit sizes is split, and
/// leading dimensions it would refuse are computed without it.
void lstmRuntimeCpuSgemm(int32_t transA, int32_t transB, int64_t m, int64_t n,
                         int64_t k, float alpha, const float *a, int64_t lda,
                         int64_t strideA, const float *b, int64_t ldb,
                         int64_t strideB, float beta, float *c, int64_t ldc,
                         int64_t strideC, int64_t batch);

/// A float product C = alpha·op(A)·op(B) + beta·C computed many times with
/// the same B and layout (a recurrent weight inside a time loop):
/// lstmRuntimeCpuSgemmPrepare packs B once and returns a plan (it reads B
/// there, and B must not change until the plan is released);
/// lstmRuntimeCpuSgemmPrepared computes one product with the plan, on A and
/// C with the layout given when preparing; lstmRuntimeCpuSgemmRelease frees
/// the plan. The arguments mean what they mean for lstmRuntimeCpuSgemm
/// (one product, no batch). lstm-prepare-loop-gemms emits these calls.
void *lstmRuntimeCpuSgemmPrepare(int32_t transA, int32_t transB, int64_t m,
                                 int64_t n, int64_t k, float alpha, int64_t lda,
                                 const float *b, int64_t ldb, float beta,
                                 int64_t ldc);
void lstmRuntimeCpuSgemmPrepared(void *plan, const float *a, float *c);
void lstmRuntimeCpuSgemmRelease(void *plan);

/// The same on double matrices (the float64 builds of the tests).
void lstmRuntimeCpuDgemm(int32_t transA, int32_t transB, int64_t m, int64_t n,
                         int64_t k, float alpha, const double *a, int64_t lda,
                         int64_t strideA, const double *b, int64_t ldb,
                         int64_t strideB, float beta, double *c, int64_t ldc,
                         int64_t strideC, int64_t batch);

/// The allocation functions of generated CPU code (the memref lowering's
/// generic ones): blocks from malloc, large freed ones kept for reuse, so
/// that a buffer a compiled function returns may be released with free().
void *_mlir_memref_to_llvm_alloc(uint64_t size);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size);
void _mlir_memref_to_llvm_free(void *block);

/// Frees the blocks the allocation functions keep for reuse.
void lstmRuntimeCpuEmptyCache(void);

/* A strided copy between two unranked memrefs (element size in bytes), as
 * libmlir_c_runner_utils defines it: the lowering of non-contiguous
 * memref.copy calls it. */
void memrefCopy(int64_t elemSize, void *src, void *dst);

/// The number of threads the products use; `threads` < 1 means one per
/// core. Until it is set, OpenMP's default (OMP_NUM_THREADS, else one per
/// core). In a child forked from a process that loaded the
/// runtime it is one, whatever is asked: the OpenMP runtime behind the
/// float products cannot start a team of threads there.
void lstmRuntimeCpuSetThreads(int32_t threads);
int32_t lstmRuntimeCpuGetThreads(void);

/// Calls task(context, begin, end) on parts [begin, end) of [lo, hi), from
/// the threads of the products (lstmRuntimeCpuSetThreads), together
/// covering [lo, hi) once; returns when all have returned. `work` is the
/// cost of one iteration, in operations: parts get at least 2^16 of them
/// (about 1.5 µs); below twice that in all, or on one thread, it is one
/// call on the calling thread. The calls
/// of lstm-dispatch-parallel-bodies.
void lstmRuntimeCpuParallelFor(void (*task)(void *, int64_t, int64_t),
                               void *context, int64_t lo, int64_t hi,
                               int64_t work);

/// A failed run-time check (`message`) or a buffer of `bytes` that could not
/// be allocated for the value made at `where`, in generated CPU code
/// (lstm-report-failed-checks, lstm-check-allocations): inside
/// lstmRuntimeCpuGuardedCall the call returns 1 with the message, else the
/// message goes to stderr and the process aborts.
void lstmRuntimeCpuCheckFailed(const char *message);
void lstmRuntimeCpuOutOfMemory(uint64_t bytes, const char *where);

/// Calls `packed(arguments)` (a library's `_lstm_packed_NAME`: the
/// arguments of `_mlir_ciface_NAME` as an array of pointers) and returns 0;
/// or 1 when the call stopped at a failed check or allocation, whose
/// message lstmRuntimeCpuLastFailure then returns (this thread's). The
/// buffers the call had allocated (_mlir_memref_to_llvm_alloc) and the
/// plans it had prepared (lstmRuntimeCpuSgemmPrepare), not yet released,
/// are released then; a failure in a thread's part of a parallel region
/// (lstmRuntimeCpuParallelFor) ends that part, and the call once the
/// region is over.
int32_t lstmRuntimeCpuGuardedCall(void (*packed)(void **), void **arguments);
const char *lstmRuntimeCpuLastFailure(void);

#ifdef __cplusplus
}
#endif

#endif /* LSTM_RUNTIME_CPURUNTIME_H */
