//===- RunnerMain.cpp - What lstm-run does, as a function -----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Runner/RunnerMain.h"

#include "lstm/Runner/Npy.h"
#include "lstm/Runner/ProcessIsolation.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace mlir::lstm;

namespace {
/// Prints the errors of one run, prefixed with the tool's name.
struct ErrorReporter {
  StringRef toolName;

  /// Prints `msg` as an error; returns the exit status of a failed run.
  int fail(const llvm::Twine &msg) const {
    llvm::errs() << toolName << ": error: " << msg << "\n";
    return 1;
  }
  int fail(llvm::Error err) const {
    return fail(llvm::toString(std::move(err)));
  }
};
} // namespace

llvm::Expected<std::string> mlir::lstm::findCudaRuntime(const char *argv0) {
  if (std::optional<std::string> env =
          llvm::sys::Process::GetEnv("LSTM_CUDA_RUNTIME")) {
    if (!llvm::sys::fs::exists(*env))
      return llvm::createStringError(
          llvm::inconvertibleErrorCode(),
          "the CUDA runtime library is not found: LSTM_CUDA_RUNTIME names " +
              *env + ", which does not exist");
    return *env;
  }
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&findCudaRuntime));
  llvm::SmallString<256> path(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(path, "..", "lib", "liblstm_cuda_runtime.so");
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  if (!llvm::sys::fs::exists(path))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the CUDA runtime library is not found: looked for " + path +
            " (built where the CUDA toolkit is found); set LSTM_CUDA_RUNTIME "
            "to its path");
  return std::string(path);
}

/// The entry's arguments: drawn, or read from the .npy files (in which case
/// checking them against `sig` is left to the caller).
static llvm::Expected<std::vector<Array>>
readArguments(const RunnerOptions &options, const Signature &sig) {
  if (options.randomInputs)
    return drawRandomInputs(sig, options.random);
  std::vector<Array> args;
  for (const std::string &path : options.inputs) {
    llvm::Expected<Array> array = readNpy(path);
    if (!array)
      return array.takeError();
    args.push_back(std::move(*array));
  }
  return args;
}

/// Calls `fn` `options.repeat` times, prints the median time and writes the
/// results of the last call.
static int callAndWrite(const RunnerOptions &options,
                        const ErrorReporter &report, CompiledFunction &fn,
                        const std::vector<Array> &args) {
  std::vector<double> times;
  std::vector<Array> results;
  for (unsigned r = 0; r < std::max(1u, options.repeat); ++r) {
    auto start = std::chrono::steady_clock::now();
    auto out = fn.call(args);
    auto stop = std::chrono::steady_clock::now();
    if (!out)
      return report.fail(out.takeError());
    times.push_back(
        std::chrono::duration<double, std::milli>(stop - start).count());
    results = std::move(*out);
  }
  std::sort(times.begin(), times.end());
  llvm::outs() << llvm::format("time: %.3f ms", times[times.size() / 2]);
  if (times.size() > 1)
    llvm::outs() << " (median of " << times.size() << " calls)";
  llvm::outs() << "\n";

  if (options.outputs.empty())
    return 0;
  if (std::error_code ec = llvm::sys::fs::create_directories(options.outputs))
    return report.fail("cannot create '" + options.outputs +
                       "': " + ec.message());
  for (size_t i = 0; i < results.size(); ++i) {
    llvm::SmallString<128> path(options.outputs);
    llvm::sys::path::append(path, std::to_string(i) + ".npy");
    if (llvm::Error err = writeNpy(path, results[i]))
      return report.fail(std::move(err));
  }
  return 0;
}

/// Initialises `fn` and runs callAndWrite in a child process.
///
/// For CUDA, CUDA is initialised in the child only: a CUDA context does not
/// survive fork(), and the parent never needs one. The parent has lowered
/// and JIT-compiled the module (ptxas runs as a program, nothing calls the
/// driver) and loaded libcuda.so.1 and the runtime (loading initialises
/// nothing); ExecutionEngine runs no global constructors until
/// CompiledFunction::initialize, and the constructors the GPU lowering emits
/// (loading the kernels with mgpuModuleLoad) are the first CUDA work. So the
/// child initialises, calls and exits, and the fork keeps what it gives the
/// CPU path: a failed run-time check in the host code (an abort) or a fault
/// in the runtime is reported, not a crash of the tool.
static int runIsolated(const RunnerOptions &options,
                       const ErrorReporter &report, CompiledFunction &fn,
                       const std::vector<Array> &args) {
  llvm::Expected<int> status = runInChildProcess([&] {
    // Outside the timed calls: for CUDA the device check and the kernels'
    // loading.
    if (llvm::Error err = fn.initialize())
      return report.fail(std::move(err));
    return callAndWrite(options, report, fn, args);
  });
  if (!status)
    return report.fail(status.takeError());
  return *status;
}

int mlir::lstm::runnerMain(const RunnerOptions &options,
                           const DialectRegistry &registry) {
  ErrorReporter report{options.toolName};
  if (options.jit.threads < 0)
    return report.fail("--cpu-threads=" + llvm::Twine(options.jit.threads) +
                       ": expected 0 (one per core) or more");
  if (options.randomInputs == !options.inputs.empty())
    return report.fail("give either --inputs=A.npy,... or --random-inputs");

  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string error;
  auto file = openInputFile(options.inputFile, &error);
  if (!file)
    return report.fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // The parser has reported the error with its location.

  // The pre-passes may add the entry (lstm-differentiate adds the gradient
  // functions): they run before its signature is read, and not again when
  // the module is compiled.
  if (llvm::Error err = runPrePasses(*module, options.jit.prePasses))
    return report.fail(std::move(err));
  FailureOr<Signature> sig = getSignature(*module, options.entry);
  if (failed(sig))
    return 1;

  llvm::Expected<std::vector<Array>> args = readArguments(options, *sig);
  if (!args)
    return report.fail(args.takeError());
  if (llvm::Error err = checkInputs(*sig, *args, options.inputs))
    return report.fail(std::move(err));

  JitOptions jit = options.jit;
  jit.prePasses.clear();
  if (jit.device == Device::CUDA) {
    // The driver before the runtime: on a machine without a GPU, that is the
    // message to give, whether the runtime was built or not.
    if (llvm::Error err = loadCudaDriver())
      return report.fail(std::move(err));
    if (jit.cudaRuntimePath.empty()) {
      llvm::Expected<std::string> runtime =
          findCudaRuntime(options.argv0.c_str());
      if (!runtime)
        return report.fail(runtime.takeError());
      jit.cudaRuntimePath = *runtime;
    }
  }
  auto fn = CompiledFunction::compile(*module, options.entry, jit);
  if (!fn)
    return report.fail(fn.takeError());
  return runIsolated(options, report, **fn, *args);
}
