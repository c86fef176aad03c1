//===- Compile.cpp - The whole of ahead-of-time compilation ---------------===//

#include "lstm/Compiler/Compiler.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

llvm::Error lstm::compileToSharedLibrary(ModuleOp module, StringRef output,
                                         const CompileOptions &options,
                                         raw_ostream &pipelineErrors) {
  if (auto err = verifyCompileOptions(options))
    return err;
  MLIRContext *context = module.getContext();
  // Callers that made the context themselves (the C API, lstm-compile) need
  // not know which extensions and translations the lowering uses.
  DialectRegistry registry;
  registerCompilerDependencies(registry);
  context->appendDialectRegistry(registry);

  addCInterfaces(module);
  PassManager pm(context, ModuleOp::getOperationName());
  if (failed(buildLoweringPipeline(pm, options, pipelineErrors)))
    return makeError("malformed --pre-passes pipeline '" + options.prePasses +
                     "'");
  if (failed(pm.run(module)))
    return makeError("lowering failed");

  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");

  std::string object = (output + ".o").str();
  if (auto err = emitObjectFile(*llvmModule, object))
    return err;
  llvm::Error linked = linkSharedLibrary(object, output, options);
  if (!options.keepObject)
    llvm::sys::fs::remove(object);
  return linked;
}
