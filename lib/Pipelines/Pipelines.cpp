//===- Pipelines.cpp - Named pass pipelines of the project ----------------===//

#include "lstm/Pipelines/Pipelines.h"

#include "lstm/Conversion/Passes.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void lstm::buildLSTMToCPUPipeline(OpPassManager &pm) {
  // Tensor level: the dialect to linalg/scf, pointwise arith/math to linalg,
  // then fuse the pointwise generics of each step.
  pm.addPass(createConvertLSTMToLinalgPass());
  pm.addPass(createConvertElementwiseToLinalgPass());
  pm.addPass(createLinalgElementwiseOpFusionPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());

  // Buffers: whole-module one-shot bufferization with identity layouts at
  // function boundaries (the runner passes plain strided descriptors), then
  // ownership-based deallocation.
  bufferization::OneShotBufferizePassOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // The recurrent state is a fresh tensor each step.
  bufferization.allowReturnAllocsFromLoops = true;
  bufferization.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  bufferization::buildBufferDeallocationPipeline(pm);
  // Deallocation leaves bufferization.clone where ownership is unknown.
  pm.addPass(createConvertBufferizationToMemRefPass());

  // Loops and the LLVM dialect.
  pm.addPass(createConvertLinalgToLoopsPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createConvertMathToLLVMPass());
  // What has no LLVM intrinsic (tanh) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
}

void lstm::registerLSTMPipelines() {
  PassPipelineRegistration<>(
      "lstm-to-cpu",
      "Lower the lstm dialect through linalg, bufferization and loops to the "
      "LLVM dialect for the CPU",
      buildLSTMToCPUPipeline);
}
