//===- RuntimeState.h - Errors, context and stream of the runtime --*- C++
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//-*-===//
//
// State the runtime's entry points share, per host thread: the first failure
// recorded since the last clear, the CUDA context, and the one stream every
// launch, copy, allocation and GEMM of a run is ordered on (or, between a
// fork and its join, one of the side streams forked from it).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_RUNTIME_RUNTIMESTATE_H
#define LSTM_LIB_RUNTIME_RUNTIMESTATE_H

#include <cuda.h>

#include <string>

// Internal to each library the runtime is linked into: two compiled networks
// loaded in one process keep their own state.
#pragma GCC visibility push(hidden)
namespace lstm::runtime {

/// Records `message` as this thread's failure unless one is recorded already.
void recordFailure(const std::string &message);

/// Whether a failure is recorded: later work of the run is then skipped.
bool hasFailed();

/// Records `call` as failed with `status` (unless a failure is recorded
/// already). Returns true when `status` is success.
bool check(CUresult status, const char *call);

/// Makes the device's primary context current (the one PyTorch and CuPy use,
/// so that their device pointers are valid here). False after a failure.
bool ensureContext();

/// The stream of this thread's runs: the caller's (lstmRuntimeSetStream) or
/// one the runtime creates on first use and keeps. Null after a failure.
CUstream runStream();
/// The stream the next launch, copy, allocation or GEMM goes to: the side
/// stream that lstmRuntimeStreamSelect chose between a fork and its join
/// (ForkedStreams.cpp), else the run's stream.
CUstream currentStream();
/// The selected side stream, or null where the run's stream is selected.
CUstream selectedSideStream();
/// Whether `stream` is one of this thread's side streams.
bool isSideStream(CUstream stream);

} // namespace lstm::runtime
#pragma GCC visibility pop

#define LSTM_CUDA_CHECK(expr) ::lstm::runtime::check((expr), #expr)

#endif // LSTM_LIB_RUNTIME_RUNTIMESTATE_H
