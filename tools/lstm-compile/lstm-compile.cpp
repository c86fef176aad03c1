//===- lstm-compile.cpp - Compile an lstm module to a shared library ------===//
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
//===----------------------------------------------------------------------===//

#include "lstm/Pipelines/Pipelines.h"
#include "lstm/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("Output shared library"),
                                       cl::Required);
static cl::opt<std::string> target("target", cl::desc("cuda or cpu"),
                                   cl::init("cuda"));
static cl::opt<std::string> chip("chip", cl::desc("GPU architecture"),
                                 cl::init("sm_90"));
static cl::opt<std::string> features("features", cl::desc("PTX features"),
                                     cl::init("+ptx80"));
static cl::opt<std::string>
    cudaLibDir("cuda-lib-dir",
               cl::desc("Directory with libcuda.so (the driver or its stub)"),
               cl::init(LSTM_CUDA_STUBS_DIR));
static cl::opt<std::string>
    cudaPath("cuda-path",
             cl::desc("CUDA toolkit with ptxas and libdevice (default: the "
                      "one found when the project was configured)"));
static cl::opt<std::string> prePasses(
    "pre-passes",
    cl::desc("Passes to run on the lstm IR before lowering, as a textual "
             "pipeline (e.g. lstm-combine-gate-gemms)"),
    cl::init(""));
static cl::opt<std::string>
    computeType("compute-type",
                cl::desc("GEMM arithmetic on the GPU: fp32 (no TF32), tf32 "
                         "or bf16"),
                cl::init("fp32"));
static cl::opt<bool> cublas("cublas", cl::desc("Send the GEMMs to cuBLAS"),
                            cl::init(true));
static cl::opt<int64_t> cublasMinSize(
    "cublas-min-size",
    cl::desc("Smallest m*n*k*batch sent to cuBLAS; smaller GEMMs become "
             "generated kernels"),
    cl::init(0));
static cl::opt<bool> keepObject("keep-object",
                                cl::desc("Keep the intermediate object file"));

static int fail(const llvm::Twine &msg) {
  llvm::errs() << "lstm-compile: error: " << msg << "\n";
  return 1;
}

/// The directory of this executable's libraries (../lib next to bin/).
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

static llvm::Error emitObject(llvm::Module &module, llvm::StringRef path) {
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!t)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(
      t->createTargetMachine(triple, "generic", "", options, llvm::Reloc::PIC_,
                             std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(triple);
  if (auto err = makeOptimizingTransformer(3, 0, machine.get())(&module))
    return err;

  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, "cannot write " + path);
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the target cannot emit object files");
  pm.run(module);
  out.keep();
  return llvm::Error::success();
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "lstm-compile: compile an lstm module to a "
                              "shared library\n");
  if (target != "cuda" && target != "cpu")
    return fail("unknown target '" + target + "' (expected cuda or cpu)");

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  lstm::registerAllLSTM(registry);
  registerAllToLLVMIRTranslations(registry);
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

  // Every public function with a body gets the C interface.
  for (auto func : module->getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(&context));

  PassManager pm(&context);
  if (!prePasses.empty() &&
      failed(parsePassPipeline(prePasses, pm, llvm::errs())))
    return fail("malformed --pre-passes pipeline '" + prePasses + "'");
  if (target == "cuda") {
    lstm::LSTMToNVVMOptions options;
    options.chip = chip;
    options.features = features;
    options.cudaPath = cudaPath;
    options.computeType = computeType;
    options.cublas = cublas;
    options.cublasMinSize = cublasMinSize;
    lstm::buildLSTMToNVVMPipeline(pm, options);
  } else {
    lstm::buildLSTMToCPUPipeline(pm);
  }
  if (failed(pm.run(*module)))
    return fail("lowering failed");

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateModuleToLLVMIR(*module, llvmContext);
  if (!llvmModule)
    return fail("translation to LLVM IR failed");

  std::string object = outputFile + ".o";
  if (auto err = emitObject(*llvmModule, object))
    return fail(llvm::toString(std::move(err)));

  // Link with the system compiler driver, which knows the C runtime.
  auto cxx = llvm::sys::findProgramByName("c++");
  if (!cxx)
    return fail("no C++ compiler driver (c++) on PATH to link with");
  std::string libDir = libraryDir(argv[0]);
  std::vector<std::string> args = {*cxx, "-shared", "-o", outputFile, object};
  if (target == "cuda") {
    args.push_back("-Wl,--whole-archive");
    args.push_back(libDir + "/liblstm_cuda_runtime_static.a");
    args.push_back("-Wl,--no-whole-archive");
    args.push_back("-L" + cudaLibDir);
    args.push_back("-lcuda");
  } else {
    // memrefCopy and friends.
    args.push_back(std::string("-L") + LSTM_MLIR_LIB_DIR);
    args.push_back("-lmlir_c_runner_utils");
    args.push_back(std::string("-Wl,-rpath,") + LSTM_MLIR_LIB_DIR);
  }
  args.push_back("-lm");
  std::vector<llvm::StringRef> refs(args.begin(), args.end());
  std::string linkError;
  int rc =
      llvm::sys::ExecuteAndWait(*cxx, refs, std::nullopt, {}, 0, 0, &linkError);
  if (!keepObject)
    llvm::sys::fs::remove(object);
  if (rc != 0)
    return fail("linking " + outputFile + " failed" +
                (linkError.empty() ? "" : ": " + linkError));
  return 0;
}
