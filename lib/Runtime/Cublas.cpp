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
// [2, 128, 2048] x [2, 2048, 8192]: 90 TFLOP/s batched, 137 one by one),
// and then as one of cublasLt's algorithms where one measured faster still
// (CublasLt.cpp). LSTM_RUNTIME_GEMM_BATCHED=batched or =looped forces a
// form, LSTM_RUNTIME_GEMM_ALGO=cublas keeps cuBLAS's own calls.
//
//===----------------------------------------------------------------------===//

#include "CublasGemm.h"
#include "RuntimeState.h"

#include "lstm/Runtime/CudaRuntime.h"

#include <cublas_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

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

} // namespace

void *lstm::runtime::openCudaLibrary(const std::string &stem,
                                     const char *envVar, int major,
                                     std::string &tried) {
  void *handle = nullptr;
  auto tryOpen = [&](const std::string &path, int flags) {
    if (!handle && !path.empty()) {
      handle = dlopen(path.c_str(), flags);
      tried += " " + path;
    }
  };
  const std::string soname = stem + ".so." + std::to_string(major);
  if (const char *env = std::getenv(envVar))
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
  // The previous major version: the entry points the runtime uses are
  // those of cuBLAS 12 too, which a machine with an older toolkit (or
  // PyTorch's wheels) has; the process's copy first.
  if (major > 12) {
    const std::string previous = stem + ".so." + std::to_string(major - 1);
    tryOpen(previous, RTLD_NOW | RTLD_NOLOAD);
    tryOpen(previous, RTLD_NOW | RTLD_LOCAL);
  }
  return handle;
}

