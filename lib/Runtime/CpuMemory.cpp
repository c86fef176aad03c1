//===- CpuMemory.cpp - The buffers of generated CPU code, reused ----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A step's buffers are allocated and freed on every call: the hoisted input
// projections, the output sequences, the backward's saved activations, each
// megabytes. From malloc, a block that large is fresh mmap'd memory whose
// every page faults when first written, and is unmapped again by free: on
// char-rnn-sized networks that cost more than the arithmetic. The memref
// lowering calls these functions instead of malloc and free
// (finalize-memref-to-llvm{use-generic-functions}); they keep large freed
// blocks for the next allocation of their size, as the GPU runtime keeps
// device buffers.
//
// Every block comes from malloc/posix_memalign, so a buffer that a compiled
// function returns may be released with free() by its caller, as before.
// During a guarded call the blocks are recorded as the call's, to be freed
// if it fails (CpuFailure.cpp).
//
//===----------------------------------------------------------------------===//

#include "CpuFailure.h"
#include "lstm/Runtime/CpuRuntime.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <malloc.h>
#include <map>
#include <mutex>

namespace {

/// Blocks smaller than this go straight back to malloc, which reuses them
/// cheaply itself.
constexpr size_t kMinCachedBytes = 64 * 1024;
/// What the cache may hold in all.
constexpr size_t kMaxCachedBytes = size_t(1) << 30;

struct BlockCache {
  std::mutex mutex;
  /// Free blocks by usable size.
  std::multimap<size_t, void *> blocks;
  size_t bytes = 0;

  /// A cached block of at least `size` usable bytes, not much larger, whose
  /// address is a multiple of `alignment`; null when there is none.
  void *take(size_t size, size_t alignment) {
    std::lock_guard<std::mutex> lock(mutex);
    // Up to an eighth larger: a step's buffers come in few, exact sizes.
    for (auto it = blocks.lower_bound(size);
         it != blocks.end() && it->first <= size + size / 8; ++it) {
      if (reinterpret_cast<uintptr_t>(it->second) % alignment != 0)
        continue;
      void *block = it->second;
      bytes -= it->first;
      blocks.erase(it);
      return block;
    }
    return nullptr;
  }

  /// Keeps `block`, or frees it when it is small or the cache is full.
  void give(void *block) {
    size_t usable = malloc_usable_size(block);
    if (usable >= kMinCachedBytes) {
      std::lock_guard<std::mutex> lock(mutex);
      if (bytes + usable <= kMaxCachedBytes) {
        blocks.emplace(usable, block);
        bytes += usable;
        return;
      }
    }
    std::free(block);
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &entry : blocks)
      std::free(entry.second);
    blocks.clear();
    bytes = 0;
  }
};

BlockCache &cache() {
  // Never destroyed: compiled code may free after static destructors ran.
  static BlockCache *instance = new BlockCache();
  return *instance;
}

} // namespace

/// A failed guarded call's block, back to the cache (CpuFailure.cpp).
static void releaseBlock(void *block) { cache().give(block); }

extern "C" {

void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  void *block = size >= kMinCachedBytes
                    ? cache().take(size, alignof(std::max_align_t))
                    : nullptr;
  if (!block)
    block = std::malloc(size);
  lstm::trackCpuResource(block, releaseBlock);
  return block;
}

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  if (alignment < sizeof(void *))
    alignment = sizeof(void *);
  void *block =
      size >= kMinCachedBytes ? cache().take(size, alignment) : nullptr;
  if (!block && posix_memalign(&block, alignment, size) != 0)
    return nullptr;
  lstm::trackCpuResource(block, releaseBlock);
  return block;
}

void _mlir_memref_to_llvm_free(void *block) {
  if (!block)
    return;
  lstm::untrackCpuResource(block);
  cache().give(block);
}

void lstmRuntimeCpuEmptyCache(void) { cache().clear(); }

} // extern "C"
