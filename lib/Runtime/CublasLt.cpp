//===- CublasLt.cpp - GEMMs through the cublasLt algorithm that measured best //
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// cuBLAS's own GEMM call picks its kernel by heuristics, and for some of the
// shapes a recurrence runs every step they pick a slow one: on the H100 in
// fp32 a backward step's dG·R at appleyard's sizes (64 × 2048 × 512) takes
// 14.5 µs by cublasGemmEx and 10.7 by the best of the eight algorithms
// cublasLt's heuristic offers for it (bench/micro/gemm_algos.cu). The first
// run of a shape (Cublas.cpp, outside stream captures) times those
// algorithms and keeps the fastest where it beats cuBLAS's call by 10%.
// cublasLt is loaded like cuBLAS (CublasGemm.h); where it is missing,
// cuBLAS's calls serve and nothing fails.
//
// The operands are swapped as for cuBLAS: the row-major C = op(A)·op(B) is
// the column-major Cᵀ = op(B)ᵀ·op(A)ᵀ. An algorithm's workspace comes from
// the stream's device memory at each call (DeviceMemory.h: cached by size,
// ordered on the stream, so concurrent streams never share one and a
// stream capture records it as the graph's own).
//
//===----------------------------------------------------------------------===//

#include "CublasGemm.h"
#include "DeviceMemory.h"
#include "RuntimeState.h"

#include <cublasLt.h>

#include <dlfcn.h>

#include <algorithm>
#include <memory>
#include <vector>

using namespace lstm::runtime;

namespace {

#define LSTM_CUBLASLT_FUNCTIONS(X)                                             \
  X(cublasLtCreate)                                                            \
  X(cublasLtMatmul)                                                            \
  X(cublasLtMatmulAlgoGetHeuristic)                                            \
  X(cublasLtMatmulDescCreate)                                                  \
  X(cublasLtMatmulDescDestroy)                                                 \
  X(cublasLtMatmulDescSetAttribute)                                            \
  X(cublasLtMatmulPreferenceCreate)                                            \
  X(cublasLtMatmulPreferenceDestroy)                                           \
  X(cublasLtMatmulPreferenceSetAttribute)                                      \
  X(cublasLtMatrixLayoutCreate)                                                \
  X(cublasLtMatrixLayoutDestroy)                                               \
  X(cublasLtMatrixLayoutSetAttribute)

struct LtLibrary {
#define LSTM_DECLARE(name) decltype(&::name) name = nullptr;
  LSTM_CUBLASLT_FUNCTIONS(LSTM_DECLARE)
#undef LSTM_DECLARE
};

/// cublasLt's entry points, resolved once per process; null where it
/// cannot be loaded (cuBLAS's calls then serve).
const LtLibrary *cublasLt() {
  static const LtLibrary *library = []() -> const LtLibrary * {
    std::string tried;
    void *handle = openCudaLibrary("libcublasLt", "LSTM_CUBLASLT_LIBRARY",
                                   CUBLAS_VER_MAJOR, tried);
    if (!handle)
      return nullptr;
    auto lib = std::make_unique<LtLibrary>();
#define LSTM_RESOLVE(name)                                                     \
  lib->name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));       \
  if (!lib->name)                                                              \
    return nullptr;
    LSTM_CUBLASLT_FUNCTIONS(LSTM_RESOLVE)
#undef LSTM_RESOLVE
    return lib.release();
  }();
  return library;
}

/// This thread's cublasLt handle; null on a failure.
cublasLtHandle_t ltHandle(const LtLibrary *lib) {
  static thread_local cublasLtHandle_t handle = nullptr;
  if (!handle && lib->cublasLtCreate(&handle) != CUBLAS_STATUS_SUCCESS)
    handle = nullptr;
  return handle;
}

/// The most workspace an algorithm may ask for (cuBLAS's own default on
/// Hopper).
constexpr size_t kMaxWorkspace = size_t{32} << 20;
/// How many of the heuristic's algorithms are timed.
constexpr int kCandidates = 8;
/// How much faster than cuBLAS's call an algorithm must measure to replace
/// it. Timed alone, on operands that stay in L2, candidates a few percent
/// faster did not stay faster among a network's other kernels: on the
/// H100 with a 5% margin, TF32 algorithms 3-8% faster alone made
/// deepbench's training step 7% slower, while the fp32 ones 15-35% faster
/// made appleyard's 5% faster (docs/benchmarks.md).
constexpr float kRequiredSpeedup = 1.1f;

} // namespace

