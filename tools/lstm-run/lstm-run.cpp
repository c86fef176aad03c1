//===- lstm-run.cpp - Compile an lstm module and run it -------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//   lstm-run FILE.mlir --entry=NAME --device=cpu|cuda --inputs=A.npy,B.npy,...
//            --outputs=DIR
//   lstm-run FILE.mlir --entry=NAME --random-inputs --seed=N [--shapes=...]
//
// Reads one .npy per argument of the entry function (or draws random ones),
// lowers the module (lstm-to-cpu or lstm-to-nvvm), JIT-compiles it, calls
// the function and writes one .npy per result as DIR/0.npy, DIR/1.npy, ...
// It prints the time of the call. For CUDA the arguments are copied to the
// GPU and the results back.
//
// The compiled code runs in a child process: a failed run-time check (say, a
// batch size that differs between two arguments) or any other fault there is
// reported as an error of the run instead of taking the tool down.
//
//===----------------------------------------------------------------------===//

#include "lstm/Registration.h"
#include "lstm/Runner/JitRunner.h"
#include "lstm/Runner/Npy.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <random>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
using namespace mlir::lstm;
namespace cl = llvm::cl;

// Only these (and LLVM's --help, --version) are listed by --help: the
// tool links all of LLVM, whose backend options would bury them.
static cl::OptionCategory toolCategory("lstm-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required, cl::cat(toolCategory));
static cl::opt<std::string> entry("entry", cl::desc("Function to run"),
                                  cl::init("forward"), cl::cat(toolCategory));
static cl::opt<Device> device(
    "device", cl::desc("Where the module runs"), cl::init(Device::CPU),
    cl::values(clEnumValN(Device::CPU, "cpu", "The host CPU"),
               clEnumValN(Device::CUDA, "cuda",
                          "An NVIDIA GPU, with the project's CUDA runtime "
                          "from ../lib or $LSTM_CUDA_RUNTIME")),
    cl::cat(toolCategory));
static cl::list<std::string> inputs("inputs",
                                    cl::desc("One .npy file per argument"),
                                    cl::CommaSeparated, cl::cat(toolCategory));
static cl::opt<std::string> outputs("outputs",
                                    cl::desc("Directory for the results"),
                                    cl::cat(toolCategory));
static cl::opt<bool> randomInputs("random-inputs",
                                  cl::desc("Draw the arguments at random"),
                                  cl::cat(toolCategory));
static cl::opt<unsigned> seed("seed", cl::desc("Seed of --random-inputs"),
                              cl::init(0), cl::cat(toolCategory));
static cl::opt<int64_t>
    dynamicSize("dynamic-size",
                cl::desc("Extent of each '?' with --random-inputs"),
                cl::init(4), cl::cat(toolCategory));
static cl::list<std::string>
    shapes("shapes",
           cl::desc("Shapes of the random arguments, e.g. 50x32x64,32x128,... "
                    "(an empty entry keeps the default)"),
           cl::CommaSeparated, cl::cat(toolCategory));
static cl::opt<unsigned>
    repeat("repeat",
           cl::desc("Calls to time (the median is shown); for cuda a call "
                    "includes copying the arguments to the GPU and the "
                    "results back"),
           cl::init(1), cl::cat(toolCategory));
static cl::opt<std::string> prePasses(
    "pre-passes",
    cl::desc("Passes to run on the lstm IR before lowering, as a textual "
             "pipeline (e.g. lstm-optimize)"),
    cl::init(""), cl::cat(toolCategory));

static cl::opt<bool> runtimeChecks(
    "runtime-checks",
    cl::desc("Check the dynamic extents of the tensor ops at run time "
             "(lstm-generate-runtime-checks; the lstm ops check theirs "
             "regardless)"),
    cl::init(true), cl::cat(toolCategory));

// The CPU lowering, as lstm-compile's options of the same names.
static cl::OptionCategory cpuCategory("Options of --device=cpu");
static cl::opt<bool> blas("blas", cl::desc("Send the GEMMs to OpenBLAS"),
                          cl::init(true), cl::cat(cpuCategory));
static cl::opt<int64_t> blasMinSize(
    "blas-min-size",
    cl::desc("Smallest m*n*k*batch sent to OpenBLAS; smaller GEMMs become "
             "loops"),
    cl::init(0), cl::cat(cpuCategory));
static cl::opt<bool> approximateMath(
    "approximate-math",
    cl::desc("f32 tanh, exp, log as vectorisable polynomials instead of "
             "libm calls"),
    cl::init(true), cl::cat(cpuCategory));
static cl::opt<int>
    threads("cpu-threads",
            cl::desc("Threads of the GEMMs (default: one per core)"),
            cl::init(0), cl::cat(cpuCategory));

// The GPU lowering, as lstm-compile's options of the same names.
static cl::OptionCategory gpuCategory("Options of --device=cuda");
static cl::opt<lstm::GemmComputeType>
    computeType("compute-type", cl::desc("GEMM arithmetic on the GPU"),
                cl::init(lstm::GemmComputeType::fp32),
                lstm::gemmComputeTypeValues(), cl::cat(gpuCategory));
static cl::opt<bool> cublas("cublas", cl::desc("Send the GEMMs to cuBLAS"),
                            cl::init(true), cl::cat(gpuCategory));
static cl::opt<int64_t> cublasMinSize(
    "cublas-min-size",
    cl::desc("Smallest m*n*k*batch sent to cuBLAS; smaller GEMMs become "
             "generated kernels"),
    cl::init(0), cl::cat(gpuCategory));
static cl::opt<std::string> chip("chip", cl::desc("GPU architecture"),
                                 cl::init(lstm::kDefaultGpuChip.str()),
                                 cl::cat(gpuCategory));
static cl::opt<std::string> features("features", cl::desc("PTX features"),
                                     cl::init(lstm::kDefaultPtxFeatures.str()),
                                     cl::cat(gpuCategory));
static cl::opt<std::string>
    cudaPath("cuda-path",
             cl::desc("CUDA toolkit with ptxas and libdevice (default: "
                      "$CUDA_HOME or $CUDA_PATH, else the one found when the "
                      "project was configured, else the one of ptxas on PATH)"),
             cl::cat(gpuCategory));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "lstm-run: error: " << msg << "\n";
  return 1;
}

