//===- Cublas.cpp - GEMMs of a compiled network through cuBLAS ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The GEMM call-out of the GPU path (GemmToCublas.cpp emits the calls). cuBLAS
// is loaded with dlopen on the first GEMM rather than linked, so that a
// compiled network whose GEMMs all became kernels needs only the CUDA driver,
// and one that calls cuBLAS finds the copy the process already has (PyTorch
// loads its own) before looking on the loader path and in the toolkit.
//
// Matrices are row-major, as memrefs are; cuBLAS is column-major. A row-major
// C = op(A)·op(B) is the column-major C^T = op(B)^T·op(A)^T, so every call
// swaps the operands instead of transposing anything.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include "lstm/Runtime/CudaRuntime.h"

#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>

using namespace lstm::runtime;

namespace {

#define LSTM_CUBLAS_FUNCTIONS(X)                                               \
  X(cublasCreate_v2)                                                           \
  X(cublasSetStream_v2)                                                        \
  X(cublasSetMathMode)                                                         \
  X(cublasGemmEx_64)                                                           \
  X(cublasGemmStridedBatchedEx_64)                                             \
  X(cublasGetStatusName)                                                       \
  X(cublasGetStatusString)

struct CublasLibrary {
#define LSTM_DECLARE(name) decltype(&::name) name = nullptr;
  LSTM_CUBLAS_FUNCTIONS(LSTM_DECLARE)
#undef LSTM_DECLARE
};

/// Opens cuBLAS and resolves its entry points once per process; null (with
/// a failure recorded) when no copy can be found.
const CublasLibrary *cublas() {
  static const CublasLibrary *library = []() -> const CublasLibrary * {
    const std::string soname =
        "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
    void *handle = nullptr;
    std::string tried;
    auto tryOpen = [&](const std::string &path, int flags) {
      if (!handle && !path.empty()) {
        handle = dlopen(path.c_str(), flags);
        tried += " " + path;
      }
    };
    if (const char *env = std::getenv("LSTM_CUBLAS_LIBRARY"))
      tryOpen(env, RTLD_NOW | RTLD_LOCAL);
    tryOpen(soname, RTLD_NOW | RTLD_NOLOAD);
    tryOpen(soname, RTLD_NOW | RTLD_LOCAL);
#ifdef LSTM_CUDA_TOOLKIT_DIR
    tryOpen(std::string(LSTM_CUDA_TOOLKIT_DIR) + "/lib64/" + soname,
            RTLD_NOW | RTLD_LOCAL);
#endif
    for (const char *var : {"CUDA_HOME", "CUDA_PATH"})
      if (const char *dir = std::getenv(var); dir && *dir)
        tryOpen(std::string(dir) + "/lib64/" + soname, RTLD_NOW | RTLD_LOCAL);
    // The previous major version: the entry points used here are those of
    // cuBLAS 12 too, which a machine with an older toolkit (or PyTorch's
    // wheels) has; the process's copy first.
    if (CUBLAS_VER_MAJOR > 12) {
      tryOpen("libcublas.so.12", RTLD_NOW | RTLD_NOLOAD);
      tryOpen("libcublas.so.12", RTLD_NOW | RTLD_LOCAL);
    }
    if (!handle) {
      recordFailure("cannot load cuBLAS (tried:" + tried +
                    "); set LSTM_CUBLAS_LIBRARY to its path");
      return nullptr;
    }
    auto *lib = new CublasLibrary;
#define LSTM_RESOLVE(name)                                                     \
  lib->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));       \
  if (!lib->name) {                                                            \
    recordFailure("cuBLAS lacks " #name);                                      \
    return nullptr;                                                            \
  }
    LSTM_CUBLAS_FUNCTIONS(LSTM_RESOLVE)
#undef LSTM_RESOLVE
    return lib;
  }();
  if (!library)
    recordFailure("cuBLAS is not available");
  return library;
}

bool checkCublas(const CublasLibrary *lib, cublasStatus_t status,
                 const char *call) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return true;
  recordFailure(std::string(call) +
                " failed: " + lib->cublasGetStatusName(status) + " (" +
                lib->cublasGetStatusString(status) + ")");
  return false;
}

