// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A persistent kernel's step exchange, two ways: what the persistent
// kernels do today (each block stores its slice of the new state, a grid
// barrier, then every block reads the whole state back from L2), against
// the state's values carrying their step in the same 8-byte word (the value
// in the low half, the step's ordinal in the high half, one relaxed 64-bit
// store each), which every block polls until each word it reads has the
// step it waits for: no barrier, no fence (an aligned 8-byte access is seen
// whole or not at all), and a block goes on as soon as the values it reads
// are there. Two buffers by the step's parity suffice: a block writes step
// t + 2 only after reading all of step t + 1, which every block wrote only
// after reading all of step t.
//
// Each step a block reads all N values, sums them (a block reduction, as a
// product's reduction would), and writes its N / G values from the sum. The
// result of both variants is checked against the same recurrence on the
// host. Microseconds per step, the best of five cooperative launches of
// 4000 steps.
//   nvcc -O3 -arch=sm_90 -Ibench/micro -o ll_exchange
//   bench/micro/ll_exchange.cu &&
//   ./ll_exchange
#include "cuda_check.h"
#include "grid_arrive_wait.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

constexpr int kThreads = 256;

__device__ float blockSum(float v, float *scratch) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  if (threadIdx.x % 32 == 0)
    scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float s = 0.f;
  for (int w = 0; w < kThreads / 32; ++w)
    s += scratch[w];
  __syncthreads();
  return s;
}

// The value each owned position takes from the step's sum: a contraction,
// so that the recurrence stays bounded.
__host__ __device__ inline float nextValue(float sum, int i, int n) {
  return 0.5f * sum / n + 1e-3f * (i % 7);
}

// Today's exchange: plain stores, a grid barrier (a release fence, a
// relaxed add, acquire polling: lstm-lower-grid-barriers), L2 loads.
__global__ void barrierExchange(float *buf, unsigned *counter, int n, int steps,
                                float *out) {
  __shared__ float scratch[kThreads / 32];
  int per = n / gridDim.x, first = blockIdx.x * per;
  float sum = 0.f;
  for (int t = 1; t <= steps; ++t) {
    float *cur = buf + (t & 1) * n;
    for (int i = threadIdx.x; i < per; i += kThreads)
      cur[first + i] = nextValue(sum, first + i, n);
    __syncthreads();
    if (threadIdx.x == 0)
      gridArriveWait(counter, t * gridDim.x);
    __syncthreads();
    float part = 0.f;
    for (int i = threadIdx.x; i < n; i += kThreads)
      part += __ldcg(cur + i);
    sum = blockSum(part, scratch);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *out = sum;
}

// The values carry their step: word = (t << 32) | bits(value).
__global__ void flaggedExchange(unsigned long long *buf, int n, int steps,
                                float *out) {
  __shared__ float scratch[kThreads / 32];
  int per = n / gridDim.x, first = blockIdx.x * per;
  float sum = 0.f;
  for (int t = 1; t <= steps; ++t) {
    unsigned long long *cur = buf + (t & 1) * n;
    for (int i = threadIdx.x; i < per; i += kThreads) {
      unsigned long long word = (unsigned long long)t << 32 |
                                __float_as_uint(nextValue(sum, first + i, n));
      asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(cur + first + i),
                   "l"(word)
                   : "memory");
    }
    float part = 0.f;
    for (int i = threadIdx.x; i < n; i += kThreads) {
      unsigned long long word;
      do
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];"
                     : "=l"(word)
                     : "l"(cur + i)
                     : "memory");
      while ((unsigned)(word >> 32) != (unsigned)t);
      part += __uint_as_float((unsigned)word);
    }
    sum = blockSum(part, scratch);
  }
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *out = sum;
}

static float reference(int n, int blocks, int steps) {
  int per = n / blocks;
  float sum = 0.f;
  std::vector<float> v(n);
  for (int t = 1; t <= steps; ++t) {
    for (int i = 0; i < per * blocks; ++i)
      v[i] = nextValue(sum, i, n);
    double s = 0;
    for (int i = 0; i < per * blocks; ++i)
      s += v[i];
    sum = (float)s;
  }
  return sum;
}

template <bool Flagged> float run(int blocks, int n, int steps, float *result) {
  void *buf;
  unsigned *counter;
  float *out;
  CHECK(cudaMalloc(&buf, 2 * n * sizeof(unsigned long long)));
  CHECK(cudaMalloc(&counter, 4));
  CHECK(cudaMalloc(&out, 4));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(cudaMemset(buf, 0, 2 * n * sizeof(unsigned long long)));
    CHECK(cudaMemset(counter, 0, 4));
    CHECK(cudaEventRecord(a));
    if (Flagged) {
      void *args[] = {&buf, &n, &steps, &out};
      CHECK(cudaLaunchCooperativeKernel((void *)flaggedExchange, blocks,
                                        kThreads, args, 0, 0));
    } else {
      void *args[] = {&buf, &counter, &n, &steps, &out};
      CHECK(cudaLaunchCooperativeKernel((void *)barrierExchange, blocks,
                                        kThreads, args, 0, 0));
    }
    CHECK(cudaEventRecord(b));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    best = std::min(best, ms);
  }
  CHECK(cudaMemcpy(result, out, 4, cudaMemcpyDeviceToHost));
  CHECK(cudaFree(buf));
  CHECK(cudaFree(counter));
  CHECK(cudaFree(out));
  return best * 1000.f / steps;
}

int main() {
  int steps = 4000, failures = 0;
  printf("%6s %7s %12s %12s %8s\n", "blocks", "values", "barrier us",
         "flagged us", "ratio");
  for (int blocks : {32, 64, 128})
    // latency's state (512 x B = 1), a batch of 8, char-rnn's two layers'
    // (2 x 128 x 50).
    for (int n : {512, 4096, 12800}) {
      if (n % blocks)
        n -= n % blocks;
      float want = reference(n, blocks, steps), got[2];
      float tb = run<false>(blocks, n, steps, &got[0]);
      float tf = run<true>(blocks, n, steps, &got[1]);
      for (float g : got)
        if (!(std::fabs(g - want) <= 1e-4f * std::fabs(want))) {
          printf("MISMATCH blocks %d n %d: %g against %g\n", blocks, n, g,
                 want);
          ++failures;
        }
      printf("%6d %7d %12.3f %12.3f %8.2f\n", blocks, n, tb, tf, tf / tb);
    }
  return failures ? 1 : 0;
}