/// Random arrays for the entry's arguments: floats from U(-1/sqrt(n),
/// 1/sqrt(n)) with n the last extent (PyTorch's initialisation), integers
/// (sequence lengths) from [1, extent 0 of argument #0].
static llvm::Expected<std::vector<Array>> drawInputs(const Signature &sig) {
  auto error = [](const llvm::Twine &msg) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
  };
  if (dynamicSize < 0)
    return error("--dynamic-size must be 0 or more, not " +
                 llvm::Twine(int64_t(dynamicSize)));
  // The shapes first, so that their sizes are checked, alone and together,
  // before anything is allocated.
  std::vector<Array> arrays(sig.args.size());
  uint64_t total = 0;
  for (size_t i = 0; i < sig.args.size(); ++i) {
    const TensorSpec &spec = sig.args[i];
    Array &a = arrays[i];
    a.dtype = spec.dtype;
    if (i < shapes.size() && !shapes[i].empty()) {
      llvm::SmallVector<llvm::StringRef> dims;
      llvm::StringRef(shapes[i]).split(dims, 'x');
      for (llvm::StringRef d : dims) {
        int64_t v;
        if (d.getAsInteger(10, v) || v < 0)
          return error("malformed --shapes entry '" + shapes[i] +
                       "' (extents are integers from 0 to 2^63 - 1)");
        a.shape.push_back(v);
      }
    } else {
      for (int64_t d : spec.shape)
        a.shape.push_back(ShapedType::isDynamic(d) ? dynamicSize : d);
    }
    llvm::Expected<uint64_t> bytes = a.byteSize();
    if (!bytes)
      return error("argument #" + llvm::Twine(i) +
                   " (--random-inputs): " + llvm::toString(bytes.takeError()));
    // Each size is below 2^63 and the total stays below the limit: no
    // overflow.
    total += *bytes;
    if (total > memoryLimit())
      return error("the random inputs need " + formatBytes(total) +
                   " in all (argument #" + llvm::Twine(i) + " of shape " +
                   a.shapeString() + ": " + formatBytes(*bytes) +
                   "), more than the " + formatBytes(memoryLimit()) +
                   " of memory this process may have");
  }
  // The shapes against the signature before drawing: a --shapes entry of
  // the wrong rank or static extent is an error at once, not after
  // gigabytes of random numbers.
  if (llvm::Error err = checkInputs(sig, arrays))
    return std::move(err);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < sig.args.size(); ++i) {
    Array &a = arrays[i];
    if (llvm::Error err =
            a.allocate("argument #" + llvm::Twine(i) + " (--random-inputs)"))
      return std::move(err);
    int64_t n = a.shape.empty() ? 1 : std::max<int64_t>(1, a.shape.back());
    double k = 1.0 / std::sqrt(double(n));
    std::uniform_real_distribution<double> uni(-k, k);
    int64_t maxLen =
        arrays[0].shape.empty() ? 1 : std::max<int64_t>(1, arrays[0].shape[0]);
    std::uniform_int_distribution<int64_t> len(1, maxLen);
    for (int64_t e = 0; e < a.numElements(); ++e) {
      char *p = a.data.data() + e * dtypeSize(a.dtype);
      switch (a.dtype) {
      case DType::f32: {
        float v = uni(rng);
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::f64: {
        double v = uni(rng);
        std::memcpy(p, &v, 8);
        break;
      }
      case DType::i32: {
        int32_t v = len(rng);
        std::memcpy(p, &v, 4);
        break;
      }
      case DType::i64: {
        int64_t v = len(rng);
        std::memcpy(p, &v, 8);
        break;
      }
      }
    }
  }
  return arrays;
}