namespace {

/// Opens cuBLAS and resolves its entry points once per process; null (with
/// a failure recorded) when no copy can be found.
const CublasLibrary *cublas() {
  static const CublasLibrary *library = []() -> const CublasLibrary * {
    std::string tried;
    void *handle = openCudaLibrary("libcublas", "LSTM_CUBLAS_LIBRARY",
                                   CUBLAS_VER_MAJOR, tried);
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

/// A new handle in the default math mode: fp32 means fp32
/// (CUBLAS_COMPUTE_32F never uses TF32 in it), TF32 only through
/// CUBLAS_COMPUTE_32F_FAST_TF32. (The pedantic mode would also forbid the
/// fast fp32 kernels.) Null after a failure.
cublasHandle_t createHandle(const CublasLibrary *lib) {
  cublasHandle_t handle = nullptr;
  if (!LSTM_CUBLAS_CHECK(lib, cublasCreate_v2(&handle)))
    return nullptr;
  if (!LSTM_CUBLAS_CHECK(lib, cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH)))
    return nullptr;
  return handle;
}

/// This thread's handle for the current stream, bound to it: one for the
/// run's stream and one for each side stream (ForkedStreams.cpp), since
/// cuBLAS's default workspace belongs to the handle and GEMMs on two
/// streams at once must not share one.
cublasHandle_t handleOnStream(const CublasLibrary *lib) {
  static thread_local cublasHandle_t runHandle = nullptr;
  static thread_local std::vector<std::pair<CUstream, cublasHandle_t>> sides;
  CUstream stream = currentStream();
  if (!stream)
    return nullptr;
  cublasHandle_t *handle = &runHandle;
  if (isSideStream(stream)) {
    handle = nullptr;
    for (auto &[side, sideHandle] : sides)
      if (side == stream)
        handle = &sideHandle;
    if (!handle)
      handle = &sides.emplace_back(stream, nullptr).second;
  }
  if (!*handle && !(*handle = createHandle(lib)))
    return nullptr;
  if (!LSTM_CUBLAS_CHECK(lib, cublasSetStream_v2(*handle, stream)))
    return nullptr;
  return *handle;
}

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

/// GPU milliseconds of `reps` runs of `g` in one form on `stream`
/// (timeRuns); negative on a failure.
float timeForm(const CublasLibrary *lib, cublasHandle_t handle,
               const GemmTypes &types, const BatchedGemm &g, bool looped,
               CUstream stream, int reps, BCopies bCopies = {}) {
  return timeRuns(stream, reps, [&](int rep) {
    BatchedGemm trial = g;
    trial.b = bCopies.of(rep, g.b);
    return runBatched(lib, handle, types, trial, looped);
  });
}

/// How a GEMM shape runs: cuBLAS's batched call, one cuBLAS call per
/// matrix, or a cublasLt algorithm.
struct GemmChoice {
  bool looped = false;
  const LtPlan *lt = nullptr;
};

/// How `g` runs, measured on the first run of its shape outside a stream
/// capture (into scratch memory: `c` may be read, beta != 0, and must be
/// written once) and remembered per shape, operand alignment and device for
/// the process: cuBLAS's batched call or one call per matrix (a batch of
/// one: the same call), and then the algorithms cublasLt's heuristic
/// offers, one of which is taken where it beats cuBLAS's own call by 10%
/// (on the H100, fp32, a backward step's dG·R at appleyard, 64 × 2048 ×
/// 512: 14.5 µs by cublasGemmEx, 10.7 by cublasLt's best;
/// docs/benchmarks.md). During a capture a shape not seen yet takes (and
/// keeps) cuBLAS's batched call, so that a graph and the calls around it
/// compute alike. LSTM_RUNTIME_GEMM_BATCHED=batched or =looped (read at
/// every call) takes that form without measuring, =auto (or unset)
/// measures; LSTM_RUNTIME_GEMM_ALGO=cublas leaves cublasLt out, =tuned (or
/// unset) tries it, =cublaslt takes its fastest algorithm whatever cuBLAS's
/// call measured (where cublasLt has one: the tests' way to run its
/// algorithms); anything else is an error of the run.
GemmChoice chooseForm(const CublasLibrary *lib, cublasHandle_t handle,
                      int32_t computeType, const GemmTypes &types,
                      const BatchedGemm &g) {
  if (const char *env = std::getenv("LSTM_RUNTIME_GEMM_BATCHED")) {
    std::string form = env;
    if (form == "batched")
      return {};
    if (form == "looped")
      return {/*looped=*/true};
    if (!form.empty() && form != "auto") {
      recordFailure("LSTM_RUNTIME_GEMM_BATCHED is '" + form +
                    "': expected batched, looped or auto");
      return {};
    }
  }
  // Which algorithms compete: cuBLAS's call and cublasLt's (tuned), cuBLAS's
  // call only, or cublasLt's only (to test them).
  enum class Algorithms { Tuned, Cublas, CublasLt };
  Algorithms algorithms = Algorithms::Tuned;
  if (const char *env = std::getenv("LSTM_RUNTIME_GEMM_ALGO")) {
    std::string algo = env;
    if (algo == "cublas") {
      algorithms = Algorithms::Cublas;
    } else if (algo == "cublaslt") {
      algorithms = Algorithms::CublasLt;
    } else if (!algo.empty() && algo != "tuned") {
      recordFailure("LSTM_RUNTIME_GEMM_ALGO is '" + algo +
                    "': expected tuned, cublas or cublaslt");
      return {};
    }
  }
  bool tryLt = algorithms != Algorithms::Cublas;
  // A batch of one is cublasGemmEx's (cuBLAS's call for one matrix).
  bool single = g.batch == 1;
  if (single && !tryLt)
    return {/*looped=*/true};
  CUdevice device = 0;
  if (!LSTM_CUDA_CHECK(cuCtxGetDevice(&device)))
    return {};
  size_t element = types.inputs == CUDA_R_16BF ? 2 : 4;
  using Key =
      std::tuple<int, int32_t, int32_t, int32_t, int64_t, int64_t, int64_t,
                 int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t,
                 uint32_t, uint32_t, uint32_t, Algorithms>;
  Key key{device,
          computeType,
          g.transA,
          g.transB,
          g.m,
          g.n,
          g.k,
          g.lda,
          g.ldb,
          g.ldc,
          g.strideA,
          g.strideB,
          g.strideC,
          g.batch,
          operandAlignment(g.a, g.strideA, g.batch, element),
          operandAlignment(g.b, g.strideB, g.batch, element),
          operandAlignment(g.c, g.strideC, g.batch, sizeof(float)),
          algorithms};
  static std::mutex mutex;
  static std::map<Key, GemmChoice> choices;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = choices.find(key); it != choices.end())
      return it->second;
  }
  CUstream stream = currentStream();
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  GemmChoice choice;
  choice.looped = single;
  if (stream && LSTM_CUDA_CHECK(cuStreamIsCapturing(stream, &capture)) &&
      capture == CU_STREAM_CAPTURE_STATUS_NONE) {
    // The output as the batch lays it out: the last matrix's rows end at
    // (batch - 1) · strideC + m · ldc floats; as aligned as `c`.
    int64_t offset = reinterpret_cast<uintptr_t>(g.c) % 256;
    size_t bytes = offset + size_t((g.batch - 1) * g.strideC + g.m * g.ldc) *
                                sizeof(float);
    // Timed on a stream of its own (timeRuns captures the runs in a graph,
    // which the legacy default stream cannot), once the operands are
    // ready. Without the memory or the stream to time in, cuBLAS's batched
    // call (not a failure).
    CUdeviceptr scratch = 0;
    CUstream timing = nullptr;
    if (LSTM_CUDA_CHECK(cuStreamSynchronize(stream)) &&
        cuStreamCreate(&timing, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
        cuMemAlloc(&scratch, bytes) == CUDA_SUCCESS &&
        LSTM_CUBLAS_CHECK(lib, cublasSetStream_v2(handle, timing))) {
      constexpr int reps = 10;
      BatchedGemm trial = g;
      trial.c = reinterpret_cast<char *>(scratch) + offset;
      trial.beta = 0;
      float bestMs = timeForm(lib, handle, types, trial, single, timing, reps);
      if (!single) {
        float loopedMs =
            timeForm(lib, handle, types, trial, true, timing, reps);
        choice.looped = bestMs > 0 && loopedMs > 0 && loopedMs < bestMs;
        if (choice.looped)
          bestMs = loopedMs;
      }
      if (algorithms == Algorithms::CublasLt)
        bestMs = std::numeric_limits<float>::infinity();
      if (tryLt && g.k > 0 && bestMs > 0 && !hasFailed())
        choice.lt = tuneLtGemm(types, trial, timing, reps, bestMs);
      LSTM_CUDA_CHECK(cuStreamSynchronize(timing));
      LSTM_CUBLAS_CHECK(lib, cublasSetStream_v2(handle, stream));
    }
    if (scratch)
      cuMemFree(scratch);
    if (timing)
      cuStreamDestroy(timing);
  }
  std::lock_guard<std::mutex> lock(mutex);
  return choices.emplace(key, choice).first->second;
}

} // namespace

