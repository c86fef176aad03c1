//===- RuntimeState.cpp - Errors, context and stream of the runtime -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "RuntimeState.h"

#include "DeviceMemory.h"

#include "lstm/Runtime/CudaRuntime.h"

namespace {
thread_local std::string lastError;
thread_local bool failed = false;
/// Whether the recorded failure is lstmRuntimeMissingPerStepFallback's.
thread_local bool perStepFallbackNeeded = false;
thread_local bool contextReady = false;
/// Set by the caller; not owned.
thread_local CUstream callerStream = nullptr;
thread_local bool hasCallerStream = false;
/// Created on first use when the caller sets none; kept for the thread's
/// lifetime so that consecutive runs are ordered after each other.
thread_local CUstream ownStream = nullptr;

/// The runtime's own stream, created on first use.
CUstream ownRunStream() {
  if (!ownStream && lstm::runtime::ensureContext())
    LSTM_CUDA_CHECK(cuStreamCreate(&ownStream, CU_STREAM_NON_BLOCKING));
  return ownStream;
}
} // namespace

namespace lstm::runtime {

void recordFailure(const std::string &message) {
  if (failed)
    return;
  lastError = message;
  failed = true;
}

bool hasFailed() { return failed; }

bool check(CUresult status, const char *call) {
  if (status == CUDA_SUCCESS)
    return true;
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(status, &name);
  cuGetErrorString(status, &text);
  recordFailure(std::string(call) + " failed: " + (name ? name : "?") + " (" +
                (text ? text : "unknown error") + ")");
  return false;
}

bool ensureContext() {
  if (contextReady)
    return true;
  if (failed)
    return false;
  if (!LSTM_CUDA_CHECK(cuInit(0)))
    return false;
  CUcontext current = nullptr;
  if (!LSTM_CUDA_CHECK(cuCtxGetCurrent(&current)))
    return false;
  if (!current) {
    CUdevice device;
    if (!LSTM_CUDA_CHECK(cuDeviceGet(&device, 0)) ||
        !LSTM_CUDA_CHECK(cuDevicePrimaryCtxRetain(&current, device)) ||
        !LSTM_CUDA_CHECK(cuCtxSetCurrent(current)))
      return false;
  }
  contextReady = true;
  return true;
}

CUstream runStream() {
  if (hasCallerStream)
    return callerStream;
  return ownRunStream();
}

CUstream currentStream() {
  if (CUstream side = selectedSideStream())
    return side;
  return runStream();
}

} // namespace lstm::runtime

using namespace lstm::runtime;

extern "C" {

const char *lstmRuntimeLastError(void) {
  return failed ? lastError.c_str() : nullptr;
}

void lstmRuntimeClearError(void) {
  failed = false;
  perStepFallbackNeeded = false;
  lastError.clear();
}

void lstmRuntimeMissingPerStepFallback(int64_t batch) {
  if (failed)
    return;
  lstm::runtime::recordFailure(
      "a persistent kernel does not run at batch " + std::to_string(batch) +
      " on this GPU (the batch is above its bound, or the GPU has fewer SMs "
      "or less shared memory a block than it needs), and this library was "
      "compiled without the per-step lowering beside it "
      "(lstm-to-persistent{per-step-fallback=false}, lstm-compile "
      "--per-step-fallback=false): compile it with the fallback");
  perStepFallbackNeeded = true;
}

int32_t lstmRuntimeNeedsPerStepFallback(void) {
  return perStepFallbackNeeded ? 1 : 0;
}

void lstmRuntimeSetStream(void *stream) {
  callerStream = static_cast<CUstream>(stream);
  hasCallerStream = stream != nullptr;
}

int lstmRuntimeSynchronize(void) {
  if (!failed && ensureContext())
    LSTM_CUDA_CHECK(cuStreamSynchronize(runStream()));
  return failed ? 1 : 0;
}

void lstmRuntimeFree(void *ptr) {
  // Ordered after the run and after the caller's work on the same stream.
  if (ptr && ensureContext())
    releaseDevice(reinterpret_cast<CUdeviceptr>(ptr), runStream());
}

void lstmRuntimeFreeOnStreams(int64_t count, void *const *pointers,
                              void *const *streams) {
  if (count <= 0 || !ensureContext())
    return;
  // Each as lstmRuntimeFree after lstmRuntimeSetStream(streams[i]); the
  // caller's stream setting is left as it was.
  for (int64_t i = 0; i < count; ++i)
    if (pointers[i])
      releaseDevice(reinterpret_cast<CUdeviceptr>(pointers[i]),
                    streams[i] ? static_cast<CUstream>(streams[i])
                               : ownRunStream());
}

} // extern "C"