/// Calls the function `repeat` times, prints the time and writes the results.
static int callAndWrite(CompiledFunction &fn, const std::vector<Array> &args) {
  std::vector<double> times;
  std::vector<Array> results;
  for (unsigned r = 0; r < std::max(1u, unsigned(repeat)); ++r) {
    auto start = std::chrono::steady_clock::now();
    auto out = fn.call(args);
    auto stop = std::chrono::steady_clock::now();
    if (!out)
      return fail(llvm::toString(out.takeError()));
    times.push_back(
        std::chrono::duration<double, std::milli>(stop - start).count());
    results = std::move(*out);
  }
  std::sort(times.begin(), times.end());
  llvm::outs() << llvm::format("time: %.3f ms", times[times.size() / 2]);
  if (times.size() > 1)
    llvm::outs() << " (median of " << times.size() << " calls)";
  llvm::outs() << "\n";

  if (!outputs.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputs))
      return fail("cannot create '" + outputs + "': " + ec.message());
    for (size_t i = 0; i < results.size(); ++i) {
      llvm::SmallString<128> path(outputs.getValue());
      llvm::sys::path::append(path, std::to_string(i) + ".npy");
      if (llvm::Error err = writeNpy(path, results[i]))
        return fail(llvm::toString(std::move(err)));
    }
  }
  return 0;
}

