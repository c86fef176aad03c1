//===- CpuBlas.cpp - The CPU runtime's GEMMs: oneDNN and OpenBLAS ---------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// float products run in oneDNN's sgemm (Debian's libdnnl), double ones in
// OpenBLAS. oneDNN is chosen by measurement: on the shapes of recurrent
// networks on one core (a step's h·Rᵀ with a batch of 8 to 64 rows, the
// hoisted projection of T·B rows) its JIT kernels run 1.2-2.1x OpenBLAS
// 0.3.21's, which spends a fifth of such a product packing its operands
// (docs/benchmarks.md, "The CPU"). It threads with OpenMP (libgomp).
//
// OpenBLAS takes 32-bit sizes (Debian's build is not ILP64) and both
// refuse a leading dimension shorter than a row. Generated code can hand
// them neither: sizes come from tensors of any extent, and a strided view
// with one row may carry any stride. Larger products are split into blocks
// that fit, and the rare layouts they refuse are computed here directly.
//
//===----------------------------------------------------------------------===//

#include "CpuThreads.h"
#include "lstm/Runtime/CpuRuntime.h"

#include <algorithm>
#include <atomic>
#include <cblas.h>
#include <climits>
#include <omp.h>
#include <oneapi/dnnl/dnnl.h>
#include <pthread.h>
#include <thread>

namespace {

/// The thread count of the products; 0 until set (one per core).
std::atomic<int32_t> threadCount{0};

/// Whether this process is a child forked from one that ran this runtime.
/// GNU's OpenMP runtime is not fork-safe: a child whose parent had a team
/// of threads hangs in its first parallel region of more than one thread.
/// A forked child computes on one thread, as PyTorch's workers do.
std::atomic<bool> forkedChild{false};

void afterFork() {
  forkedChild.store(true, std::memory_order_relaxed);
  threadCount.store(1, std::memory_order_relaxed);
}

/// Registers afterFork when the runtime is loaded.
[[maybe_unused]] const int forkHandler =
    pthread_atfork(nullptr, nullptr, afterFork);

int32_t coreCount() {
  return static_cast<int32_t>(
      std::max(1u, std::thread::hardware_concurrency()));
}

/// The largest extent handed to the BLAS in one call. The tests build the
/// runtime a second time with a tiny limit, so that the splitting runs on
/// products that fit in memory (test/Runtime/CMakeLists.txt).
#ifndef LSTM_CPU_BLAS_MAX_BLOCK
#define LSTM_CPU_BLAS_MAX_BLOCK (INT_MAX / 2)
#endif
constexpr int64_t kMaxBlock = LSTM_CPU_BLAS_MAX_BLOCK;

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          float alpha, const float *a, int lda, const float *b, int ldb,
          float beta, float *c, int ldc) {
  lstm::applyCpuThreadCount();
  if (dnnl_sgemm(ta == CblasTrans ? 'T' : 'N', tb == CblasTrans ? 'T' : 'N', m,
                 n, k, alpha, a, lda, b, ldb, beta, c, ldc) == dnnl_success)
    return;
  // oneDNN fails only where it cannot allocate its packing buffers; the
  // BLAS packs into its own, preallocated ones.
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          float alpha, const double *a, int lda, const double *b, int ldb,
          float beta, double *c, int ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c,
              ldc);
}

/// One product computed directly, for the layouts the BLAS refuses.
template <typename T>
void directGemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
                T alpha, const T *a, int64_t lda, const T *b, int64_t ldb,
                T beta, T *c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T sum = 0;
      for (int64_t p = 0; p < k; ++p)
        sum += (transA ? a[p * lda + i] : a[i * lda + p]) *
               (transB ? b[j * ldb + p] : b[p * ldb + j]);
      T &out = c[i * ldc + j];
      out = alpha * sum + (beta == T(0) ? T(0) : beta * out);
    }
}

