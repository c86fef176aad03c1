//===- Lower.cpp - The lowering part of ahead-of-time compilation ---------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Compiler/Compiler.h"
#include "lstm/Dialect/LSTM/Transforms/Passes.h"
#include "lstm/Pipelines/Pipelines.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

using namespace mlir;

void lstm::registerCompilerDependencies(DialectRegistry &registry) {
  // The NVVM target attribute's serialisation, the GPU-to-LLVM interfaces and
  // the like are extensions; without them lstm-to-nvvm fails to lower.
  // The dialects too: an extension of a dialect that the registry lacks is
  // not applied when the dialect is loaded later in the pipeline.
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
}

llvm::Error lstm::verifyCompileOptions(const CompileOptions &options) {
  if (options.target != "cuda" && options.target != "cpu")
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown target '" + options.target +
                                       "' (expected cuda or cpu)");
  if (llvm::Expected<llvm::CodeGenOptLevel> level =
          codeGenOptLevel(options.hostOptLevel());
      !level)
    return level.takeError();
  // Persistent kernels are GPU code with fp32 products: asked for
  // elsewhere, the option would be ignored without a word.
  if (options.persistent && options.target != "cuda")
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "persistent kernels need target cuda (got '" + options.target + "')");
  if (options.kernelThreads != 0 && options.target != "cuda")
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "kernel threads apply to target cuda (got '" + options.target + "')");
  // The per-step fallback is the persistent kernels' only.
  if (!options.perStepFallback && !options.persistent)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "leaving out the per-step fallback needs the persistent kernels "
        "(--per-step-fallback=false without --persistent)");
  // Leaving out NAME_grad means something only where the gradient
  // functions are made.
  if (!options.gradFunction && !options.gradients)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "leaving out the grad function needs the gradient functions "
        "(--grad-function=false without --gradients)");
  if (options.forwardThroughTrain && !options.gradients)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "calling the training forward needs the gradient functions "
        "(--forward-through-train without --gradients)");
  if (options.chunkBytes < 0)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "chunk-bytes must be >= 0 (0: whole projections), got " +
            std::to_string(options.chunkBytes));
  // The chunks are the CPU lowering's: asked for the GPU, the option would
  // be ignored without a word.
  if (options.streams < 1)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "streams must be >= 1 (1: one stream), got " +
            std::to_string(options.streams));
  if (options.chunkBytes > 0 && options.target != "cpu")
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "chunk-bytes applies to target cpu (got '" +
                                       options.target + "')");
  return llvm::Error::success();
}

void lstm::addCInterfaces(ModuleOp module) {
  for (auto func : module.getOps<func::FuncOp>())
    if (func.isPublic() && !func.isExternal())
      func->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(),
                    UnitAttr::get(module.getContext()));
}

LogicalResult lstm::buildPrePassPipeline(OpPassManager &pm,
                                         const CompileOptions &options,
                                         raw_ostream &errorStream) {
  // The gradient functions are made from combined cells (one recurrent GEMM
  // per backward step), before whatever else the caller asks for.
  if (options.gradients) {
    pm.addPass(createLSTMCombineGateGemmsPass());
    LSTMDifferentiatePassOptions differentiate;
    differentiate.gradFunction = options.gradFunction;
    differentiate.forwardThroughTrain = options.forwardThroughTrain;
    pm.addPass(createLSTMDifferentiatePass(differentiate));
  }
  if (!options.prePasses.empty() &&
      failed(parsePassPipeline(options.prePasses, pm, errorStream)))
    return failure();
  return success();
}

static lstm::LSTMToNVVMOptions
nvvmOptions(const lstm::CompileOptions &options) {
  lstm::LSTMToNVVMOptions nvvm;
  nvvm.chip = options.chip;
  nvvm.features = options.features;
  nvvm.cudaPath = options.cudaPath;
  nvvm.cublas = options.cublas;
  nvvm.cublasMinSize = options.cublasMinSize;
  nvvm.computeType = options.computeType;
  nvvm.splitTF32Gemms = options.splitTF32Gemms;
  nvvm.persistent = options.persistent;
  nvvm.persistentTensorCores = options.persistentTensorCores;
  nvvm.persistentSplitDepth = options.persistentSplitDepth;
  nvvm.perStepFallback = options.perStepFallback;
  nvvm.persistentFirst = options.persistentFirst;
  nvvm.streams = options.streams;
  return nvvm;
}

void lstm::buildCudaLoweringPipelines(OpPassManager &buffers,
                                      OpPassManager &launches,
                                      OpPassManager &host,
                                      const CompileOptions &options) {
  buildLSTMToNVVMBuffersPipeline(buffers, nvvmOptions(options));
  buildLSTMToNVVMLaunchesPipeline(launches, nvvmOptions(options));
  buildLSTMToNVVMHostPipeline(host);
}

void lstm::buildLoweringPipeline(OpPassManager &pm,
                                 const CompileOptions &options) {
  if (options.target == "cuda") {
    buildLSTMToNVVMPipeline(pm, nvvmOptions(options));
  } else {
    LSTMToCPUOptions cpu;
    cpu.blas = options.blas;
    cpu.blasMinSize = options.blasMinSize;
    cpu.approximateMath = options.approximateMath;
    cpu.chunkBytes = options.chunkBytes;
    cpu.hoistMinThreads = options.hoistMinThreads;
    cpu.splitBatch = options.splitBatch;
    buildLSTMToCPUPipeline(pm, cpu);
  }
}
