//===- CudaRuntime.cpp - The mgpu* ABI on the CUDA driver API -------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Debian's MLIR ships no CUDA runtime wrappers, so the project implements the
// functions that `gpu-to-llvm` lowers gpu.launch_func, gpu.alloc, gpu.memcpy,
// streams and events to. Every driver call is checked; the first failure is
// recorded (see CudaRuntime.h) and turns the rest of the run into no-ops, so
// a failing call is reported, never ignored and never a crash.
//
// All work of a run goes to one stream (RuntimeState.h): the streams that the
// generated code creates, synchronises and destroys around its launches are
// that stream, so launches are never separated by host synchronisation and
// the run is asynchronous with respect to the host, like a cuBLAS or cuDNN
// call. The caller orders its own work after it on the same stream, or calls
// lstmRuntimeSynchronize. (The host part of the generated code reads no
// device memory: buffers the host touches stay in host memory, see
// HostMemoryToGPU.cpp.)
//
//===----------------------------------------------------------------------===//

#include "DeviceMemory.h"
#include "RuntimeState.h"

#include <cuda.h>

#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

using namespace lstm::runtime;

/// The module of the embedded binary `data`, loaded by `load` on first use.
/// The generated host code loads the kernels' module around every launch
/// (and unloads it after): loaded once per binary instead, which takes a
/// module load off every kernel launch of every step.
template <typename Load> static CUmodule loadOnce(void *data, Load load) {
  static std::mutex mutex;
  static std::unordered_map<void *, CUmodule> loaded;
  if (!ensureContext())
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  CUmodule &module = loaded[data];
  if (!module && !load(module))
    module = nullptr;
  return module;
}

/// The name prefix of the kernels that lstm-to-persistent makes
/// (kPersistentKernelPrefix of LSTMToPersistent.h; the runtime does not
/// depend on the compiler's headers). They synchronise their whole grid and
/// are launched cooperatively.
static constexpr std::string_view kPersistentKernelPrefix = "lstm_persistent";

namespace {
/// The kernels loaded so far that must be launched cooperatively.
class CooperativeKernels {
public:
  void add(CUfunction function) {
    std::lock_guard<std::mutex> lock(mutex);
    functions.insert(function);
  }
  bool contains(CUfunction function) {
    std::lock_guard<std::mutex> lock(mutex);
    return functions.count(function) != 0;
  }

private:
  std::mutex mutex;
  std::set<CUfunction> functions;
};
} // namespace

static CooperativeKernels &cooperativeKernels() {
  static CooperativeKernels kernels;
  return kernels;
}

/// Lets `function` use `bytes` of dynamic shared memory, remembering the
/// most each kernel was allowed; false after a failure (recorded: the GPU
/// gives less).
static bool optInSharedMemory(CUfunction function, int32_t bytes) {
  static std::mutex mutex;
  static std::map<CUfunction, int32_t> allowed;
  std::lock_guard<std::mutex> lock(mutex);
  int32_t &most = allowed[function];
  if (bytes <= most)
    return true;
  if (!LSTM_CUDA_CHECK(cuFuncSetAttribute(
          function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, bytes)))
    return false;
  most = bytes;
  return true;
}

/// The static shared memory of `function`, in bytes (0 where the driver
/// does not say).
static int32_t staticSharedMemory(CUfunction function) {
  static std::mutex mutex;
  static std::map<CUfunction, int32_t> sizes;
  std::lock_guard<std::mutex> lock(mutex);
  auto [it, inserted] = sizes.try_emplace(function, 0);
  if (inserted) {
    int bytes = 0;
    if (cuFuncGetAttribute(&bytes, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                           function) == CUDA_SUCCESS)
      it->second = bytes;
  }
  return it->second;
}

/// `attribute` of the current context's GPU, lowered to the positive
/// integer in the environment variable `limit` where that is smaller (0
/// after a failure, recorded).
static int32_t deviceAttribute(CUdevice_attribute attribute,
                               const char *limit) {
  CUdevice device;
  int value = 0;
  if (!ensureContext() || !LSTM_CUDA_CHECK(cuCtxGetDevice(&device)) ||
      !LSTM_CUDA_CHECK(cuDeviceGetAttribute(&value, attribute, device)))
    return 0;
  if (const char *asked = std::getenv(limit)) {
    long n = std::strtol(asked, nullptr, 10);
    if (n > 0 && n < value)
      value = static_cast<int>(n);
  }
  return value;
}

extern "C" {

//===----------------------------------------------------------------------===//
// The ABI of upstream gpu-to-llvm
//===----------------------------------------------------------------------===//

CUmodule mgpuModuleLoad(void *data, size_t /*gpuBlobSize*/) {
  return loadOnce(data, [&](CUmodule &module) {
    return LSTM_CUDA_CHECK(cuModuleLoadData(&module, data));
  });
}

/// PTX, compiled by the driver.
CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  return loadOnce(data, [&](CUmodule &module) {
    CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
    void *values[] = {
        reinterpret_cast<void *>(static_cast<intptr_t>(optLevel))};
    return LSTM_CUDA_CHECK(
        cuModuleLoadDataEx(&module, data, 1, options, values));
  });
}

