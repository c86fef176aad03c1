//===- lstm-compile.cpp - Compile an lstm module to a shared library ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//   lstm-compile FILE.mlir --target=cuda [--chip=sm_90] -o net.so
//   lstm-compile FILE.mlir --target=cpu -o net.so
//
// Lowers the module (--lstm-to-nvvm or --lstm-to-cpu), translates it to LLVM
// IR, optimises it, emits an object file and links it into a shared library
// with the C interface of every public function (`_mlir_ciface_NAME`, see
// docs/aot.md). For CUDA, the kernels are embedded as a fatbin and the
// project's CUDA runtime is linked in statically: the library needs only the
// CUDA driver (libcuda.so.1) where it runs, not MLIR.
//
// The work is done by lib/Compiler (lstm/Compiler/Compiler.h), which the C
// API and the Python package call in-process; this is its command line.
//
//===----------------------------------------------------------------------===//

#include "lstm/Compiler/Compiler.h"
#include "lstm/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
namespace cl = llvm::cl;

// Only these (and LLVM's --help, --version) are listed by --help: the
// tool links all of LLVM, whose backend options would bury them.
static cl::OptionCategory toolCategory("lstm-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required, cl::cat(toolCategory));
static cl::opt<std::string> outputFile("o", cl::desc("Output shared library"),
                                       cl::Required, cl::cat(toolCategory));
static cl::opt<std::string> target("target", cl::desc("cuda or cpu"),
                                   cl::init("cuda"), cl::cat(toolCategory));
static cl::opt<std::string> chip("chip", cl::desc("GPU architecture"),
                                 cl::init(lstm::kDefaultGpuChip.str()),
                                 cl::cat(toolCategory));
static cl::opt<std::string> features("features", cl::desc("PTX features"),
                                     cl::init(lstm::kDefaultPtxFeatures.str()),
                                     cl::cat(toolCategory));
static cl::opt<std::string>
    cudaLibDir("cuda-lib-dir",
               cl::desc("Directory with libcuda.so (the driver or its stub)"),
               cl::init(LSTM_CUDA_STUBS_DIR), cl::cat(toolCategory));
static cl::opt<std::string>
    cudaPath("cuda-path",
             cl::desc("CUDA toolkit with ptxas and libdevice (default: "
                      "$CUDA_HOME or $CUDA_PATH, else the one found when the "
                      "project was configured, else the one of ptxas on PATH)"),
             cl::cat(toolCategory));
static cl::opt<std::string> prePasses(
    "pre-passes",
    cl::desc("Passes to run on the lstm IR before lowering, as a textual "
             "pipeline (e.g. lstm-combine-gate-gemms)"),
    cl::init(""), cl::cat(toolCategory));
static cl::opt<lstm::GemmComputeType>
    computeType("compute-type", cl::desc("GEMM arithmetic on the GPU"),
                cl::init(lstm::GemmComputeType::fp32),
                lstm::gemmComputeTypeValues(), cl::cat(toolCategory));
static cl::opt<bool> splitTF32Gemms(
    "split-tf32-gemms",
    cl::desc("Under --compute-type=fp32, a sequence's products (hoisted "
             "input projections, the backward's products through the "
             "weights) on TF32 tensor cores with each operand split into "
             "two TF32 values (3xTF32, within fp32's tolerance); false: "
             "fp32 FMAs"),
    cl::init(lstm::CompileOptions().splitTF32Gemms), cl::cat(toolCategory));
static cl::opt<bool> cublas("cublas", cl::desc("Send the GEMMs to cuBLAS"),
                            cl::init(true), cl::cat(toolCategory));
static cl::opt<int64_t> cublasMinSize(
    "cublas-min-size",
    cl::desc("Smallest m*n*k*batch sent to cuBLAS; smaller GEMMs become "
             "generated kernels"),
    cl::init(0), cl::cat(toolCategory));
static cl::opt<bool> persistent(
    "persistent",
    cl::desc("Run each layer of a form lstm-to-persistent handles as one "
             "persistent kernel (fp32 FMAs, and tensor cores from the "
             "batch the cost model starts them at: TF32 or bf16 operands "
             "under --compute-type=tf32 or bf16, 3xTF32 under fp32)"),
    cl::init(false), cl::cat(toolCategory));
static cl::opt<bool> persistentTensorCores(
    "persistent-tensor-cores",
    cl::desc("With --persistent, the kernels' products on tensor cores "
             "(sm_80 and later; 3xTF32 under --compute-type=fp32); false: "
             "fp32 FMAs"),
    cl::init(true), cl::cat(toolCategory));
static cl::opt<int64_t> persistentSplitDepth(
    "persistent-split-depth",
    cl::desc("With the persistent kernels on tensor cores, how many warps "
             "split each tile's depth (a power of two; 1: none); 0: where "
             "a warp's weights would not fit its registers; -1 (chosen): as "
             "0 where the dot products' kernel does not reach the tensor "
             "cores' batches, else none"),
    cl::init(-1), cl::cat(toolCategory));
static cl::opt<bool> perStepFallback(
    "per-step-fallback",
    cl::desc("With --persistent, the per-step lowering beside each kernel "
             "for the batches and GPUs it does not run at; false compiles "
             "faster, and a run that needs it fails, saying so "
             "(lstmRuntimeNeedsPerStepFallback)"),
    cl::init(true), cl::cat(toolCategory));
static cl::opt<bool> persistentFirst(
    "persistent-first",
    cl::desc("With --persistent, the kernels lowered to NVVM before the rest "
             "of the lowering and serialised beside it (off: a shorter "
             "compile, but char-rnn's dot-product kernel measured 8% slower; "
             "docs/benchmarks.md)"),
    cl::init(false), cl::cat(toolCategory));
static cl::opt<bool> forwardThroughTrain(
    "forward-through-train",
    cl::desc("With --gradients, NAME calls NAME_train and drops the saved "
             "activations: the recurrence compiled twice, not three times; "
             "inference then stores the activations "
             "(lstm-differentiate{forward-through-train})"),
    cl::init(false), cl::cat(toolCategory));
static cl::opt<int64_t>
    streams("streams",
            cl::desc("The most GPU streams that independent products (a "
                     "backward's weight gradients) run on at once "
                     "(--target=cuda; 1: one stream)"),
            cl::init(4), cl::cat(toolCategory));
static cl::opt<bool> blas(
    "blas",
    cl::desc(
        "Send the GEMMs to oneDNN (f32) and OpenBLAS (f64) (--target=cpu)"),
    cl::init(true), cl::cat(toolCategory));
static cl::opt<int64_t> blasMinSize(
    "blas-min-size",
    cl::desc("Smallest m*n*k*batch sent to the GEMM library; smaller "
             "GEMMs become loops (--target=cpu)"),
    cl::init(0), cl::cat(toolCategory));
static cl::opt<bool> approximateMath(
    "approximate-math",
    cl::desc("f32 tanh, exp, log as vectorisable polynomials instead of "
             "libm calls (--target=cpu)"),
    cl::init(true), cl::cat(toolCategory));
static cl::opt<int64_t> chunkBytes(
    "chunk-bytes",
    cl::desc("Compute each hoisted input projection this many bytes of "
             "steps a thread at a time, 0: whole (--target=cpu; "
             "lstm-chunk-hoisted-projections)"),
    cl::init(lstm::CompileOptions().chunkBytes), cl::cat(toolCategory));
static cl::opt<int64_t> hoistMinThreads(
    "hoist-min-threads",
    cl::desc("The least number of threads that runs the hoisted input "
             "projections hoisted; fewer compute them in the steps "
             "(--target=cpu; lstm-hoist-by-threads; 1 or less: always "
             "hoisted)"),
    cl::init(lstm::CompileOptions().hoistMinThreads), cl::cat(toolCategory));
static cl::opt<bool> splitBatch(
    "split-batch",
    cl::desc("Run each layer whose rows are independent on parts of its "
             "batch, a thread each, for the whole sequence (--target=cpu; "
             "lstm-split-batch)"),
    cl::init(lstm::CompileOptions().splitBatch), cl::cat(toolCategory));
static cl::opt<std::string> hostCPU(
    "host-cpu",
    cl::desc("CPU of the host code: native (this machine's, with its vector "
             "extensions), generic, or an LLVM CPU name such as x86-64-v3 "
             "(default: native for --target=cpu, generic for cuda)"),
    cl::cat(toolCategory));
static cl::opt<unsigned> optLevel(
    "opt-level",
    cl::desc("LLVM's optimisation level of the host code, 0-3 (default: 3 "
             "for --target=cpu, 0 for cuda, whose host code only sequences "
             "launches); lower levels compile faster"),
    cl::init(3), cl::cat(toolCategory));
static cl::opt<bool>
    timing("timing",
           cl::desc("Report where the compile time goes on stderr: each pass "
                    "of the lowering, the translation to LLVM IR, the "
                    "kernels' GPU binary (ptxas included; for cuda, beside "
                    "the host object, so the wall times overlap), the host "
                    "object and the link"),
           cl::cat(toolCategory));
static cl::opt<bool> verifyEach(
    "verify-each",
    cl::desc("Verify the IR after every pass of the lowering, as lstm-opt "
             "does (default: after each stage; the pre-passes after every "
             "pass either way)"),
    cl::cat(toolCategory));
static cl::opt<unsigned> kernelThreads(
    "kernel-threads",
    cl::desc("Threads that serialise the kernels (--target=cuda), the "
             "kernels split among as many modules (default 0: one fewer "
             "than the cores, at least 2, at most 4, a module split only "
             "where one kernel is a quarter of it)"),
    cl::init(0), cl::cat(toolCategory));
static cl::opt<bool>
    keepObject("keep-object",
               cl::desc("Keep the intermediate object files (OUTPUT.o; "
                        "for cuda also OUTPUT.kernels.o)"),
               cl::cat(toolCategory));
static cl::opt<std::string>
    emitLLVM("emit-llvm",
             cl::desc("Also write the host code's LLVM IR (before "
                      "optimisation) to this file"),
             cl::value_desc("file"), cl::cat(toolCategory));
static cl::opt<bool> gradients(
    "gradients",
    cl::desc("Also export the gradient functions NAME_grad, NAME_train and "
             "NAME_backward of every public function with layers "
             "(lstm-combine-gate-gemms and lstm-differentiate before the "
             "pre-passes)"),
    cl::cat(toolCategory));
static cl::opt<bool> gradFunction(
    "grad-function",
    cl::desc("With --gradients, also NAME_grad (the training forward and the "
             "backward in one function); =false exports only NAME_train and "
             "NAME_backward, what a training step calls"),
    cl::init(true), cl::cat(toolCategory));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "lstm-compile: error: " << msg << "\n";
  return 1;
}

