//===- DeviceMemory.h - Device buffers of a run, cached per size -*- C++
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//-*-===//
//
// A compiled network allocates and frees the same scratch buffers every step
// (a GEMM's result, a gate's activations). Those go through a per-thread
// cache keyed by size: a freed block is reused by the next allocation of the
// same size, with no driver call. That is safe because a block freed on a
// stream is reused only by later work of that stream: each stream (the
// run's, and the side streams it forks, ForkedStreams.cpp) has a cache of
// its own, and the generated code frees a block after its last use, on the
// stream of that use or on one that joined it. A side stream may also take a
// block that the run's stream had freed before it was forked (it waits for
// the run's stream's work until then). The run's stream's cache is
// emptied (blocks handed back to the driver) when the caller's stream
// changes.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_RUNTIME_DEVICEMEMORY_H
#define LSTM_LIB_RUNTIME_DEVICEMEMORY_H

#include <cuda.h>

#include <cstdint>

#pragma GCC visibility push(hidden)
namespace lstm::runtime {

/// A device buffer of `bytes` ordered on `stream`; 0 after a failure.
CUdeviceptr allocateDevice(uint64_t bytes, CUstream stream);

/// Gives `ptr` (from allocateDevice) back for reuse after the work queued on
/// `stream` so far.
void releaseDevice(CUdeviceptr ptr, CUstream stream);

/// Hands every cached block back to the driver.
void emptyDeviceCache();

/// Side streams were forked from `run` (they wait for the work queued on it
/// so far): until markJoin, a side stream's allocation that its own cache
/// cannot serve may take a block `run`'s cache held at the fork.
void markFork(CUstream run);
void markJoin();

} // namespace lstm::runtime
#pragma GCC visibility pop

#endif // LSTM_LIB_RUNTIME_DEVICEMEMORY_H
