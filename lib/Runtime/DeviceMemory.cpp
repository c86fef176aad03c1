//===- DeviceMemory.cpp - Device buffers of a run, cached per size --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "DeviceMemory.h"

#include "RuntimeState.h"

#include "lstm/Runtime/CudaRuntime.h"

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace {

/// A free block, and when it was freed (releaseDevice's count then).
struct FreeBlock {
  CUdeviceptr ptr;
  uint64_t released;
};

/// Free blocks ordered on one stream.
struct Cache {
  CUstream stream = nullptr;
  /// Free blocks by size, in the order they were freed.
  std::unordered_map<uint64_t, std::vector<FreeBlock>> free;
};

// No destructor frees the blocks: at thread or process exit the driver may
// already be gone, and it reclaims them anyway.

/// One cache for the run's stream and one for each side stream it forks
/// (ForkedStreams.cpp).
thread_local std::vector<Cache> caches;
/// The size of every block handed out (or cached) and not yet freed to the
/// driver.
thread_local std::unordered_map<CUdeviceptr, uint64_t> sizes;
/// How many blocks releaseDevice has cached so far.
thread_local uint64_t releases = 0;
/// While side streams are forked: the run's stream, and how many blocks had
/// been cached when they were (markFork).
thread_local CUstream forkedFrom = nullptr;
thread_local uint64_t releasesAtFork = 0;

void flush(Cache &cache) {
  for (auto &[size, blocks] : cache.free) {
    for (const FreeBlock &block : blocks) {
      sizes.erase(block.ptr);
      LSTM_CUDA_CHECK(cuMemFreeAsync(block.ptr, cache.stream));
    }
  }
  cache.free.clear();
}

/// Whether a cache of a run's stream (not a side stream) holds blocks.
bool holdsRunBlocks() {
  for (const Cache &cache : caches)
    if (!lstm::runtime::isSideStream(cache.stream))
      for (const auto &entry : cache.free)
        if (!entry.second.empty())
          return true;
  return false;
}

/// Whether `stream` is capturing a CUDA graph.
bool capturing(CUstream stream) {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return stream && cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

/// The cache of `stream`. A run's stream that is not the last one's (the
/// caller changed streams) empties the earlier one's: its blocks would be
/// ordered on a stream the runs no longer use. Within a CUDA graph capture
/// that free would invalidate the capture (and the graph would keep using
/// the blocks of its stream's cache afterwards): the run fails instead,
/// saying to warm up on the capturing stream.
Cache &cacheOf(CUstream stream) {
  for (Cache &cache : caches)
    if (cache.stream == stream)
      return cache;
  if (!lstm::runtime::isSideStream(stream) && capturing(stream) &&
      holdsRunBlocks()) {
    lstm::runtime::recordFailure(
        "a CUDA graph capture on another stream than the runs before it: "
        "their cached buffers cannot be freed within the capture; run the "
        "warm-up calls on the stream that then captures "
        "(torch.cuda.graph(graph, stream=warm_up_stream); "
        "lstmc.torch_module.GraphedStep does)");
  } else if (!lstm::runtime::isSideStream(stream)) {
    for (Cache &cache : caches)
      if (!lstm::runtime::isSideStream(cache.stream))
        flush(cache);
    caches.erase(std::remove_if(caches.begin(), caches.end(),
                                [](const Cache &cache) {
                                  return !lstm::runtime::isSideStream(
                                      cache.stream);
                                }),
                 caches.end());
  }
  caches.push_back(Cache{stream, {}});
  return caches.back();
}

} // namespace

namespace lstm::runtime {

/// A block of `bytes` from the cache of the stream the side streams were
/// forked from, freed before the fork: the side streams wait for the work
/// queued on that stream until then, its last uses included. (A result
/// that a side stream's work allocates goes back to the run's stream when
/// the caller frees it; without this, every call would allocate it anew,
/// which a CUDA graph capture cannot: its memory is not mapped until the
/// graph is.) 0 where there is none.
CUdeviceptr takeFromForkedStream(uint64_t bytes) {
  if (!forkedFrom)
    return 0;
  for (Cache &cache : caches) {
    if (cache.stream != forkedFrom)
      continue;
    auto it = cache.free.find(bytes);
    if (it == cache.free.end())
      return 0;
    std::vector<FreeBlock> &blocks = it->second;
    // The earliest freed first: blocks are appended as they are freed.
    auto block = blocks.begin();
    if (block == blocks.end() || block->released > releasesAtFork)
      return 0;
    if (block == blocks.end())
      return 0;
    CUdeviceptr ptr = block->ptr;
    blocks.erase(block);
    return ptr;
  }
  return 0;
}

CUdeviceptr allocateDevice(uint64_t bytes, CUstream stream) {
  Cache &cache = cacheOf(stream);
  auto it = cache.free.find(bytes);
  if (it != cache.free.end() && !it->second.empty()) {
    CUdeviceptr block = it->second.back().ptr;
    it->second.pop_back();
    return block;
  }
  if (isSideStream(stream))
    if (CUdeviceptr block = takeFromForkedStream(bytes))
      return block;
  CUdeviceptr ptr = 0;
  if (!LSTM_CUDA_CHECK(cuMemAllocAsync(&ptr, bytes, stream)))
    return 0;
  sizes[ptr] = bytes;
  return ptr;
}

void releaseDevice(CUdeviceptr ptr, CUstream stream) {
  auto it = sizes.find(ptr);
  if (it == sizes.end()) {
    // Not ours: straight back to the driver.
    LSTM_CUDA_CHECK(cuMemFreeAsync(ptr, stream));
    return;
  }
  // Reused after the work queued on `stream` so far, which is where the
  // generated code frees it: after its last use, on that stream or on a
  // side stream joined into it.
  cacheOf(stream).free[it->second].push_back({ptr, ++releases});
}

void markFork(CUstream run) {
  forkedFrom = run;
  releasesAtFork = releases;
}

void markJoin() { forkedFrom = nullptr; }

void emptyDeviceCache() {
  for (Cache &cache : caches)
    flush(cache);
}

} // namespace lstm::runtime

extern "C" void lstmRuntimeEmptyCache(void) {
  lstm::runtime::emptyDeviceCache();
}