/// Runs `callAndWrite` in a child process and turns a fatal signal there into
/// an error message.
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
static int runIsolated(CompiledFunction &fn, const std::vector<Array> &args) {
  llvm::outs().flush();
  llvm::errs().flush();
  pid_t pid = fork();
  if (pid < 0)
    return fail(llvm::Twine("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // The parent reports a fatal signal; LLVM's crash handler would only add
    // a stack dump of the tool. cf.assert prints its message with puts():
    // unbuffered stdout keeps it when the check aborts.
    llvm::sys::unregisterHandlers();
    std::setvbuf(stdout, nullptr, _IONBF, 0);
    // Outside the timed calls: for CUDA the device check and the kernels'
    // loading.
    int rc = 0;
    if (llvm::Error err = fn.initialize())
      rc = fail(llvm::toString(std::move(err)));
    else
      rc = callAndWrite(fn, args);
    llvm::outs().flush();
    llvm::errs().flush();
    _exit(rc);
  }
  int status = 0;
  if (waitpid(pid, &status, 0) < 0)
    return fail(llvm::Twine("waitpid failed: ") + std::strerror(errno));
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  int sig = WTERMSIG(status);
  // The generated code aborts after printing why: a failed cf.assert (the
  // arguments' shapes do not agree) or a buffer it cannot allocate.
  if (sig == SIGABRT)
    return fail("the compiled function stopped at a failed run-time check "
                "(message above)");
  // SIGKILL: the kernel's out-of-memory killer, most likely (memory that
  // was granted but could not be backed when touched).
  if (sig == SIGKILL)
    return fail("the compiled function was killed (SIGKILL): out of memory? "
                "(the inputs and the buffers the function allocates did not "
                "fit in memory)");
  return fail(llvm::Twine("the compiled function was killed by signal ") +
              llvm::Twine(sig) + " (" + strsignal(sig) + ")");
}

/// The CUDA runtime: $LSTM_CUDA_RUNTIME, else liblstm_cuda_runtime.so in
/// ../lib next to this executable's bin/ (the build tree and the install
/// tree alike). Fails, saying where it looked, when the file is not there.
static llvm::Expected<std::string> findCudaRuntime(const char *argv0) {
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

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&toolCategory, &cpuCategory, &gpuCategory});
  cl::ParseCommandLineOptions(argc, argv,
                              "lstm-run: compile an lstm module and run it\n");

  // The GPU options mean nothing to the CPU lowering: given with it, they
  // are a mistake worth reporting rather than ignoring.
  if (device == Device::CPU)
    for (const cl::Option *opt : {static_cast<cl::Option *>(&computeType),
                                  static_cast<cl::Option *>(&cublas),
                                  static_cast<cl::Option *>(&cublasMinSize),
                                  static_cast<cl::Option *>(&chip),
                                  static_cast<cl::Option *>(&features),
                                  static_cast<cl::Option *>(&cudaPath)})
      if (opt->getNumOccurrences())
        return fail("--" + opt->ArgStr + " applies to --device=cuda only");
  if (device == Device::CUDA)
    for (const cl::Option *opt : {static_cast<cl::Option *>(&blas),
                                  static_cast<cl::Option *>(&blasMinSize),
                                  static_cast<cl::Option *>(&approximateMath),
                                  static_cast<cl::Option *>(&threads)})
      if (opt->getNumOccurrences())
        return fail("--" + opt->ArgStr + " applies to --device=cpu only");
  if (threads < 0)
    return fail("--cpu-threads=" + llvm::Twine(threads) +
                ": expected 0 (one per core) or more");
  if (randomInputs == !inputs.empty())
    return fail("give either --inputs=A.npy,... or --random-inputs");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllLSTM(registry);
  MLIRContext context(registry);
  context.printOpOnDiagnostic(false);

  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // The parser has reported the error with its location.

  // The pre-passes may add the entry (lstm-differentiate adds the gradient
  // functions): they run before its signature is read.
  if (llvm::Error err = runPrePasses(*module, prePasses))
    return fail(llvm::toString(std::move(err)));
  FailureOr<Signature> sig = getSignature(*module, entry);
  if (failed(sig))
    return 1;

  std::vector<Array> args;
  std::vector<std::string> names(inputs.begin(), inputs.end());
  if (randomInputs) {
    auto drawn = drawInputs(*sig);
    if (!drawn)
      return fail(llvm::toString(drawn.takeError()));
    args = std::move(*drawn);
  } else {
    for (const std::string &path : inputs) {
      auto array = readNpy(path);
      if (!array)
        return fail(llvm::toString(array.takeError()));
      args.push_back(std::move(*array));
    }
  }
  if (llvm::Error err = checkInputs(*sig, args, names))
    return fail(llvm::toString(std::move(err)));

  JitOptions options;
  options.runtimeChecks = runtimeChecks;
  options.cpu.blas = blas;
  options.cpu.blasMinSize = blasMinSize;
  options.cpu.approximateMath = approximateMath;
  options.threads = threads;
  options.device = device;
  if (device == Device::CUDA) {
    options.nvvm.computeType = computeType;
    options.nvvm.cublas = cublas;
    options.nvvm.cublasMinSize = cublasMinSize;
    options.nvvm.chip = chip;
    options.nvvm.features = features;
    options.nvvm.cudaPath = cudaPath;
    // The driver before the runtime: on a machine without a GPU, that is the
    // message to give, whether the runtime was built or not.
    if (llvm::Error err = loadCudaDriver())
      return fail(llvm::toString(std::move(err)));
    auto runtime = findCudaRuntime(argv[0]);
    if (!runtime)
      return fail(llvm::toString(runtime.takeError()));
    options.cudaRuntimePath = *runtime;
  }
  auto fn = CompiledFunction::compile(*module, entry, options);
  if (!fn)
    return fail(llvm::toString(fn.takeError()));
  return runIsolated(**fn, args);
}
