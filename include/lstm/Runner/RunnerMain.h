//===- RunnerMain.h - What lstm-run does, as a function ---------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The body of `lstm-run`, as upstream's mlir-runner is JitRunnerMain: read a
// module, run the pre-passes, read or draw the entry's arguments, lower and
// JIT-compile the module, call the entry in a child process, print the time
// and write the results. The tool parses and checks its options and calls
// runnerMain.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_RUNNER_RUNNERMAIN_H
#define LSTM_RUNNER_RUNNERMAIN_H

#include "lstm/Runner/JitRunner.h"
#include "lstm/Runner/RandomInputs.h"

#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::lstm {

/// What runnerMain runs, and how.
struct RunnerOptions {
  /// The prefix of the error messages ("<toolName>: error: ...").
  std::string toolName = "lstm-run";
  /// The module (a path; "-" for stdin).
  std::string inputFile;
  /// The function to call.
  std::string entry = "forward";
  /// One .npy file per argument of the entry; or, with `randomInputs`, none.
  std::vector<std::string> inputs;
  /// Whether to draw the arguments (drawRandomInputs with `random`).
  bool randomInputs = false;
  RandomInputOptions random;
  /// The directory for the results (DIR/0.npy, ...); none written if empty.
  std::string outputs;
  /// Calls to time; the median is printed.
  unsigned repeat = 1;
  /// How the module is lowered. Its prePasses run first, before the entry's
  /// signature is read (lstm-differentiate adds entries). For CUDA, an empty
  /// cudaRuntimePath is found with findCudaRuntime.
  JitOptions jit;
  /// The path the tool was started as (argv[0]), for findCudaRuntime.
  std::string argv0;
};

/// The CUDA runtime for the executable started as `argv0`:
/// $LSTM_CUDA_RUNTIME, else liblstm_cuda_runtime.so in ../lib next to the
/// executable's bin/ (the build tree and the install tree alike). Fails,
/// saying where it looked, when the file is not there.
llvm::Expected<std::string> findCudaRuntime(const char *argv0);

/// Runs `options.entry` of the module `options.inputFile` (parsed with the
/// dialects of `registry`) as `lstm-run` does, and returns the process's
/// exit status: 0, or 1 after an error printed to stderr (the parser's and
/// the passes' diagnostics with their locations, anything else as
/// "<toolName>: error: ..."). The compiled code runs in a child process
/// (runInChildProcess), so that a failed run-time check or a fault is an
/// error, not a crash.
int runnerMain(const RunnerOptions &options, const DialectRegistry &registry);

} // namespace mlir::lstm

#endif // LSTM_RUNNER_RUNNERMAIN_H
