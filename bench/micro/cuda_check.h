// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// CHECK(call): a CUDA runtime call of the micro-benchmarks, which exit
// naming the call and the error where it fails.
#ifndef LSTM_BENCH_MICRO_CUDA_CHECK_H
#define LSTM_BENCH_MICRO_CUDA_CHECK_H

#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(call)                                                            \
  do {                                                                         \
    cudaError_t e = (call);                                                    \
    if (e != cudaSuccess) {                                                    \
      std::fprintf(stderr, "%s failed: %s\n", #call, cudaGetErrorString(e));   \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

#endif // LSTM_BENCH_MICRO_CUDA_CHECK_H
