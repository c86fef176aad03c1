//===- Compile.cpp - The whole of ahead-of-time compilation ---------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Compiler/Compiler.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
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

  // The report is printed when the manager goes, after the link.
  DefaultTimingManager timing;
  timing.setEnabled(options.timing);
  TimingScope root = timing.getRootScope();

  // The pre-passes first: the functions they add (the gradient functions)
  // are exported too.
  PassManager pre(context, ModuleOp::getOperationName());
  if (failed(buildPrePassPipeline(pre, options, pipelineErrors)))
    return makeError("malformed --pre-passes pipeline '" + options.prePasses +
                     "'");
  TimingScope preTiming = root.nest("pre-passes");
  pre.enableTiming(preTiming);
  if (failed(pre.run(module)))
    return makeError(options.gradients ? "the pre-passes or lstm-differentiate "
                                         "failed"
                                       : "the pre-passes failed");
  preTiming.stop();
  addCInterfaces(module);
  PassManager pm(context, ModuleOp::getOperationName());
  buildLoweringPipeline(pm, options);
  TimingScope loweringTiming = root.nest("lowering");
  pm.enableTiming(loweringTiming);
  if (failed(pm.run(module)))
    return makeError("lowering failed");
  loweringTiming.stop();

  TimingScope translateTiming = root.nest("translate to LLVM IR");
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  translateTiming.stop();
  if (!options.llvmIRPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.llvmIRPath, ec);
    if (ec)
      return makeError("cannot write " + options.llvmIRPath + ": " +
                       ec.message());
    llvmModule->print(os, nullptr);
  }

  std::string object = (output + ".o").str();
  std::string hostCPU = options.hostCPU;
  if (hostCPU.empty())
    hostCPU = options.target == "cpu" ? "native" : "generic";
  TimingScope objectTiming = root.nest("host object (LLVM)");
  if (auto err = emitObjectFile(*llvmModule, object, hostCPU))
    return err;
  objectTiming.stop();
  TimingScope linkTiming = root.nest("link");
  llvm::Error linked = linkSharedLibrary(object, output, options);
  linkTiming.stop();
  if (!options.keepObject)
    llvm::sys::fs::remove(object);
  return linked;
}
