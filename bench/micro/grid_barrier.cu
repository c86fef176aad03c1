// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The cost of one grid-wide barrier on the GPU at hand, by implementation
// and grid: sequentially consistent fences around an atomic add and
// volatile polling with a 20 ns sleep (the first expansion of
// lstm.grid_barrier), the same without the sleep, a release fence, relaxed
// add and acquire polling (lstm-lower-grid-barriers today), the same with
// relaxed polling and one acquire fence after it, CUDA's cooperative_groups
// grid sync, the release on the add itself (red.release or atom.release, no
// fence), and a barrier without atomics (a flag a block, polled by a warp).
// Each kernel runs 20000 barriers; the best of five launches, in
// microseconds per barrier. docs/benchmarks.md ("Persistent kernels", and
// "Grid barriers: nothing cheaper found") has the H100's and H200's figures.
//   nvcc -O3 -arch=sm_90 -o grid_barrier bench/micro/grid_barrier.cu &&
//   ./grid_barrier
#include "cuda_check.h"

#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
namespace cg = cooperative_groups;

// A flag a block (variants 7 and 8): no atomics. A block's thread 0 stores
// the barrier's ordinal k into its own word (st.release.gpu); the first
// warp polls every block's word, a lane a few words (ld.acquire.gpu), until
// all have it. Variant 8 polls with relaxed loads and acquires with one
// fence after.
template <int Variant>
__device__ void flagBarrier(unsigned *words, unsigned k) {
  if (threadIdx.x >= 32)
    return;
  if (threadIdx.x == 0)
    asm volatile(
        "st.release.gpu.global.u32 [%0], %1;" ::"l"(words + blockIdx.x), "r"(k)
        : "memory");
  bool done;
  do {
    done = true;
    for (unsigned b = threadIdx.x; b < gridDim.x; b += 32) {
      unsigned v;
      if (Variant == 7)
        asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                     : "=r"(v)
                     : "l"(words + b)
                     : "memory");
      else
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
                     : "=r"(v)
                     : "l"(words + b)
                     : "memory");
      done &= v >= k;
    }
  } while (!__all_sync(0xffffffffu, done));
  if (Variant == 8)
    asm volatile("fence.acq_rel.gpu;" ::: "memory");
}

template <int Variant>
__global__ void bar(unsigned *counter, int iters, float *sink) {
  float acc = threadIdx.x;
  unsigned G = gridDim.x;
  for (int k = 1; k <= iters; ++k) {
    acc = acc * 1.0001f + 1.0f;
    if (Variant == 3) {
      cg::this_grid().sync();
      continue;
    }
    __syncthreads();
    if (Variant >= 7) {
      flagBarrier<Variant>(counter, k);
    } else if (threadIdx.x == 0) {
      unsigned target = k * G;
      if (Variant == 5 || Variant == 6) {
        // The release on the add itself (PTX has red.release and
        // atom.release; NVPTX's atomicrmw drops the ordering, so inline
        // assembly), no separate fence; acquire polling as in 2. 6 waits
        // for the add's old value (atom) where 5 does not (red).
        if (Variant == 5)
          asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter)
                       : "memory");
        else {
          unsigned old;
          asm volatile("atom.release.gpu.global.add.u32 %0, [%1], 1;"
                       : "=r"(old)
                       : "l"(counter)
                       : "memory");
        }
        unsigned v;
        do {
          asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                       : "=r"(v)
                       : "l"(counter)
                       : "memory");
        } while (v < target);
      } else if (Variant == 2 || Variant == 4) {
        // What lstm-lower-grid-barriers generates (NVPTX has no
        // red.release for an atomicrmw: a release fence, then the add),
        // polling with acquire loads (2), or with relaxed loads and one
        // acquire fence once the count is reached (4: no L1 invalidation
        // per poll).
        asm volatile(
            "fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], 1;" ::
                "l"(counter)
            : "memory");
        unsigned v;
        do {
          if (Variant == 2)
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                         : "=r"(v)
                         : "l"(counter)
                         : "memory");
          else
            asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];"
                         : "=r"(v)
                         : "l"(counter)
                         : "memory");
        } while (v < target);
        if (Variant == 4)
          asm volatile("fence.acq_rel.gpu;" ::: "memory");
      } else {
        __threadfence();
        atomicAdd(counter, 1u);
        while (*(volatile unsigned *)counter < target)
          if (Variant == 0)
            __nanosleep(20);
        __threadfence();
      }
    }
    __syncthreads();
  }
  if (acc == -1.f)
    *sink = acc;
}

template <int V> float run(int blocks, int threads, int iters) {
  unsigned *counter;
  float *sink;
  CHECK(cudaMalloc(&counter, 4 * 1024));
  CHECK(cudaMalloc(&sink, 4));
  void *args[] = {&counter, &iters, &sink};
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(cudaMemset(counter, 0, 4 * 1024));
    CHECK(cudaEventRecord(a));
    CHECK(cudaLaunchCooperativeKernel((void *)bar<V>, blocks, threads, args, 0,
                                      0));
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    if (ms < best)
      best = ms;
  }
  CHECK(cudaFree(counter));
  CHECK(cudaFree(sink));
  return best * 1000.f / iters;
}

int main() {
  const char *names[] = {"volatile+nanosleep20",     "volatile spin",
                         "fence.acq_rel/ld.acquire", "cg grid.sync",
                         "ld.relaxed, then fence",   "red.release/ld.acquire",
                         "atom.release/ld.acquire",  "flags: ld.acquire",
                         "flags: ld.relaxed+fence"};
  int iters = 20000;
  printf("%-24s %6s %7s %8s\n", "variant", "blocks", "threads", "us/barrier");
  for (int threads : {256, 512})
    for (int blocks : {8, 32, 64, 128, 132}) {
      float t[9] = {
          run<0>(blocks, threads, iters), run<1>(blocks, threads, iters),
          run<2>(blocks, threads, iters), run<3>(blocks, threads, iters),
          run<4>(blocks, threads, iters), run<5>(blocks, threads, iters),
          run<6>(blocks, threads, iters), run<7>(blocks, threads, iters),
          run<8>(blocks, threads, iters)};
      for (int v = 0; v < 9; ++v)
        printf("%-24s %6d %7d %8.3f\n", names[v], blocks, threads, t[v]);
    }
}
