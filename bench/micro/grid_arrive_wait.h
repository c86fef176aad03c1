// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// gridArriveWait(counter, target): the grid barrier that
// lstm-lower-grid-barriers generates, for the micro-benchmarks that compare
// other exchanges with it: a release fence and a relaxed add on `counter`,
// then acquire polling until it reaches `target` (the k-th barrier of G
// arrivals waits for k * G). One thread of a block calls it, between two
// __syncthreads().
#ifndef LSTM_BENCH_MICRO_GRID_ARRIVE_WAIT_H
#define LSTM_BENCH_MICRO_GRID_ARRIVE_WAIT_H

__device__ inline void gridArriveWait(unsigned *counter, unsigned target) {
  asm volatile(
      "fence.acq_rel.gpu;\n\tred.relaxed.gpu.global.add.u32 [%0], 1;" ::"l"(
          counter)
      : "memory");
  unsigned v;
  do
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                 : "=r"(v)
                 : "l"(counter)
                 : "memory");
  while (v < target);
}

#endif // LSTM_BENCH_MICRO_GRID_ARRIVE_WAIT_H
