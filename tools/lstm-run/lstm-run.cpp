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
// The tool declares and checks its options; what it runs is runnerMain
// (lstm/Runner/RunnerMain.h), as mlir-runner's is JitRunnerMain.
//
//===----------------------------------------------------------------------===//

#include "lstm/Registration.h"
#include "lstm/Runner/RunnerMain.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

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

static cl::opt<unsigned>
    optLevel("opt-level",
             cl::desc("LLVM's optimisation level of the host code, 0-3 (as "
                      "lstm-compile: 3); lower levels compile faster"),
             cl::init(3), cl::cat(toolCategory));

static cl::opt<bool> runtimeChecks(
    "runtime-checks",
    cl::desc("Check the dynamic extents of the tensor ops at run time "
             "(lstm-generate-runtime-checks; the lstm ops check theirs "
             "regardless)"),
    cl::init(true), cl::cat(toolCategory));

// The CPU lowering, as lstm-compile's options of the same names.
static cl::OptionCategory cpuCategory("Options of --device=cpu");
static cl::opt<bool>
    blas("blas", cl::desc("Send the GEMMs to oneDNN (f32) and OpenBLAS (f64)"),
         cl::init(true), cl::cat(cpuCategory));
static cl::opt<int64_t> blasMinSize(
    "blas-min-size",
    cl::desc(
        "Smallest m*n*k*batch sent to the GEMM library; smaller GEMMs become "
        "loops"),
    cl::init(0), cl::cat(cpuCategory));
static cl::opt<bool> approximateMath(
    "approximate-math",
    cl::desc("f32 tanh, exp, log as vectorisable polynomials instead of "
             "libm calls"),
    cl::init(true), cl::cat(cpuCategory));
static cl::opt<int64_t> chunkBytes(
    "chunk-bytes",
    cl::desc("Compute each hoisted input projection this many bytes of "
             "steps a thread at a time, 0: whole "
             "(lstm-chunk-hoisted-projections)"),
    cl::init(lstm::LSTMToCPUOptions().chunkBytes), cl::cat(cpuCategory));
static cl::opt<int64_t> hoistMinThreads(
    "hoist-min-threads",
    cl::desc("The least number of threads that runs the hoisted input "
             "projections hoisted; fewer compute them in the steps "
             "(lstm-hoist-by-threads; 1 or less: always hoisted)"),
    cl::init(lstm::LSTMToCPUOptions().hoistMinThreads), cl::cat(cpuCategory));
static cl::opt<bool> splitBatch(
    "split-batch",
    cl::desc("Run each layer whose rows are independent on parts of its "
             "batch, a thread each, for the whole sequence "
             "(lstm-split-batch)"),
    cl::init(lstm::LSTMToCPUOptions().splitBatch), cl::cat(cpuCategory));
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
static cl::opt<bool> persistent(
    "persistent",
    cl::desc("Run each layer of a form lstm-to-persistent handles as one "
             "persistent kernel (fp32 arithmetic; operands rounded to bf16 "
             "under --compute-type=bf16)"),
    cl::init(false), cl::cat(gpuCategory));
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
                                  static_cast<cl::Option *>(&persistent),
                                  static_cast<cl::Option *>(&chip),
                                  static_cast<cl::Option *>(&features),
                                  static_cast<cl::Option *>(&cudaPath)})
      if (opt->getNumOccurrences())
        return fail("--" + opt->ArgStr + " applies to --device=cuda only");
  if (device == Device::CUDA)
    for (const cl::Option *opt : {static_cast<cl::Option *>(&blas),
                                  static_cast<cl::Option *>(&blasMinSize),
                                  static_cast<cl::Option *>(&approximateMath),
                                  static_cast<cl::Option *>(&chunkBytes),
                                  static_cast<cl::Option *>(&hoistMinThreads),
                                  static_cast<cl::Option *>(&splitBatch),
                                  static_cast<cl::Option *>(&threads)})
      if (opt->getNumOccurrences())
        return fail("--" + opt->ArgStr + " applies to --device=cpu only");

  if (chunkBytes < 0)
    return fail("--chunk-bytes=" + llvm::Twine(chunkBytes) +
                " is negative (0: whole projections)");

  if (optLevel > 3)
    return fail("--opt-level=" + llvm::Twine(optLevel) +
                " is not one of 0, 1, 2, 3");

  RunnerOptions options;
  options.argv0 = argv[0];
  options.inputFile = inputFile;
  options.entry = entry;
  options.inputs.assign(inputs.begin(), inputs.end());
  options.randomInputs = randomInputs;
  options.random.seed = seed;
  options.random.dynamicSize = dynamicSize;
  options.random.shapes.assign(shapes.begin(), shapes.end());
  options.outputs = outputs;
  options.repeat = repeat;
  options.jit.device = device;
  options.jit.prePasses = prePasses;
  options.jit.runtimeChecks = runtimeChecks;
  options.jit.optLevel = optLevel;
  options.jit.cpu.blas = blas;
  options.jit.cpu.blasMinSize = blasMinSize;
  options.jit.cpu.approximateMath = approximateMath;
  options.jit.cpu.chunkBytes = chunkBytes;
  options.jit.cpu.hoistMinThreads = hoistMinThreads;
  options.jit.cpu.splitBatch = splitBatch;
  options.jit.threads = threads;
  options.jit.nvvm.computeType = computeType;
  options.jit.nvvm.cublas = cublas;
  options.jit.nvvm.cublasMinSize = cublasMinSize;
  options.jit.nvvm.persistent = persistent;
  options.jit.nvvm.chip = chip;
  options.jit.nvvm.features = features;
  options.jit.nvvm.cudaPath = cudaPath;

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllLSTM(registry);
  return runnerMain(options, registry);
}
