//===- CpuParallelFor.cpp - Generated loops on the runtime's threads ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The elementwise loops of generated CPU code (lstm-outline-parallel-loops,
// lstm-dispatch-parallel-bodies) run here, split among the OpenMP threads
// that oneDNN's products use: one pool, one thread count
// (lstmRuntimeCpuSetThreads), no threads of two runtimes competing for the
// cores between a step's GEMM and its cell.
//
//===----------------------------------------------------------------------===//

#include "CpuFailure.h"
#include "CpuThreads.h"
#include "lstm/Runtime/CpuRuntime.h"

#include <algorithm>
#include <omp.h>

namespace {

/// The least work worth handing to another thread, in operations of a
/// loop body (what lstm-outline-parallel-loops counts): about 1.5 µs of a
/// vectorised cell's work on one core (some 150 operations a cell at about
/// 4 cycles a cell), what waking a team of threads costs (about 1 µs).
/// Below it a loop runs on the calling thread. Measured on 16 cores
/// (docs/benchmarks.md, "The CPU"): 2^16 against 2^18, stack3 3.9 against
/// 7.2 ms on 16 threads (a step's cell in 8 parts rather than 2), 4.4
/// against 6.0 on 8; 2^14 no better. A test's tiny networks stay on one
/// thread.
constexpr int64_t kMinWorkPerThread = int64_t(1) << 16;

} // namespace

extern "C" void
lstmRuntimeCpuParallelFor(void (*task)(void *, int64_t, int64_t), void *context,
                          int64_t lo, int64_t hi, int64_t work) {
  int64_t count = hi - lo;
  if (count <= 0)
    return;
  lstm::applyCpuThreadCount();
  int64_t threads = omp_in_parallel() ? 1 : omp_get_max_threads();
  // count · work, saturated: both come from the program's extents.
  int64_t total = work > 0 && count > INT64_MAX / work
                      ? INT64_MAX
                      : count * std::max<int64_t>(work, 1);
  int64_t parts = std::min(
      {threads, count, std::max<int64_t>(1, total / kMinWorkPerThread)});
  if (parts <= 1) {
    task(context, lo, hi);
    return;
  }
  // The team is every thread of the count, as for oneDNN's products, and
  // only `parts` of them get work: GNU OpenMP re-docks its pool whenever
  // consecutive regions ask for teams of other sizes, which on 16 cores
  // made alternating 2-thread cells and 16-thread products 20 times slower
  // than either alone.
  // A failure in a part ends that part (a longjmp cannot leave the
  // region); after the region the call fails with its message, with
  // nothing of this function's left to destroy.
  bool failed;
  {
    lstm::CpuParallelRegion region;
#pragma omp parallel num_threads(static_cast <int>(threads))
    {
      // Contiguous, nearly equal parts, one for each of the first `parts`
      // threads of the team (which may be smaller than asked).
      int64_t team = std::min<int64_t>(parts, omp_get_num_threads());
      int64_t self = omp_get_thread_num();
      if (self < team) {
        int64_t share = count / team, extra = count % team;
        int64_t begin = lo + self * share + std::min(self, extra);
        int64_t end = begin + share + (self < extra ? 1 : 0);
        region.runPart(task, context, begin, end);
      }
    }
    failed = region.takeFailure();
  }
  if (failed)
    lstm::failWithLastMessage();
}