#define LSTM_CUBLAS_CHECK(lib, expr) checkCublas(lib, (lib)->expr, #expr)

/// This thread's handle, bound to the run's stream.
cublasHandle_t handleOnStream(const CublasLibrary *lib) {
  static thread_local cublasHandle_t handle = nullptr;
  if (!handle) {
    if (!LSTM_CUBLAS_CHECK(lib, cublasCreate_v2(&handle)))
      return nullptr;
    // The default math mode: fp32 means fp32 (CUBLAS_COMPUTE_32F never uses
    // TF32 in it), TF32 only through CUBLAS_COMPUTE_32F_FAST_TF32. (The
    // pedantic mode would also forbid the fast fp32 kernels.)
    if (!LSTM_CUBLAS_CHECK(lib,
                           cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH))) {
      handle = nullptr;
      return nullptr;
    }
  }
  if (!LSTM_CUBLAS_CHECK(lib, cublasSetStream_v2(handle, currentStream())))
    return nullptr;
  return handle;
}

/// The cuBLAS types of a compute type (LSTMRuntimeComputeType).
struct GemmTypes {
  cudaDataType inputs;
  cublasComputeType_t compute;
};

bool gemmTypes(int32_t computeType, GemmTypes &types) {
  switch (computeType) {
  case LSTM_RUNTIME_COMPUTE_FP32:
    types = {CUDA_R_32F, CUBLAS_COMPUTE_32F};
    return true;
  case LSTM_RUNTIME_COMPUTE_TF32:
    types = {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32};
    return true;
  case LSTM_RUNTIME_COMPUTE_BF16:
    types = {CUDA_R_16BF, CUBLAS_COMPUTE_32F};
    return true;
  }
  recordFailure("unknown GEMM compute type " + std::to_string(computeType));
  return false;
}

cublasOperation_t op(int32_t transposed) {
  return transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
}

} // namespace

extern "C" {

void lstmRuntimeGemm(int32_t computeType, int32_t transA, int32_t transB,
                     int64_t m, int64_t n, int64_t k, float alpha,
                     const void *a, int64_t lda, const void *b, int64_t ldb,
                     float beta, void *c, int64_t ldc) {
  lstmRuntimeGemmStridedBatched(computeType, transA, transB, m, n, k, alpha, a,
                                lda, 0, b, ldb, 0, beta, c, ldc, 0, 1);
}

void lstmRuntimeGemmStridedBatched(int32_t computeType, int32_t transA,
                                   int32_t transB, int64_t m, int64_t n,
                                   int64_t k, float alpha, const void *a,
                                   int64_t lda, int64_t strideA, const void *b,
                                   int64_t ldb, int64_t strideB, float beta,
                                   void *c, int64_t ldc, int64_t strideC,
                                   int64_t batch) {
  if (hasFailed() || m == 0 || n == 0 || batch == 0)
    return;
  GemmTypes types;
  if (!gemmTypes(computeType, types) || !ensureContext())
    return;
  const CublasLibrary *lib = cublas();
  if (!lib)
    return;
  cublasHandle_t handle = handleOnStream(lib);
  if (!handle)
    return;
  if (k == 0) {
    // C = beta·C; cuBLAS handles it, but a zero leading dimension of an
    // empty operand is not valid for it.
    lda = lda ? lda : 1;
    ldb = ldb ? ldb : 1;
  }
  // Column-major view: C^T[n×m] = op(B)^T[n×k] · op(A)^T[k×m].
  if (batch == 1) {
    LSTM_CUBLAS_CHECK(lib,
                      cublasGemmEx_64(handle, op(transB), op(transA), n, m, k,
                                      &alpha, b, types.inputs, ldb, a,
                                      types.inputs, lda, &beta, c, CUDA_R_32F,
                                      ldc, types.compute, CUBLAS_GEMM_DEFAULT));
    return;
  }
  LSTM_CUBLAS_CHECK(lib, cublasGemmStridedBatchedEx_64(
                             handle, op(transB), op(transA), n, m, k, &alpha, b,
                             types.inputs, ldb, strideB, a, types.inputs, lda,
                             strideA, &beta, c, CUDA_R_32F, ldc, strideC, batch,
                             types.compute, CUBLAS_GEMM_DEFAULT));
}

} // extern "C"
