//===- CudaRuntime.cpp - The mgpu* ABI on the CUDA driver API -------------===//
//
// Debian's MLIR ships no CUDA runtime wrappers, so the project implements the
// functions that `gpu-to-llvm` lowers gpu.launch_func, gpu.alloc, gpu.memcpy,
// streams and events to. Every driver call is checked; the first failure is
// recorded (see CudaRuntime.h) and turns the rest of the run into no-ops, so
// a failing call is reported, never ignored and never a crash.
//
//===----------------------------------------------------------------------===//

#include "lstm/Runtime/CudaRuntime.h"

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <string>

namespace {

thread_local std::string lastError;
thread_local bool failed = false;

/// Records `call` as failed with `status` unless a failure is already
/// recorded. Returns true when `status` is success.
bool check(CUresult status, const char *call) {
  if (status == CUDA_SUCCESS)
    return true;
  if (!failed) {
    const char *name = nullptr, *text = nullptr;
    cuGetErrorName(status, &name);
    cuGetErrorString(status, &text);
    lastError = std::string(call) + " failed: " + (name ? name : "?") + " (" +
                (text ? text : "unknown error") + ")";
    failed = true;
  }
  return false;
}

#define LSTM_CUDA_CHECK(expr) check((expr), #expr)

/// The driver needs a current context; the device's primary context is the
/// one PyTorch and CuPy use too, so device pointers from them are valid here.
bool ensureContext() {
  static thread_local bool ready = false;
  if (ready)
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
  ready = true;
  return true;
}

} // namespace

extern "C" {

const char *lstmRuntimeLastError(void) {
  return failed ? lastError.c_str() : nullptr;
}

void lstmRuntimeClearError(void) {
  failed = false;
  lastError.clear();
}

void lstmRuntimeFree(void *ptr) {
  if (ptr && ensureContext())
    LSTM_CUDA_CHECK(cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)));
}

//===----------------------------------------------------------------------===//
// The ABI of upstream gpu-to-llvm
//===----------------------------------------------------------------------===//

CUmodule mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  CUmodule module = nullptr;
  if (ensureContext())
    LSTM_CUDA_CHECK(cuModuleLoadData(&module, data));
  return module;
}

CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  CUmodule module = nullptr;
  if (!ensureContext())
    return module;
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
  LSTM_CUDA_CHECK(cuModuleLoadDataEx(&module, data, 1, options, values));
  return module;
}

void mgpuModuleUnload(CUmodule module) {
  if (module)
    LSTM_CUDA_CHECK(cuModuleUnload(module));
}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  CUfunction function = nullptr;
  if (module && !failed)
    LSTM_CUDA_CHECK(cuModuleGetFunction(&function, module, name));
  return function;
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, CUstream stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  if (failed || !function)
    return;
  // An empty grid (a zero-sized batch or sequence) is nothing to do, not an
  // error.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  LSTM_CUDA_CHECK(cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                                 blockZ, smem, stream, params, extra));
}

CUstream mgpuStreamCreate() {
  CUstream stream = nullptr;
  if (ensureContext())
    LSTM_CUDA_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

void mgpuStreamDestroy(CUstream stream) {
  if (stream)
    LSTM_CUDA_CHECK(cuStreamDestroy(stream));
}

void mgpuStreamSynchronize(CUstream stream) {
  if (!failed)
    LSTM_CUDA_CHECK(cuStreamSynchronize(stream));
}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (!failed && event)
    LSTM_CUDA_CHECK(cuStreamWaitEvent(stream, event, 0));
}

CUevent mgpuEventCreate() {
  CUevent event = nullptr;
  if (ensureContext())
    LSTM_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

void mgpuEventDestroy(CUevent event) {
  if (event)
    LSTM_CUDA_CHECK(cuEventDestroy(event));
}

void mgpuEventSynchronize(CUevent event) {
  if (!failed && event)
    LSTM_CUDA_CHECK(cuEventSynchronize(event));
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  if (!failed && event)
    LSTM_CUDA_CHECK(cuEventRecord(event, stream));
}

void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, bool isHostShared) {
  CUdeviceptr ptr = 0;
  if (sizeBytes == 0 || !ensureContext() || failed)
    return nullptr;
  if (isHostShared)
    LSTM_CUDA_CHECK(cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL));
  else
    LSTM_CUDA_CHECK(cuMemAllocAsync(&ptr, sizeBytes, stream));
  return reinterpret_cast<void *>(ptr);
}

void mgpuMemFree(void *ptr, CUstream stream) {
  if (ptr)
    LSTM_CUDA_CHECK(cuMemFreeAsync(reinterpret_cast<CUdeviceptr>(ptr), stream));
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, CUstream stream) {
  if (!failed && sizeBytes)
    LSTM_CUDA_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                  reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                                  stream));
}

void mgpuMemset32(void *dst, unsigned int value, size_t count,
                  CUstream stream) {
  if (!failed && count)
    LSTM_CUDA_CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                     count, stream));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  CUstream stream) {
  if (!failed && count)
    LSTM_CUDA_CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                     count, stream));
}

void mgpuSetDefaultDevice(int32_t device) {
  CUdevice dev;
  CUcontext ctx;
  if (!failed && LSTM_CUDA_CHECK(cuInit(0)) &&
      LSTM_CUDA_CHECK(cuDeviceGet(&dev, device)) &&
      LSTM_CUDA_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev)))
    LSTM_CUDA_CHECK(cuCtxSetCurrent(ctx));
}

} // extern "C"
