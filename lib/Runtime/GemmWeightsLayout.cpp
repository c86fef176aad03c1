//===- GemmWeightsLayout.cpp - Which layout of a step's weights is faster -===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// lstm-transpose-loop-weights asks, before a loop, whether the loop's
// product runs faster with its weights transposed (stored [K, N], cuBLAS's
// "N" form) than as the gate keeps them ([N, K], the "T" form); the answer
// decides whether the weights are transposed for this call. Which form
// wins depends on the shape, the compute type and the GPU (H200, fp32:
// appleyard's forward diagonal 31.7 µs transposed against 34.9 kept,
// large's step at B = 32 54 against 42 in the network), so it is
// measured: both layouts in every form the GEMM entry point chooses among,
// on scratch operands, the weights read from memory, once per shape and
// device for the process.
//
//===----------------------------------------------------------------------===//

#include "CublasGemm.h"
#include "RuntimeState.h"

#include "lstm/Runtime/CudaRuntime.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

using namespace lstm::runtime;

namespace {

/// What a call answers where nothing was measured: the weights as they are.
constexpr int32_t kKept = 1;

/// The most copies of the weights a measurement reads in turn.
constexpr size_t kMaxCopies = 64;

/// How much faster the transposed weights must measure: the transposition
/// itself costs a read and a write of them at every call.
constexpr float kRequiredSpeedup = 1.05f;

/// The answer forced by LSTM_RUNTIME_WEIGHTS_LAYOUT (nk: kept, kn:
/// transposed), or -1 to measure (auto, or unset).
int32_t forcedLayout() {
  const char *env = std::getenv("LSTM_RUNTIME_WEIGHTS_LAYOUT");
  if (!env || !*env)
    return -1;
  std::string layout = env;
  if (layout == "nk")
    return 1;
  if (layout == "kn")
    return 0;
  if (layout != "auto")
    recordFailure("LSTM_RUNTIME_WEIGHTS_LAYOUT is '" + layout +
                  "': expected nk, kn or auto");
  return -1;
}

/// Both layouts of the product timed on scratch operands: the transB of the
/// faster (0 where the transposed weights win by kRequiredSpeedup), or -1
/// where it could not be measured.
int32_t measure(int32_t computeType, int32_t transA, int64_t m, int64_t n,
                int64_t k, int64_t batch) {
  size_t element = computeType == LSTM_RUNTIME_COMPUTE_BF16 ? 2 : 4;
  // Operands of more than 2^36 elements are not scratch to allocate for a
  // measurement (nor products a loop runs step by step).
  constexpr double kMaxElements = double(int64_t(1) << 36);
  double elements[] = {double(batch) * m * k, double(batch) * n * k,
                       double(batch) * m * n};
  for (double e : elements)
    if (e > kMaxElements)
      return -1;
  // The weights in as many copies as take twice the L2 cache, each run
  // reading the next: a step's weights come from memory where the step's
  // other work has evicted them (H200, fp32: Cho's GRU's product of r ⊙ h
  // at appleyard's B = 16, 4 × [16 × 512] · [512 × 512], measured from the
  // cache 6.4 µs transposed against 7.1 kept, from memory 11.1 against
  // 7.9, and 10.7 against 6.9 in the network).
  CUdevice device = 0;
  int l2Bytes = 0;
  if (!LSTM_CUDA_CHECK(cuCtxGetDevice(&device)) ||
      !LSTM_CUDA_CHECK(cuDeviceGetAttribute(
          &l2Bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device)))
    return -1;
  size_t weightBytes = (size_t(elements[1]) * element + 255) / 256 * 256;
  int copies = int(std::clamp<size_t>(
      (2 * size_t(l2Bytes) + weightBytes - 1) / weightBytes, 1, kMaxCopies));
  CUstream stream = currentStream();
  CUdeviceptr a = 0, w = 0, c = 0;
  CUstream timing = nullptr;
  int32_t choice = -1;
  // On a stream of its own (the timing captures a graph, which the legacy
  // default stream cannot), once the run's work so far has finished.
  if (LSTM_CUDA_CHECK(cuStreamSynchronize(stream)) &&
      cuStreamCreate(&timing, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
      cuMemAlloc(&a, size_t(elements[0]) * element) == CUDA_SUCCESS &&
      cuMemAlloc(&w, weightBytes * copies) == CUDA_SUCCESS &&
      cuMemAlloc(&c, size_t(elements[2]) * sizeof(float)) == CUDA_SUCCESS &&
      cuMemsetD8Async(a, 0, size_t(elements[0]) * element, timing) ==
          CUDA_SUCCESS &&
      cuMemsetD8Async(w, 0, weightBytes * copies, timing) == CUDA_SUCCESS) {
    std::vector<const void *> weights;
    for (int i = 0; i < copies; ++i)
      weights.push_back(reinterpret_cast<const void *>(w + i * weightBytes));
    BCopies bCopies{weights.data(), copies};
    constexpr int reps = 10;
    // Row-major C[m×n] = op(A)·op(B), B the weights: [n, k] read
    // transposed (kept) or [k, n] as they are (transposed before the loop).
    BatchedGemm kept{transA,
                     /*transB=*/1,
                     m,
                     n,
                     k,
                     reinterpret_cast<const void *>(a),
                     transA ? m : k,
                     m * k,
                     reinterpret_cast<const void *>(w),
                     /*ldb=*/k,
                     n * k,
                     reinterpret_cast<void *>(c),
                     n,
                     m * n,
                     batch,
                     1.0f,
                     0.0f};
    BatchedGemm transposed = kept;
    transposed.transB = 0;
    transposed.ldb = n;
    float keptMs = timeFastestGemm(computeType, kept, timing, reps, bCopies);
    float transposedMs = keptMs > 0 ? timeFastestGemm(computeType, transposed,
                                                      timing, reps, bCopies)
                                    : -1;
    if (keptMs > 0 && transposedMs > 0)
      choice = transposedMs * kRequiredSpeedup < keptMs ? 0 : 1;
    cuStreamSynchronize(timing);
  }
  for (CUdeviceptr p : {a, w, c})
    if (p)
      cuMemFree(p);
  if (timing)
    cuStreamDestroy(timing);
  return choice;
}

} // namespace

extern "C" int32_t lstmRuntimeGemmFasterTransB(int32_t computeType,
                                               int32_t transA, int64_t m,
                                               int64_t n, int64_t k,
                                               int64_t batch) {
  if (hasFailed() || m <= 0 || n <= 0 || k <= 0 || batch <= 0)
    return kKept;
  if (int32_t forced = forcedLayout(); forced >= 0 || hasFailed())
    return forced >= 0 ? forced : kKept;
  if (computeType != LSTM_RUNTIME_COMPUTE_FP32 &&
      computeType != LSTM_RUNTIME_COMPUTE_TF32 &&
      computeType != LSTM_RUNTIME_COMPUTE_BF16) {
    recordFailure("unknown GEMM compute type " + std::to_string(computeType));
    return kKept;
  }
  if (!ensureContext())
    return kKept;
  CUdevice device = 0;
  if (!LSTM_CUDA_CHECK(cuCtxGetDevice(&device)))
    return kKept;
  using Key =
      std::tuple<int, int32_t, int32_t, int64_t, int64_t, int64_t, int64_t>;
  Key key{device, computeType, transA != 0, m, n, k, batch};
  static std::mutex mutex;
  static std::map<Key, int32_t> answers;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = answers.find(key); it != answers.end())
      return it->second;
  }
  // Nothing is measured while the run's stream is being captured (the
  // timing's own capture and synchronisation would break it): the weights
  // stay as they are for this call, and a later call measures.
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (!LSTM_CUDA_CHECK(cuStreamIsCapturing(currentStream(), &capture)) ||
      capture != CU_STREAM_CAPTURE_STATUS_NONE)
    return kKept;
  int32_t choice = measure(computeType, transA != 0, m, n, k, batch);
  if (hasFailed())
    return kKept;
  if (choice < 0)
    choice = kKept;
  std::lock_guard<std::mutex> lock(mutex);
  return answers.emplace(key, choice).first->second;
}