/// The directory of this executable's libraries (../lib next to bin/), where
/// the CUDA runtime is, in the build tree and installed alike.
static std::string libraryDir(const char *argv0) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&libraryDir));
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(exe));
  llvm::sys::path::remove_filename(dir); // bin/ -> prefix
  if (dir.empty())
    dir = ".";
  llvm::sys::path::append(dir, "lib");
  return std::string(dir);
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&toolCategory});
  cl::ParseCommandLineOptions(argc, argv,
                              "lstm-compile: compile an lstm module to a "
                              "shared library\n");
  lstm::CompileOptions options;
  options.target = target;
  options.chip = chip;
  options.features = features;
  options.cudaPath = cudaPath;
  options.cudaLibDir = cudaLibDir;
  options.runtimeLibDir = libraryDir(argv[0]);
  options.prePasses = prePasses;
  options.computeType = computeType;
  options.splitTF32Gemms = splitTF32Gemms;
  options.cublas = cublas;
  options.cublasMinSize = cublasMinSize;
  options.streams = streams;
  options.forwardThroughTrain = forwardThroughTrain;
  options.persistent = persistent;
  options.persistentTensorCores = persistentTensorCores;
  options.persistentSplitDepth = persistentSplitDepth;
  options.perStepFallback = perStepFallback;
  options.persistentFirst = persistentFirst;
  options.keepObject = keepObject;
  options.kernelThreads = kernelThreads;
  options.hostCPU = hostCPU;
  if (optLevel.getNumOccurrences())
    options.optLevel = optLevel;
  options.blas = blas;
  options.blasMinSize = blasMinSize;
  options.approximateMath = approximateMath;
  options.chunkBytes = chunkBytes;
  options.hoistMinThreads = hoistMinThreads;
  options.splitBatch = splitBatch;
  options.llvmIRPath = emitLLVM;
  options.timing = timing;
  options.verifyEachPass = verifyEach;
  options.gradients = gradients;
  options.gradFunction = gradFunction;
  if (auto err = lstm::verifyCompileOptions(options))
    return fail(llvm::toString(std::move(err)));
  // Its default is a CPU lowering's setting too: only the flag says it was
  // asked for.
  for (const cl::Option *opt : {static_cast<cl::Option *>(&hoistMinThreads),
                                static_cast<cl::Option *>(&splitBatch)})
    if (opt->getNumOccurrences() && options.target != "cpu")
      return fail("--" + opt->ArgStr + " applies to --target=cpu (got '" +
                  options.target + "')");

  DialectRegistry registry;
  registerAllDialects(registry);
  lstm::registerAllLSTM(registry);
  lstm::registerCompilerDependencies(registry);
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
    return 1;

  if (auto err = lstm::compileToSharedLibrary(*module, outputFile, options,
                                              llvm::errs()))
    return fail(llvm::toString(std::move(err)));
  return 0;
}
