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
// guard. Between the guard and the failure there are only the generated
// functions (no destructors) and this runtime's functions, which hold
// nothing with a destructor across a call that may fail.
//
// A failure in a part of a parallel region (CpuParallelFor.cpp, on any
// thread of the team) longjmps to the start of that part instead, which
// is inside the region; the region's other parts finish, and after it the
// calling thread fails with the message. Unguarded (lstm-run's child
// process, a C caller of _mlir_ciface_NAME) the message goes to stderr and
// the process aborts.
//
// The buffers and products' plans that generated code makes during a
// guarded call (CpuMemory.cpp, CpuPreparedGemm.cpp) are recorded as the
// call's until they are released; when the call fails, those still held
// are released (nothing was returned), and when it returns, those left
// (its results) become the caller's.
//
//===----------------------------------------------------------------------===//

#include "CpuFailure.h"
#include "lstm/Runtime/CpuRuntime.h"

#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace lstm {
/// A resource of a guarded call and how it is released.
struct CpuResource {
  void *resource;
  void (*release)(void *);
};

/// A guarded call: where its failures go, and the resources it holds.
struct CpuGuard {
  std::jmp_buf jump;
  /// The guarded call this one runs in, if any.
  CpuGuard *outer = nullptr;
  /// The resources it made and has not released, in the order made (a
  /// step's buffers are freed in about the reverse order: a free finds its
  /// block near the end). Outside parallel regions only the calling
  /// thread touches them; within one every thread of the team, the calling
  /// thread included, holds `mutex` for it.
  std::vector<CpuResource> held;
  std::mutex mutex;
};
} // namespace lstm

using lstm::CpuGuard;
using lstm::CpuResource;

namespace {

/// The innermost guarded call of this thread, if any.
thread_local CpuGuard *guard = nullptr;
/// Where a failure on this thread goes while it runs a part of a parallel
/// region; null outside one.
thread_local std::jmp_buf *partExit = nullptr;
/// The call whose resources this thread's are: its guarded call, or in a
/// part of a parallel region the calling thread's.
thread_local CpuGuard *owner = nullptr;
/// The message of this thread's last failure.
thread_local std::string lastFailure;

/// Removes `resource` from `held` if it is there.
bool forget(std::vector<CpuResource> &held, void *resource) {
  for (size_t i = held.size(); i-- > 0;)
    if (held[i].resource == resource) {
      held.erase(held.begin() + i);
      return true;
    }
  return false;
}

} // namespace

void lstm::trackCpuResource(void *resource, void (*release)(void *)) {
  if (!owner || !resource)
    return;
  if (!partExit) {
    owner->held.push_back({resource, release});
    return;
  }
  std::lock_guard<std::mutex> lock(owner->mutex);
  owner->held.push_back({resource, release});
}

void lstm::untrackCpuResource(void *resource) {
  // A resource of a call that returned is its caller's, no longer
  // tracked; one that an enclosing guarded call made, that call's.
  for (CpuGuard *call = owner; call; call = call->outer) {
    if (!partExit) {
      if (forget(call->held, resource))
        return;
      continue;
    }
    std::lock_guard<std::mutex> lock(call->mutex);
    if (forget(call->held, resource))
      return;
  }
}

[[noreturn]] void lstm::failWithLastMessage() {
  if (partExit)
    std::longjmp(*partExit, 1);
  if (guard)
    std::longjmp(guard->jump, 1);
  std::fputs((lastFailure + "\n").c_str(), stderr);
  std::fflush(nullptr);
  std::abort();
}

lstm::CpuParallelRegion::CpuParallelRegion() : caller(owner) {}

void lstm::CpuParallelRegion::runPart(void (*task)(void *, int64_t, int64_t),
                                      void *context, int64_t begin,
                                      int64_t end) {
  std::jmp_buf exit;
  std::jmp_buf *outerExit = partExit;
  CpuGuard *outerOwner = owner;
  if (setjmp(exit) == 0) {
    partExit = &exit;
    owner = caller;
    task(context, begin, end);
  } else {
    std::lock_guard<std::mutex> lock(mutex);
    if (!failed) {
      failed = true;
      message = lastFailure;
    }
  }
  partExit = outerExit;
  owner = outerOwner;
}

bool lstm::CpuParallelRegion::takeFailure() {
  std::lock_guard<std::mutex> lock(mutex);
  if (failed)
    lastFailure = message;
  return failed;
}

extern "C" int32_t lstmRuntimeCpuGuardedCall(void (*packed)(void **),
                                             void **arguments) {
  CpuGuard here;
  here.outer = owner;
  CpuGuard *outerGuard = guard;
  std::jmp_buf *outerExit = partExit;
  if (setjmp(here.jump) != 0) {
    guard = outerGuard;
    owner = here.outer;
    partExit = outerExit;
    // Nothing was returned: what the call still held is released.
    for (const CpuResource &held : here.held)
      held.release(held.resource);
    return 1;
  }
  guard = owner = &here;
  partExit = nullptr;
  packed(arguments);
  guard = outerGuard;
  owner = here.outer;
  partExit = outerExit;
  // What the call still holds it returned: the caller's now (the enclosing
  // guarded call's, if any).
  if (here.outer) {
    std::unique_lock<std::mutex> lock(here.outer->mutex, std::defer_lock);
    if (partExit)
      lock.lock();
    here.outer->held.insert(here.outer->held.end(), here.held.begin(),
                            here.held.end());
  }
  return 0;
}

extern "C" const char *lstmRuntimeCpuLastFailure(void) {
  return lastFailure.c_str();
}

// The message is made in statements of its own: a longjmp would skip the
// destruction of a temporary alive across the failure.
extern "C" void lstmRuntimeCpuCheckFailed(const char *message) {
  lastFailure = message;
  lstm::failWithLastMessage();
}

extern "C" void lstmRuntimeCpuOutOfMemory(uint64_t bytes, const char *where) {
  lastFailure = "lstm: out of memory: cannot allocate a buffer of " +
                std::to_string(bytes) + " bytes (for the value made at " +
                where + ")";
  lstm::failWithLastMessage();
}