namespace lstm::runtime {

struct LtPlan {
  const LtLibrary *lib;
  cublasLtMatmulDesc_t op = nullptr;
  /// The column-major operands: B's matrices, A's, C's.
  cublasLtMatrixLayout_t first = nullptr, second = nullptr, out = nullptr;
  cublasLtMatmulAlgo_t algo;
  size_t workspace = 0;
};

} // namespace lstm::runtime

namespace {

/// A column-major layout of `rows` × `cols` (leading dimension `ld`) of
/// `batch` matrices `stride` elements apart.
cublasLtMatrixLayout_t layout(const LtLibrary *lib, cudaDataType type,
                              int64_t rows, int64_t cols, int64_t ld,
                              int64_t batch, int64_t stride) {
  cublasLtMatrixLayout_t l = nullptr;
  if (lib->cublasLtMatrixLayoutCreate(&l, type, uint64_t(rows), uint64_t(cols),
                                      ld) != CUBLAS_STATUS_SUCCESS)
    return nullptr;
  if (batch > 1) {
    auto count = int32_t(batch);
    if (lib->cublasLtMatrixLayoutSetAttribute(
            l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)) !=
            CUBLAS_STATUS_SUCCESS ||
        lib->cublasLtMatrixLayoutSetAttribute(
            l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
            sizeof(stride)) != CUBLAS_STATUS_SUCCESS) {
      lib->cublasLtMatrixLayoutDestroy(l);
      return nullptr;
    }
  }
  return l;
}

/// The plan's descriptors for `g` (no algorithm yet); false if cublasLt
/// refuses them.
bool describe(const LtLibrary *lib, const GemmTypes &types,
              const BatchedGemm &g, LtPlan &plan) {
  plan.lib = lib;
  cublasOperation_t first = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t second = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (lib->cublasLtMatmulDescCreate(&plan.op, types.compute, CUDA_R_32F) !=
          CUBLAS_STATUS_SUCCESS ||
      lib->cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSA,
                                          &first, sizeof(first)) !=
          CUBLAS_STATUS_SUCCESS ||
      lib->cublasLtMatmulDescSetAttribute(plan.op, CUBLASLT_MATMUL_DESC_TRANSB,
                                          &second, sizeof(second)) !=
          CUBLAS_STATUS_SUCCESS)
    return false;
  // Cᵀ[n×m] = op(Bᵀ)[n×k] · op(Aᵀ)[k×m], each stored as the row-major
  // matrix's transpose: B's is k × n (n × k transposed), A's m × k.
  plan.first =
      g.transB ? layout(lib, types.inputs, g.k, g.n, g.ldb, g.batch, g.strideB)
               : layout(lib, types.inputs, g.n, g.k, g.ldb, g.batch, g.strideB);
  plan.second =
      g.transA ? layout(lib, types.inputs, g.m, g.k, g.lda, g.batch, g.strideA)
               : layout(lib, types.inputs, g.k, g.m, g.lda, g.batch, g.strideA);
  plan.out = layout(lib, CUDA_R_32F, g.n, g.m, g.ldc, g.batch, g.strideC);
  return plan.first && plan.second && plan.out;
}

void destroy(LtPlan &plan) {
  const LtLibrary *lib = plan.lib;
  if (plan.op)
    lib->cublasLtMatmulDescDestroy(plan.op);
  for (cublasLtMatrixLayout_t l : {plan.first, plan.second, plan.out})
    if (l)
      lib->cublasLtMatrixLayoutDestroy(l);
}

/// Runs `g` with `plan` and `algo` on `stream` with `workspace`.
bool run(const LtPlan &plan, const cublasLtMatmulAlgo_t &algo,
         CUdeviceptr workspace, size_t workspaceBytes, const BatchedGemm &g,
         CUstream stream) {
  const LtLibrary *lib = plan.lib;
  cublasLtHandle_t handle = ltHandle(lib);
  return handle &&
         lib->cublasLtMatmul(
             handle, plan.op, &g.alpha, g.b, plan.first, g.a, plan.second,
             &g.beta, g.c, plan.out, g.c, plan.out, &algo,
             reinterpret_cast<void *>(workspace), workspaceBytes,
             reinterpret_cast<cudaStream_t>(stream)) == CUBLAS_STATUS_SUCCESS;
}

} // namespace

