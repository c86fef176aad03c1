//===- ForkedStreams.cpp - Independent work of a run on side streams ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A backward pass ends with GEMMs that do not depend on each other (every
// layer's weight, recurrent-weight and bias gradients, the input's): each
// fills a few of the GPU's SMs, and one after another on one stream they
// leave most of it idle. lstm-fork-independent-work brackets such groups
// with the calls below: a fork makes side streams wait for the work queued
// so far on the run's stream, a selection sends the next launches,
// allocations and GEMMs to one of them (currentStream()), and the join makes
// the run's stream wait for everything queued on them. Both are events
// recorded and waited on, so a CUDA-graph capture of the run records the
// fork and join as edges of its graph, and nothing waits on the host.
//
// The side streams and events belong to the thread, like the run's stream
// (RuntimeState.h), and are kept for its lifetime.
//
//===----------------------------------------------------------------------===//

#include "DeviceMemory.h"
#include "RuntimeState.h"

#include "lstm/Runtime/CudaRuntime.h"

#include <vector>

using namespace lstm::runtime;

namespace {
/// A side stream and the event its work's end is recorded on at a join.
struct SideStream {
  CUstream stream = nullptr;
  CUevent done = nullptr;
};

thread_local std::vector<SideStream> sides;
/// Recorded on the run's stream at a fork.
thread_local CUevent forkEvent = nullptr;
/// How many side streams the last fork made wait (0: not forked).
thread_local int32_t forked = 0;
/// The selected stream: 0 the run's, i the i-th side stream.
thread_local int32_t selected = 0;

bool makeEvent(CUevent &event) {
  return event ||
         LSTM_CUDA_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
}

/// The first `count` side streams, created where missing.
bool ensureSideStreams(int32_t count) {
  while (int32_t(sides.size()) < count) {
    SideStream side;
    if (!LSTM_CUDA_CHECK(cuStreamCreate(&side.stream, CU_STREAM_NON_BLOCKING)))
      return false;
    if (!makeEvent(side.done)) {
      cuStreamDestroy(side.stream);
      return false;
    }
    sides.push_back(side);
  }
  return true;
}
} // namespace

namespace lstm::runtime {

CUstream selectedSideStream() {
  return selected > 0 && selected <= forked ? sides[selected - 1].stream
                                            : nullptr;
}

bool isSideStream(CUstream stream) {
  for (const SideStream &side : sides)
    if (side.stream == stream)
      return true;
  return false;
}

} // namespace lstm::runtime

extern "C" {

void lstmRuntimeStreamFork(int32_t streams) {
  // A fork left open (a failure between it and its join) is closed first.
  lstmRuntimeStreamJoin();
  int32_t count = streams - 1;
  if (count <= 0 || hasFailed() || !ensureContext())
    return;
  CUstream run = runStream();
  if (!run || !ensureSideStreams(count) || !makeEvent(forkEvent) ||
      !LSTM_CUDA_CHECK(cuEventRecord(forkEvent, run)))
    return;
  for (int32_t i = 0; i < count; ++i)
    if (!LSTM_CUDA_CHECK(cuStreamWaitEvent(sides[i].stream, forkEvent, 0)))
      return;
  forked = count;
  markFork(run);
}

void lstmRuntimeStreamSelect(int32_t stream) {
  // Without a fork (none asked for, or it failed) everything stays on the
  // run's stream.
  selected = stream > 0 && stream <= forked ? stream : 0;
}

void lstmRuntimeStreamJoin(void) {
  int32_t count = forked;
  forked = 0;
  selected = 0;
  if (count == 0)
    return;
  markJoin();
  CUstream run = runStream();
  // After a failure the waits are still made where the calls succeed: the
  // run's stream never runs ahead of work queued on a side stream.
  for (int32_t i = 0; i < count; ++i)
    if (run && LSTM_CUDA_CHECK(cuEventRecord(sides[i].done, sides[i].stream)))
      LSTM_CUDA_CHECK(cuStreamWaitEvent(run, sides[i].done, 0));
}

} // extern "C"
