// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the cuBLAS micro-benchmarks share: CHECK_BLAS(call), which exits
// naming a cuBLAS or cublasLt call that failed and its status, and
// timeInGraph, the GPU time of a launch without the host's overhead.
#ifndef LSTM_BENCH_MICRO_GRAPH_TIMER_H
#define LSTM_BENCH_MICRO_GRAPH_TIMER_H

#include "cuda_check.h"

#define CHECK_BLAS(call)                                                       \
  do {                                                                         \
    int s = int(call);                                                         \
    if (s != 0) {                                                              \
      std::fprintf(stderr, "%s failed: status %d\n", #call, s);                \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

/// GPU microseconds per launch() call: `reps` calls captured in a CUDA
/// graph (so that the host's launch overhead does not count), the graph
/// replayed once to warm up and then timed between two events.
template <typename Launch>
static float timeInGraph(cudaStream_t stream, int reps, Launch &&launch) {
  for (int i = 0; i < 3; ++i)
    launch();
  CHECK(cudaStreamSynchronize(stream));
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < reps; ++i)
    launch();
  CHECK(cudaStreamEndCapture(stream, &graph));
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  CHECK(cudaGraphLaunch(exec, stream));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, stream));
  CHECK(cudaGraphLaunch(exec, stream));
  CHECK(cudaEventRecord(stop, stream));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  return ms * 1e3f / reps;
}

#endif // LSTM_BENCH_MICRO_GRAPH_TIMER_H
