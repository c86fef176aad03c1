//===- Compile.cpp - The whole of ahead-of-time compilation ---------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Compiler/Compiler.h"
#include "lstm/Pipelines/Pipelines.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <optional>

using namespace mlir;

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

unsigned lstm::CompileOptions::kernelModules() const {
  if (kernelThreads != 0)
    return kernelThreads;
  // The cores this process may use (its affinity mask), less the one that
  // lowers the host code meanwhile; two on a 2-core machine too, where a
  // persistent kernel's ptxas is the critical path and the other kernels'
  // beside it gain (splitKernelModules splits only such modules by
  // default).
  unsigned cores = llvm::hardware_concurrency().compute_thread_count();
  return std::clamp(cores, 3u, 5u) - 1;
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
  if (failed(checkNotLowered(module)))
    return makeError("the pre-passes lowered the module (the error above)");
  if (failed(checkFunctionNames(module)))
    return makeError("a function's name would take the compiled code's own "
                     "calls (the error above)");
  if (options.target == "cuda" &&
      failed(checkComputeType(module, options.computeType)))
    return makeError("the compute type does not apply to this network (the "
                     "error above)");
  addCInterfaces(module);

  // For cuda the kernels leave the module once they are in NVVM and are
  // serialised (NVPTX code generation and ptxas, the longest step) by
  // threads of their own, beside the lowering of the host code, its
  // translation and its object (KernelObject.cpp): the persistent kernels
  // as soon as the host code is in buffers, the others once they are
  // outlined, each set in as many modules as CompileOptions::kernelModules
  // gives, that many threads taking them largest first. Nothing else
  // touches a kernel module meanwhile; they share only the context, which
  // is made for use from several threads.
  bool splitKernels = options.target == "cuda";
  OwningOpRef<ModuleOp> kernels = ModuleOp::create(module.getLoc());
  SmallVector<std::string> kernelNames;
  // A module of its own for each kernel module.
  SmallVector<OwningOpRef<ModuleOp>> kernelParts;
  std::atomic<bool> serialised = true;
  std::optional<llvm::StdThreadPool> serialising;
  // Every return after the threads start waits for them first.
  auto joinAll = [&] {
    if (serialising)
      serialising->wait();
  };
  llvm::scope_exit joinKernels(joinAll);
  PassManager pm(context, ModuleOp::getOperationName());
  pm.enableVerifier(options.verifyEachPass);
  // Where the passes are not verified one by one, the module is verified
  // at the end of each stage, before anything reads it as valid.
  auto verifyStage = [&](StringRef stage) -> llvm::Error {
    if (options.verifyEachPass || succeeded(verify(module)))
      return llvm::Error::success();
    return makeError("the lowering made invalid IR (" + stage +
                     "; lstm-compile --verify-each names the pass that did)");
  };
  TimingScope loweringTiming = root.nest("lowering");
  // Splits the kernel modules in NVVM, moves them out and queues each for
  // serialisation.
  auto serialiseKernels = [&]() -> llvm::Error {
    splitKernelModules(module, options.kernelModules(),
                       /*onlyWithDominantKernel=*/options.kernelThreads == 0);
    FailureOr<SmallVector<std::string>> moved =
        moveKernelModules(module, *kernels);
    if (failed(moved))
      return makeError("lowering failed");
    llvm::append_range(kernelNames, *moved);
    auto gpuModules = llvm::to_vector(kernels->getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp gpuModule : gpuModules) {
      std::string label = "kernels (GPU binary, beside the host code's "
                          "lowering and object), module " +
                          gpuModule.getName().str();
      OwningOpRef<ModuleOp> &part =
          kernelParts.emplace_back(ModuleOp::create(gpuModule.getLoc()));
      gpuModule->moveBefore(part->getBody(), part->getBody()->end());
      TimingScope kernelTiming = root.nest(label);
      if (!serialising)
        serialising.emplace(
            llvm::hardware_concurrency(options.kernelModules()));
      serialising->async([&, partModule = part.get(),
                          kernelTiming = std::move(kernelTiming)]() mutable {
        PassManager kernelPM(context, ModuleOp::getOperationName());
        // Verified as part of the whole module before; what the pass
        // leaves is a gpu.binary.
        kernelPM.enableVerifier(options.verifyEachPass);
        buildKernelBinaryPipeline(kernelPM, options.cudaPath);
        kernelPM.enableTiming(kernelTiming);
        if (failed(kernelPM.run(partModule)))
          serialised = false;
      });
    }
    return llvm::Error::success();
  };
  if (splitKernels) {
    PassManager buffersPM(context, ModuleOp::getOperationName());
    PassManager launchesPM(context, ModuleOp::getOperationName());
    buffersPM.enableVerifier(options.verifyEachPass);
    launchesPM.enableVerifier(options.verifyEachPass);
    buildCudaLoweringPipelines(buffersPM, launchesPM, pm, options);
    // Every dialect that a pass here or a serialising thread loads, loaded
    // now: loading one while another thread builds IR in the same context
    // is a data race (it crashed one compile in three).
    PassManager binaryPM(context, ModuleOp::getOperationName());
    buildKernelBinaryPipeline(binaryPM, options.cudaPath);
    DialectRegistry dependencies;
    for (PassManager *manager : {&buffersPM, &launchesPM, &pm, &binaryPM})
      manager->getDependentDialects(dependencies);
    context->appendDialectRegistry(dependencies);
    for (StringRef name : dependencies.getDialectNames())
      context->getOrLoadDialect(name);
    // Runs one stage, timed under `label`, then serialises the kernels
    // that are in NVVM after it: with persistent-first the persistent
    // kernels (the longest to serialise) once the host code is in buffers,
    // beside the rest of the lowering; the others after it.
    auto lowerAndSerialise = [&](PassManager &stage, StringRef label,
                                 StringRef verified,
                                 bool serialise) -> llvm::Error {
      TimingScope stageTiming = loweringTiming.nest(label);
      stage.enableTiming(stageTiming);
      if (failed(stage.run(module)))
        return makeError("lowering failed");
      if (auto err = verifyStage(verified))
        return err;
      stageTiming.stop();
      return serialise ? serialiseKernels() : llvm::Error::success();
    };
    // (Without persistent-first nothing is in NVVM after the first stage.)
    if (auto err = lowerAndSerialise(
            buffersPM, "to buffers, the persistent kernels in NVVM",
            "the persistent kernels in NVVM",
            options.persistent && options.persistentFirst))
      return err;
    if (auto err = lowerAndSerialise(launchesPM, "to the kernels in NVVM",
                                     "the kernels in NVVM",
                                     /*serialise=*/true))
      return err;
  } else {
    buildLoweringPipeline(pm, options);
  }
  TimingScope hostTiming =
      splitKernels ? loweringTiming.nest("the host code") : TimingScope();
  pm.enableTiming(splitKernels ? hostTiming : loweringTiming);
  if (failed(pm.run(module)))
    return makeError("lowering failed");
  if (auto err = verifyStage(splitKernels ? "the host code" : "the lowering"))
    return err;
  hostTiming.stop();
  loweringTiming.stop();

  TimingScope translateTiming = root.nest("translate to LLVM IR");
  llvm::LLVMContext llvmContext;
  auto llvmModule = translateToLLVMIR(module, llvmContext);
  if (!llvmModule)
    return makeError("translation to LLVM IR failed");
  if (auto err = referToKernelObject(*llvmModule, kernelNames))
    return err;
  // The CPU runtime's guarded calls take one pointer.
  if (options.target == "cpu")
    addPackedEntryPoints(*llvmModule);
  translateTiming.stop();
  if (!options.llvmIRPath.empty()) {
    std::error_code ec;
    llvm::raw_fd_ostream os(options.llvmIRPath, ec);
    if (ec)
      return makeError("cannot write " + options.llvmIRPath + ": " +
                       ec.message());
    llvmModule->print(os, nullptr);
  }

  std::string hostCPU = options.hostCPU;
  if (hostCPU.empty())
    hostCPU = options.target == "cpu" ? "native" : "generic";
  SmallVector<std::string> objects = {(output + ".o").str()};
  TimingScope objectTiming = root.nest("host object (LLVM)");
  llvm::Error hostObject =
      emitObjectFile(*llvmModule, objects[0], hostCPU, options.hostOptLevel());
  objectTiming.stop();
  joinKernels.release();
  joinAll();
  // The serialised modules (gpu.binary ops) back in one module, in order.
  for (OwningOpRef<ModuleOp> &part : kernelParts)
    for (Operation &op :
         llvm::make_early_inc_range(part->getBody()->getOperations()))
      op.moveBefore(kernels->getBody(), kernels->getBody()->end());
  auto removeObjects = [&] {
    if (!options.keepObject)
      for (const std::string &object : objects)
        llvm::sys::fs::remove(object);
  };
  if (hostObject) {
    removeObjects();
    return hostObject;
  }
  if (!serialised) {
    removeObjects();
    return makeError("serialising the kernels (gpu-module-to-binary) failed");
  }
  if (!kernelNames.empty()) {
    TimingScope kernelObjectTiming = root.nest("kernel object");
    llvm::LLVMContext kernelContext;
    auto kernelModule = kernelObjectModule(*kernels, kernelContext);
    objects.push_back((output + ".kernels.o").str());
    llvm::Error written = kernelModule
                              ? emitObjectFile(**kernelModule, objects.back())
                              : kernelModule.takeError();
    if (written) {
      removeObjects();
      return written;
    }
  }

  TimingScope linkTiming = root.nest("link");
  llvm::Error linked = linkSharedLibrary(objects, output, options);
  linkTiming.stop();
  removeObjects();
  return linked;
}
