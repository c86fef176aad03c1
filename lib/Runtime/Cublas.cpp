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
// A strided batched GEMM runs as cuBLAS's batched call or as one call per
// matrix, whichever measured faster the first time its shape came (timed on
// scratch output, outside stream captures): cuBLAS's heuristics can pick a
// batched kernel well below its single ones (H100, TF32, the wavefront's
// [2, 128, 2048] x [2, 2048, 8192]: 90 TFLOP/s batched, 137 one by one).
// LSTM_RUNTIME_GEMM_BATCHED=batched or =looped forces a form.
//
//===----------------------------------------------------------------------===//

#include "RuntimeState.h"

#include "lstm/Runtime/CudaRuntime.h"

#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

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

namespace {

/// One strided batched GEMM's operands, row-major (as the entry point takes
/// them).
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

/// Runs `g` as one batched call or as `batch` calls.
bool runBatched(const CublasLibrary *lib, cublasHandle_t handle,
                const GemmTypes &types, const BatchedGemm &g, bool looped) {
  size_t elementA = types.inputs == CUDA_R_16BF ? 2 : 4;
  if (!looped)
    return LSTM_CUBLAS_CHECK(
        lib, cublasGemmStridedBatchedEx_64(
                 handle, op(g.transB), op(g.transA), g.n, g.m, g.k, &g.alpha,
                 g.b, types.inputs, g.ldb, g.strideB, g.a, types.inputs, g.lda,
                 g.strideA, &g.beta, g.c, CUDA_R_32F, g.ldc, g.strideC, g.batch,
                 types.compute, CUBLAS_GEMM_DEFAULT));
  for (int64_t i = 0; i < g.batch; ++i)
    if (!LSTM_CUBLAS_CHECK(
            lib,
            cublasGemmEx_64(
                handle, op(g.transB), op(g.transA), g.n, g.m, g.k, &g.alpha,
                static_cast<const char *>(g.b) + i * g.strideB * elementA,
                types.inputs, g.ldb,
                static_cast<const char *>(g.a) + i * g.strideA * elementA,
                types.inputs, g.lda, &g.beta,
                static_cast<char *>(g.c) + i * g.strideC * sizeof(float),
                CUDA_R_32F, g.ldc, types.compute, CUBLAS_GEMM_DEFAULT)))
      return false;
  return true;
}

/// Milliseconds of `reps` runs of `g` in one form, on the stream (after one
/// run to warm up); negative on a failure.
float timeForm(const CublasLibrary *lib, cublasHandle_t handle,
               const GemmTypes &types, const BatchedGemm &g, bool looped,
               CUstream stream) {
  constexpr int reps = 3;
  CUevent start = nullptr, stop = nullptr;
  float ms = -1;
  if (LSTM_CUDA_CHECK(cuEventCreate(&start, CU_EVENT_DEFAULT)) &&
      LSTM_CUDA_CHECK(cuEventCreate(&stop, CU_EVENT_DEFAULT)) &&
      runBatched(lib, handle, types, g, looped) &&
      LSTM_CUDA_CHECK(cuEventRecord(start, stream))) {
    bool ran = true;
    for (int i = 0; i < reps && ran; ++i)
      ran = runBatched(lib, handle, types, g, looped);
    if (ran && LSTM_CUDA_CHECK(cuEventRecord(stop, stream)) &&
        LSTM_CUDA_CHECK(cuEventSynchronize(stop)) &&
        !LSTM_CUDA_CHECK(cuEventElapsedTime(&ms, start, stop)))
      ms = -1;
  }
  if (start)
    cuEventDestroy(start);
  if (stop)
    cuEventDestroy(stop);
  return ms;
}

/// Whether `g` runs one matrix at a time: measured on its first run outside
/// a stream capture (into scratch memory: `c` may be read, beta != 0, and
/// must be written once), remembered per shape and device for the process.
/// During a capture a shape not seen yet takes (and keeps) the batched
/// call, so that a graph and the calls around it compute alike.
/// LSTM_RUNTIME_GEMM_BATCHED=batched or =looped (read at every call) takes
/// one form without measuring; =auto (or unset) measures; anything else is
/// an error of the run.
bool loopedIsFaster(const CublasLibrary *lib, cublasHandle_t handle,
                    int32_t computeType, const GemmTypes &types,
                    const BatchedGemm &g) {
  if (const char *env = std::getenv("LSTM_RUNTIME_GEMM_BATCHED")) {
    std::string form = env;
    if (form == "batched")
      return false;
    if (form == "looped")
      return true;
    if (!form.empty() && form != "auto") {
      recordFailure("LSTM_RUNTIME_GEMM_BATCHED is '" + form +
                    "': expected batched, looped or auto");
      return false;
    }
  }
  CUdevice device = 0;
  if (!LSTM_CUDA_CHECK(cuCtxGetDevice(&device)))
    return false;
  using Key =
      std::tuple<int, int32_t, int32_t, int32_t, int64_t, int64_t, int64_t,
                 int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;
  Key key{device,    computeType, g.transA,  g.transB, g.m,
          g.n,       g.k,         g.lda,     g.ldb,    g.ldc,
          g.strideA, g.strideB,   g.strideC, g.batch};
  static std::mutex mutex;
  static std::map<Key, bool> choices;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = choices.find(key); it != choices.end())
      return it->second;
  }
  CUstream stream = currentStream();
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  bool looped = false;
  if (stream && LSTM_CUDA_CHECK(cuStreamIsCapturing(stream, &capture)) &&
      capture == CU_STREAM_CAPTURE_STATUS_NONE) {
    // The output as the batch lays it out: the last matrix's rows end at
    // (batch - 1) · strideC + m · ldc floats.
    size_t bytes =
        size_t((g.batch - 1) * g.strideC + g.m * g.ldc) * sizeof(float);
    // Without the memory to time in, the batched call (not a failure).
    CUdeviceptr scratch = 0;
    if (cuMemAlloc(&scratch, bytes) == CUDA_SUCCESS) {
      BatchedGemm trial = g;
      trial.c = reinterpret_cast<void *>(scratch);
      trial.beta = 0;
      float batchedMs = timeForm(lib, handle, types, trial, false, stream);
      float loopedMs = timeForm(lib, handle, types, trial, true, stream);
      looped = batchedMs > 0 && loopedMs > 0 && loopedMs < batchedMs;
      LSTM_CUDA_CHECK(cuStreamSynchronize(stream));
      cuMemFree(scratch);
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  return choices.emplace(key, looped).first->second;
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
  BatchedGemm g{transA, transB,  m, n,   k,       a,     lda,   strideA, b,
                ldb,    strideB, c, ldc, strideC, batch, alpha, beta};
  bool looped =
      batch == 1 || loopedIsFaster(lib, handle, computeType, types, g);
  if (!hasFailed())
    runBatched(lib, handle, types, g, looped);
}

} // extern "C"