float lstm::runtime::timeFastestGemm(int32_t computeType, const BatchedGemm &g,
                                     CUstream stream, int reps,
                                     BCopies bCopies) {
  GemmTypes types;
  if (!gemmTypes(computeType, types) || !ensureContext())
    return -1;
  const CublasLibrary *lib = cublas();
  cublasHandle_t handle = lib ? handleOnStream(lib) : nullptr;
  if (!handle || !LSTM_CUBLAS_CHECK(lib, cublasSetStream_v2(handle, stream)))
    return -1;
  float best =
      timeForm(lib, handle, types, g, /*looped=*/false, stream, reps, bCopies);
  if (best > 0 && g.batch > 1) {
    float looped =
        timeForm(lib, handle, types, g, /*looped=*/true, stream, reps, bCopies);
    if (looped > 0 && looped < best)
      best = looped;
  }
  float planMs = 0;
  if (best > 0 && g.k > 0 && !hasFailed())
    if (const LtPlan *plan =
            tuneLtGemm(types, g, stream, reps, best, &planMs, bCopies)) {
      best = planMs;
      releaseLtPlan(plan);
    }
  LSTM_CUBLAS_CHECK(lib, cublasSetStream_v2(handle, currentStream()));
  return best;
}

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
  GemmChoice choice = chooseForm(lib, handle, computeType, types, g);
  if (hasFailed())
    return;
  if (choice.lt)
    runLtGemm(*choice.lt, g, currentStream());
  else
    runBatched(lib, handle, types, g, choice.looped);
}

} // extern "C"
