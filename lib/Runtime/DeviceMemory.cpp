//===- DeviceMemory.cpp - Device buffers of a run, cached per size --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "DeviceMemory.h"

#include "RuntimeState.h"

#include "lstm/Runtime/CudaRuntime.h"

#include <unordered_map>
#include <vector>

namespace {

struct Cache {
  /// The stream every cached block is ordered on.
  CUstream stream = nullptr;
  /// Free blocks by size.
  std::unordered_map<uint64_t, std::vector<CUdeviceptr>> free;
  /// The size of every block handed out and not yet freed to the driver.
  std::unordered_map<CUdeviceptr, uint64_t> sizes;
};

// No destructor frees the blocks: at thread or process exit the driver may
// already be gone, and it reclaims them anyway.

thread_local Cache cache;

void flush() {
  for (auto &[size, blocks] : cache.free) {
    for (CUdeviceptr block : blocks) {
      cache.sizes.erase(block);
      LSTM_CUDA_CHECK(cuMemFreeAsync(block, cache.stream));
    }
  }
  cache.free.clear();
}

} // namespace

namespace lstm::runtime {

CUdeviceptr allocateDevice(uint64_t bytes, CUstream stream) {
  if (stream != cache.stream) {
    flush();
    cache.stream = stream;
  }
  auto it = cache.free.find(bytes);
  if (it != cache.free.end() && !it->second.empty()) {
    CUdeviceptr block = it->second.back();
    it->second.pop_back();
    return block;
  }
  CUdeviceptr ptr = 0;
  if (!LSTM_CUDA_CHECK(cuMemAllocAsync(&ptr, bytes, stream)))
    return 0;
  cache.sizes[ptr] = bytes;
  return ptr;
}

void releaseDevice(CUdeviceptr ptr, CUstream stream) {
  auto it = cache.sizes.find(ptr);
  if (it == cache.sizes.end() || stream != cache.stream) {
    // Not ours (or from another stream): straight back to the driver.
    if (it != cache.sizes.end())
      cache.sizes.erase(it);
    LSTM_CUDA_CHECK(cuMemFreeAsync(ptr, stream));
    return;
  }
  cache.free[it->second].push_back(ptr);
}

void emptyDeviceCache() { flush(); }

} // namespace lstm::runtime

extern "C" void lstmRuntimeEmptyCache(void) {
  lstm::runtime::emptyDeviceCache();
}
