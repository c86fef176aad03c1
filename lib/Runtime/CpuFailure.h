//===- CpuFailure.h - Failures of generated CPU code, back to the call ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_RUNTIME_CPUFAILURE_H
#define LSTM_RUNTIME_CPUFAILURE_H

#include <cstdint>
#include <mutex>
#include <string>

namespace lstm {

struct CpuGuard;

/// A buffer (CpuMemory.cpp) or a product's plan (CpuPreparedGemm.cpp) that
/// generated code made: while a guarded call runs on this thread (or this
/// thread runs a part of its parallel region), the call's until it is
/// released or the call returns, and released by `release` with the
/// call's others if the call fails.
void trackCpuResource(void *resource, void (*release)(void *));
/// A resource that generated code releases: no longer a call's.
void untrackCpuResource(void *resource);

/// A parallel region of the runtime (CpuParallelFor.cpp). A longjmp cannot
/// leave the region, so a failure in one of its parts ends that part only
/// and is kept here; once the region is over, the calling thread fails
/// with the first part's message (failWithLastMessage), outside it.
class CpuParallelRegion {
public:
  /// On the calling thread, before the region.
  CpuParallelRegion();
  CpuParallelRegion(const CpuParallelRegion &) = delete;
  CpuParallelRegion &operator=(const CpuParallelRegion &) = delete;

  /// On a thread of the team: task(context, begin, end), the resources it
  /// makes the calling thread's call's.
  void runPart(void (*task)(void *, int64_t, int64_t), void *context,
               int64_t begin, int64_t end);
  /// On the calling thread, after the region: whether a part failed; if so
  /// its message is this thread's last failure.
  bool takeFailure();

private:
  /// The calling thread's call, whose the parts' resources are.
  CpuGuard *caller;
  std::mutex mutex;
  bool failed = false;
  std::string message;
};

/// Fails with this thread's last failure message: back to the guarded
/// call, or on stderr and abort. Nothing with a destructor may be alive
/// between the guard and the caller.
[[noreturn]] void failWithLastMessage();

} // namespace lstm

#endif // LSTM_RUNTIME_CPUFAILURE_H
