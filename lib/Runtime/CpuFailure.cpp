//===- CpuFailure.cpp - A failed check or allocation, back to the caller --===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Generated CPU code stops at a failed run-time check or a buffer it cannot
// allocate. Aborting there ends the caller's process: a Python user lost
// the interpreter to a batch too large for the memory. A call made through
// lstmRuntimeCpuGuardedCall instead returns 1, the message kept for the
// caller (lstmRuntimeCpuLastFailure): the failure longjmps back to the
// guard. Unguarded, the message goes to stderr before the abort. Between the
// guard and the failure there are only the generated functions (no destructors)
// and these functions; a failure inside a parallel region (on a team's thread,
// or on the calling thread within it) still aborts, as does one without a guard
// (lstm-run's child process, a C caller of _mlir_ciface_NAME). The buffers the
// call made before the failure are not freed.
//
//===----------------------------------------------------------------------===//

#include "CpuFailure.h"
#include "lstm/Runtime/CpuRuntime.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

/// The innermost guard of this thread's calls, if any.
thread_local std::jmp_buf *guard = nullptr;
/// How deep this thread is in parallel regions of the runtime.
thread_local int parallelDepth = 0;
/// The message of this thread's last failure.
thread_local std::string lastFailure;

/// Back to the guard with `message`, or (without one, or in a parallel
/// region) `message` on stderr and abort.
[[noreturn]] void fail(std::string message) {
  lastFailure = std::move(message);
  if (guard && parallelDepth == 0)
    std::longjmp(*guard, 1);
  std::fputs((lastFailure + "\n").c_str(), stderr);
  std::fflush(nullptr);
  std::abort();
}

} // namespace

lstm::CpuParallelRegion::CpuParallelRegion() { ++parallelDepth; }
lstm::CpuParallelRegion::~CpuParallelRegion() { --parallelDepth; }

extern "C" int32_t lstmRuntimeCpuGuardedCall(void (*packed)(void **),
                                             void **arguments) {
  std::jmp_buf here;
  std::jmp_buf *outer = guard;
  if (setjmp(here) != 0) {
    guard = outer;
    return 1;
  }
  guard = &here;
  packed(arguments);
  guard = outer;
  return 0;
}

extern "C" const char *lstmRuntimeCpuLastFailure(void) {
  return lastFailure.c_str();
}

extern "C" void lstmRuntimeCpuCheckFailed(const char *message) {
  fail(message);
}

extern "C" void lstmRuntimeCpuOutOfMemory(uint64_t bytes, const char *where) {
  fail("lstm: out of memory: cannot allocate a buffer of " +
       std::to_string(bytes) + " bytes (for the value made at " + where + ")");
}
