//===- ProcessIsolation.cpp - Compiled code in a child process ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Runner/ProcessIsolation.h"

#include "llvm/Support/Signals.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::lstm;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// The error for a child killed by `sig`.
static llvm::Error killedBy(int sig) {
  // The generated code aborts after printing why: a failed cf.assert (the
  // arguments' shapes do not agree) or a buffer it cannot allocate.
  if (sig == SIGABRT)
    return makeError("the compiled function stopped at a failed run-time "
                     "check (message above)");
  // SIGKILL: the kernel's out-of-memory killer, most likely (memory that
  // was granted but could not be backed when touched).
  if (sig == SIGKILL)
    return makeError("the compiled function was killed (SIGKILL): out of "
                     "memory? (the inputs and the buffers the function "
                     "allocates did not fit in memory)");
  return makeError(llvm::Twine("the compiled function was killed by signal ") +
                   llvm::Twine(sig) + " (" + strsignal(sig) + ")");
}

llvm::Expected<int>
mlir::lstm::runInChildProcess(llvm::function_ref<int()> body) {
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0)
    return makeError(llvm::Twine("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // The parent reports a fatal signal; LLVM's crash handler would only add
    // a stack dump of the tool. A failed check writes its message to stderr
    // itself (lstm-report-failed-checks); unbuffered stdout keeps what the
    // function printed before it aborts.
    llvm::sys::unregisterHandlers();
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    int rc = body();
    llvm::outs().flush();
    llvm::errs().flush();
    _exit(rc);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0)
    return makeError(llvm::Twine("waitpid failed: ") + std::strerror(errno));
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  return killedBy(WTERMSIG(status));
}