// Modules stay loaded for the process (see mgpuModuleLoad): the driver
// frees them at exit.
void mgpuModuleUnload(CUmodule) {}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  // Called before every launch: looked up once per (module, kernel).
  static std::mutex mutex;
  static std::map<std::pair<CUmodule, std::string>, CUfunction> functions;
  if (!module || hasFailed())
    return nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  CUfunction &function = functions[{module, name}];
  if (!function &&
      !LSTM_CUDA_CHECK(cuModuleGetFunction(&function, module, name)))
    function = nullptr;
  // lstm-to-persistent's kernels synchronise their whole grid: they are
  // launched cooperatively (see mgpuLaunchKernel).
  if (function && std::string_view(name).rfind(kPersistentKernelPrefix, 0) == 0)
    cooperativeKernels().add(function);
  return function;
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, CUstream stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  if (hasFailed() || !function)
    return;
  // An empty grid (a zero-sized batch or sequence) is nothing to do, not an
  // error.
  if (gridX == 0 || gridY == 0 || gridZ == 0)
    return;
  // From 48 KiB of shared memory on, its static and dynamic together, a
  // kernel opts in (once per kernel and size; fails, recorded, where the GPU
  // gives less). A persistent kernel whose dynamic size was exactly
  // 48 KiB failed its launch (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: no
  // block fits an SM) when the opt-in was decided on the dynamic size alone.
  if (smem > 0 && smem + staticSharedMemory(function) >= 48 * 1024 &&
      !optInSharedMemory(function, smem))
    return;
  if (cooperativeKernels().contains(function)) {
    // Every block resident at once, or CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE
    // (reported like any failed call): a grid barrier never waits for a
    // block that cannot start. The cooperative launch has no `extra`: the
    // generated launches pass their arguments in `params` only.
    LSTM_CUDA_CHECK(cuLaunchCooperativeKernel(function, gridX, gridY, gridZ,
                                              blockX, blockY, blockZ, smem,
                                              stream, params));
    return;
  }
  LSTM_CUDA_CHECK(cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                                 blockZ, smem, stream, params, extra));
}

int32_t lstmRuntimeGpuMultiprocessors(void) {
  return deviceAttribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                         "LSTM_RUNTIME_GPU_MULTIPROCESSORS");
}

int32_t lstmRuntimeGpuSharedMemoryPerBlock(void) {
  return deviceAttribute(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                         "LSTM_RUNTIME_GPU_SHARED_MEMORY");
}

CUstream mgpuStreamCreate() { return currentStream(); }

void mgpuStreamDestroy(CUstream) {}

void mgpuStreamSynchronize(CUstream) {}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  if (!hasFailed() && event)
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
  if (!hasFailed() && event)
    LSTM_CUDA_CHECK(cuEventSynchronize(event));
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  if (!hasFailed() && event)
    LSTM_CUDA_CHECK(cuEventRecord(event, stream));
}

void *mgpuMemAlloc(uint64_t sizeBytes, CUstream stream, bool isHostShared) {
  CUdeviceptr ptr = 0;
  if (sizeBytes == 0 || !ensureContext() || hasFailed())
    return nullptr;
  if (isHostShared)
    LSTM_CUDA_CHECK(cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL));
  else
    ptr = allocateDevice(sizeBytes, stream);
  return reinterpret_cast<void *>(ptr);
}

void mgpuMemFree(void *ptr, CUstream stream) {
  if (ptr)
    releaseDevice(reinterpret_cast<CUdeviceptr>(ptr), stream);
}

void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, CUstream stream) {
  if (!hasFailed() && sizeBytes)
    LSTM_CUDA_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                  reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                                  stream));
}

void mgpuMemset32(void *dst, unsigned int value, size_t count,
                  CUstream stream) {
  if (!hasFailed() && count)
    LSTM_CUDA_CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                     count, stream));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  CUstream stream) {
  if (!hasFailed() && count)
    LSTM_CUDA_CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                     count, stream));
}

void mgpuSetDefaultDevice(int32_t device) {
  CUdevice dev;
  CUcontext ctx;
  if (!hasFailed() && LSTM_CUDA_CHECK(cuInit(0)) &&
      LSTM_CUDA_CHECK(cuDeviceGet(&dev, device)) &&
      LSTM_CUDA_CHECK(cuDevicePrimaryCtxRetain(&ctx, dev)))
    LSTM_CUDA_CHECK(cuCtxSetCurrent(ctx));
}

} // extern "C"