const LtPlan *lstm::runtime::tuneLtGemm(const GemmTypes &types,
                                        const BatchedGemm &g, CUstream stream,
                                        int reps, float baselineMs,
                                        float *planMs, BCopies bCopies) {
  const LtLibrary *lib = cublasLt();
  if (!lib || !ltHandle(lib))
    return nullptr;
  auto plan = std::make_unique<LtPlan>();
  cublasLtMatmulPreference_t preference = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> results(kCandidates);
  int found = 0;
  size_t element = types.inputs == CUDA_R_16BF ? 2 : 4;
  // The heuristic assumes 256-byte aligned matrices unless told: an
  // algorithm that needs more than the operands have would fail, or worse.
  uint32_t alignB = operandAlignment(g.b, g.strideB, g.batch, element);
  uint32_t alignA = operandAlignment(g.a, g.strideA, g.batch, element);
  uint32_t alignC = operandAlignment(g.c, g.strideC, g.batch, sizeof(float));
  size_t maxWorkspace = kMaxWorkspace;
  auto prefer = [&](cublasLtMatmulPreferenceAttributes_t attribute,
                    const auto &value) {
    return lib->cublasLtMatmulPreferenceSetAttribute(preference, attribute,
                                                     &value, sizeof(value)) ==
           CUBLAS_STATUS_SUCCESS;
  };
  bool described =
      describe(lib, types, g, *plan) &&
      lib->cublasLtMatmulPreferenceCreate(&preference) ==
          CUBLAS_STATUS_SUCCESS &&
      prefer(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, maxWorkspace) &&
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignB) &&
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignA) &&
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, alignC) &&
      prefer(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, alignC) &&
      lib->cublasLtMatmulAlgoGetHeuristic(
          ltHandle(lib), plan->op, plan->first, plan->second, plan->out,
          plan->out, preference, kCandidates, results.data(),
          &found) == CUBLAS_STATUS_SUCCESS;
  if (preference)
    lib->cublasLtMatmulPreferenceDestroy(preference);
  // One workspace for the timing, as large as any candidate's (allocated
  // before timeRuns's capture, which would make it the graph's own).
  size_t workspaceBytes = 0;
  for (int i = 0; described && i < found; ++i)
    workspaceBytes = std::max(workspaceBytes, results[i].workspaceSize);
  CUdeviceptr workspace = 0;
  if (workspaceBytes != 0 &&
      cuMemAlloc(&workspace, workspaceBytes) != CUDA_SUCCESS)
    described = false;
  float bestMs = baselineMs / kRequiredSpeedup;
  int best = -1;
  for (int i = 0; described && i < found; ++i) {
    if (results[i].state != CUBLAS_STATUS_SUCCESS)
      continue;
    float ms = timeRuns(stream, reps, [&](int rep) {
      BatchedGemm trial = g;
      trial.b = bCopies.of(rep, g.b);
      return run(*plan, results[i].algo, workspace, results[i].workspaceSize,
                 trial, stream);
    });
    if (ms > 0 && ms < bestMs) {
      bestMs = ms;
      best = i;
    }
  }
  if (workspace) {
    cuStreamSynchronize(stream);
    cuMemFree(workspace);
  }
  if (best < 0) {
    destroy(*plan);
    return nullptr;
  }
  plan->algo = results[best].algo;
  plan->workspace = results[best].workspaceSize;
  if (planMs)
    *planMs = bestMs;
  return plan.release();
}

void lstm::runtime::releaseLtPlan(const LtPlan *plan) {
  if (!plan)
    return;
  destroy(const_cast<LtPlan &>(*plan));
  delete plan;
}

bool lstm::runtime::runLtGemm(const LtPlan &plan, const BatchedGemm &g,
                              CUstream stream) {
  CUdeviceptr workspace = 0;
  if (plan.workspace != 0) {
    workspace = allocateDevice(plan.workspace, stream);
    if (!workspace)
      return false;
  }
  bool ran = run(plan, plan.algo, workspace, plan.workspace, g, stream);
  if (workspace)
    releaseDevice(workspace, stream);
  if (ran)
    return true;
  recordFailure("cublasLtMatmul failed (m=" + std::to_string(g.m) +
                " n=" + std::to_string(g.n) + " k=" + std::to_string(g.k) +
                ", batch " + std::to_string(g.batch) + ")");
  return false;
}