template <typename T>
void stridedBatchedGemm(int32_t transA, int32_t transB, int64_t m, int64_t n,
                        int64_t k, float alpha, const T *a, int64_t lda,
                        int64_t strideA, const T *b, int64_t ldb,
                        int64_t strideB, float beta, T *c, int64_t ldc,
                        int64_t strideC, int64_t batch) {
  if (m <= 0 || n <= 0 || batch <= 0)
    return;
  // Rows of A as stored are k long (m when transposed), and so on. The
  // stride between the rows of a one-row matrix is never used: any view of
  // one row may carry any stride, so it is made one the BLAS accepts.
  int64_t aRow = transA ? m : k, bRow = transB ? k : n;
  if ((transA ? k : m) == 1)
    lda = std::max<int64_t>(1, aRow);
  if ((transB ? n : k) == 1)
    ldb = std::max<int64_t>(1, bRow);
  if (m == 1)
    ldc = std::max<int64_t>(1, n);
  bool blasLayout = lda >= std::max<int64_t>(1, aRow) && lda <= INT_MAX &&
                    ldb >= std::max<int64_t>(1, bRow) && ldb <= INT_MAX &&
                    ldc >= std::max<int64_t>(1, n) && ldc <= INT_MAX;
  CBLAS_TRANSPOSE ta = transA ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE tb = transB ? CblasTrans : CblasNoTrans;
  for (int64_t i = 0; i < batch; ++i) {
    const T *ai = a + i * strideA, *bi = b + i * strideB;
    T *ci = c + i * strideC;
    if (!blasLayout) {
      directGemm<T>(transA, transB, m, n, k, alpha, ai, lda, bi, ldb, beta, ci,
                    ldc);
      continue;
    }
    if (k == 0) {
      // C = beta·C, which the BLAS may skip for an empty sum.
      for (int64_t r = 0; r < m; ++r)
        for (int64_t j = 0; j < n; ++j)
          ci[r * ldc + j] = beta == 0.0f ? T(0) : T(beta) * ci[r * ldc + j];
      continue;
    }
    for (int64_t m0 = 0; m0 < m; m0 += kMaxBlock)
      for (int64_t n0 = 0; n0 < n; n0 += kMaxBlock)
        for (int64_t k0 = 0; k0 < k; k0 += kMaxBlock) {
          int64_t mb = std::min(kMaxBlock, m - m0);
          int64_t nb = std::min(kMaxBlock, n - n0);
          int64_t kb = std::min(kMaxBlock, k - k0);
          const T *ab = transA ? ai + k0 * lda + m0 : ai + m0 * lda + k0;
          const T *bb = transB ? bi + n0 * ldb + k0 : bi + k0 * ldb + n0;
          gemm(ta, tb, static_cast<int>(mb), static_cast<int>(nb),
               static_cast<int>(kb), alpha, ab, static_cast<int>(lda), bb,
               static_cast<int>(ldb), k0 == 0 ? beta : 1.0f, ci + m0 * ldc + n0,
               static_cast<int>(ldc));
        }
  }
}

} // namespace

void lstm::applyCpuThreadCount() {
  // OpenMP's thread count is a setting of the calling thread: the count
  // asked for (from any thread) is applied on the one that computes. A
  // thread of a team (a part of a layer's batch, lstm-split-batch) computes
  // alone: oneDNN runs nested work on one thread anyway, and a primitive
  // made for the whole count would be split for threads it does not get.
  int32_t threads =
      omp_in_parallel() ? 1 : threadCount.load(std::memory_order_relaxed);
  if (threads > 0 && omp_get_max_threads() != threads)
    omp_set_num_threads(threads);
}

extern "C" {

void lstmRuntimeCpuSgemm(int32_t transA, int32_t transB, int64_t m, int64_t n,
                         int64_t k, float alpha, const float *a, int64_t lda,
                         int64_t strideA, const float *b, int64_t ldb,
                         int64_t strideB, float beta, float *c, int64_t ldc,
                         int64_t strideC, int64_t batch) {
  stridedBatchedGemm(transA, transB, m, n, k, alpha, a, lda, strideA, b, ldb,
                     strideB, beta, c, ldc, strideC, batch);
}

void lstmRuntimeCpuDgemm(int32_t transA, int32_t transB, int64_t m, int64_t n,
                         int64_t k, float alpha, const double *a, int64_t lda,
                         int64_t strideA, const double *b, int64_t ldb,
                         int64_t strideB, float beta, double *c, int64_t ldc,
                         int64_t strideC, int64_t batch) {
  stridedBatchedGemm(transA, transB, m, n, k, alpha, a, lda, strideA, b, ldb,
                     strideB, beta, c, ldc, strideC, batch);
}

void lstmRuntimeCpuSetThreads(int32_t threads) {
  if (threads < 1)
    threads = coreCount();
  if (forkedChild.load(std::memory_order_relaxed))
    threads = 1;
  threadCount.store(threads, std::memory_order_relaxed);
  openblas_set_num_threads(threads);
}

int32_t lstmRuntimeCpuGetThreads(void) {
  // Until set: OpenMP's default, which OMP_NUM_THREADS may have chosen.
  int32_t threads = threadCount.load(std::memory_order_relaxed);
  return threads > 0 ? threads : omp_get_max_threads();
}

} // extern "C"
