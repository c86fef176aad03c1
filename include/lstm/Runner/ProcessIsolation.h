//===- ProcessIsolation.h - Compiled code in a child process ----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The compiled code of a module aborts on a failed run-time check (a batch
// size that differs between two arguments) and may fault; run in a child
// process, either is reported as an error of the run instead of taking the
// caller down.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_RUNNER_PROCESSISOLATION_H
#define LSTM_RUNNER_PROCESSISOLATION_H

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

namespace mlir::lstm {

/// Runs `body` in a child process (fork) and returns the status it exits
/// with (what `body` returns). The child runs without LLVM's crash handlers
/// (the parent reports the signal; a stack dump of the tool would add
/// nothing) and with unbuffered stdout, so that the message of a failed
/// run-time check, printed with puts() before the abort, is not lost. Fails
/// when the child cannot be started or waited for, or is killed by a signal:
/// the message says what the signal most likely means for compiled code (a
/// failed run-time check, out of memory, or the signal's name).
///
/// Nothing that does not survive fork() may be initialised before: for CUDA,
/// the child must be the first to initialise it.
llvm::Expected<int> runInChildProcess(llvm::function_ref<int()> body);

} // namespace mlir::lstm

#endif // LSTM_RUNNER_PROCESSISOLATION_H
