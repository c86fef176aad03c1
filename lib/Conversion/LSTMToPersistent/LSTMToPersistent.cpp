//===- LSTMToPersistent.cpp - A layer's time loop as one kernel -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The per-step lowering launches a GEMM and a fused kernel per step, from a
// loop on the host; at small batch each step is a few microseconds of launch
// latency around less work. Here the loop runs inside one kernel instead:
// every block computes its tile of units for every step, and the blocks meet
// at a grid-wide barrier between steps (the next step's products read every
// unit's state). The kernel is built from the cell's IR: the pointwise
// region is cloned into it, and the product columns it reads are computed
// where they are read. See the pass's description (Passes.td) for what it
// handles.
//
// This file: the pass and the conversion of a layer or of a stack's
// branch (the cost model's choices: PersistentCostModel.cpp). The kernel's
// layout and host side are PersistentKernelBuilder.cpp's, its body
// PersistentKernel.cpp's, its products PersistentProducts.cpp's (on tensor
// cores PersistentTensorCores.cpp's); a stack's kernel PersistentStack.cpp's.
//
//===----------------------------------------------------------------------===//
#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"

#include "PersistentCostModel.h"
#include "PersistentFallback.h"
#include "PersistentKernelBuilder.h"
#include "PersistentStack.h"

#include "lstm/Conversion/LSTMToLinalg/LSTMToLinalg.h"
#include "lstm/Conversion/NarrowKernelIndices/NarrowKernelIndices.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <memory>
#include <optional>

#define DEBUG_TYPE "lstm-to-persistent"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTLSTMTOPERSISTENTPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// Where `builder` computes on tensor cores and smaller batches take a
/// kernel of dot products: puts `layer` into the then branch of an `scf.if`
/// on `batch` >= its tensorCoresFrom, whose results replace the layer's, a
/// copy of it into the else branch, and returns the copy; else null.
static LayerOp splitOnTensorCores(RewriterBase &rewriter, LayerOp layer,
                                  const PersistentKernelBuilder &builder,
                                  Value batch,
                                  const PersistentOptions &options) {
  if (!builder.usesTensorCores())
    return LayerOp();
  int64_t fromBatch = builder.tensorCoresFrom(options);
  if (fromBatch <= 1)
    return LayerOp();
  Location loc = layer.getLoc();
  rewriter.setInsertionPoint(layer);
  Value large = tensorCoresRun(rewriter, loc, batch, fromBatch);
  auto split = scf::IfOp::create(rewriter, loc, layer->getResultTypes(), large,
                                 /*withElseRegion=*/true);
  rewriter.replaceUsesWithIf(
      layer->getResults(), split.getResults(),
      [&](OpOperand &use) { return !split->isAncestor(use.getOwner()); });
  rewriter.setInsertionPointToStart(split.elseBlock());
  auto copy = cast<LayerOp>(rewriter.clone(*layer));
  scf::YieldOp::create(rewriter, loc, copy->getResults());
  rewriter.setInsertionPointToStart(split.thenBlock());
  auto yield = scf::YieldOp::create(rewriter, loc, layer->getResults());
  rewriter.moveOpBefore(layer, yield);
  return copy;
}

/// The kernel of dot products for the batches under the tensor cores'
/// (splitOnTensorCores's copy of a layer).
static void buildDotProductKernel(RewriterBase &rewriter, LayerOp copy,
                                  StringRef kernelName,
                                  const PersistentOptions &options) {
  FailureOr<PersistentPlan> plan = planPersistentLayer(copy);
  assert(succeeded(plan) && "a copy of a layer that had a plan");
  PersistentOptions dots = options;
  dots.tensorCores = false;
  PersistentKernelBuilder(rewriter, *plan,
                          resolveBlockSize(rewriter, *plan, dots))
      .build(kernelName);
}

/// `builder`'s kernel of `layer`, and under the tensor cores' batch a
/// kernel of dot products.
static void buildLayerKernels(RewriterBase &rewriter, LayerOp layer,
                              PersistentKernelBuilder &builder,
                              StringRef kernelName,
                              const PersistentOptions &options) {
  rewriter.setInsertionPoint(layer);
  Value batch = tensor::DimOp::create(rewriter, layer.getLoc(),
                                      layer.getInputs().front(), int64_t{1});
  if (LayerOp copy =
          splitOnTensorCores(rewriter, layer, builder, batch, options))
    buildDotProductKernel(rewriter, copy, (kernelName + "_dots").str(),
                          options);
  builder.build(kernelName);
}

LogicalResult
mlir::lstm::convertLayerToPersistentKernel(RewriterBase &rewriter,
                                           LayerOp layer, StringRef kernelName,
                                           const PersistentOptions &options) {
  FailureOr<PersistentPlan> plan = planPersistentLayer(layer);
  if (failed(plan))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  PersistentKernelBuilder builder(rewriter, *plan,
                                  resolveBlockSize(rewriter, *plan, options));
  if (!options.costModel) {
    buildLayerKernels(rewriter, layer, builder, kernelName, options);
    return success();
  }
  int64_t maxBatch = builder.costModelMaxBatch();
  if (maxBatch < 1) {
    LLVM_DEBUG(llvm::dbgs() << "lstm-to-persistent: " << layer.getLoc()
                            << ": not persistent: the cost model prefers the "
                               "per-step lowering (weights not in registers "
                               "or too much work per row)\n");
    return failure();
  }
  // The batch size is known at run time only: both lowerings, chosen by
  // it. The per-step copy goes to the else branch, the layer itself to the
  // then branch, where it becomes the kernel.
  Location loc = layer.getLoc();
  rewriter.setInsertionPoint(layer);
  Value batch = tensor::DimOp::create(rewriter, loc, layer.getInputs().front(),
                                      int64_t{1});
  Value chosen = kernelRuns(rewriter, layer, builder, batch, maxBatch);
  auto choice = scf::IfOp::create(rewriter, loc, layer->getResultTypes(),
                                  chosen, /*withElseRegion=*/true);
  rewriter.replaceAllUsesWith(layer->getResults(), choice.getResults());
  rewriter.setInsertionPointToStart(choice.elseBlock());
  // Above the register kernel's batch, the kernel that reads its weights
  // from memory where it runs to a larger one, in a branch of its own.
  std::optional<PersistentOptions> wide =
      memoryWeightsKernel(rewriter, *plan, options, builder);
  scf::IfOp second;
  if (wide) {
    auto copy = cast<LayerOp>(rewriter.clone(*layer));
    FailureOr<PersistentPlan> copyPlan = planPersistentLayer(copy);
    assert(succeeded(copyPlan) && "a copy of a layer that had a plan");
    PersistentKernelBuilder memory(rewriter, *copyPlan, *wide);
    rewriter.setInsertionPoint(copy);
    Value runs =
        kernelRuns(rewriter, copy, memory, batch, memory.costModelMaxBatch());
    second = scf::IfOp::create(rewriter, loc, layer->getResultTypes(), runs,
                               /*withElseRegion=*/true);
    scf::YieldOp::create(rewriter, loc, second.getResults());
    rewriter.setInsertionPointToStart(second.thenBlock());
    auto yield = scf::YieldOp::create(rewriter, loc, copy->getResults());
    rewriter.moveOpBefore(copy, yield);
    memory.build((kernelName + "_memory").str());
    rewriter.setInsertionPointToStart(second.elseBlock());
  }
  Operation *perStep = rewriter.clone(*layer);
  rewriter.modifyOpInPlace(perStep, [&] {
    perStep->setAttr(kPerStepFallbackAttr, rewriter.getUnitAttr());
  });
  scf::YieldOp::create(
      rewriter, loc,
      persistent::perStepFallbackResults(rewriter, loc, cast<LayerOp>(perStep),
                                         options.perStepFallback));
  rewriter.setInsertionPointToStart(choice.thenBlock());
  auto yield = scf::YieldOp::create(rewriter, loc, layer->getResults());
  rewriter.moveOpBefore(layer, yield);
  buildLayerKernels(rewriter, layer, builder, kernelName, options);
  return success();
}

/// The batch to which a layer of a stack branch that lstm-wavefront kept
/// below `branchBound` runs its own kernel (`builder`) where every layer's
/// kernel runs on tensor cores in 3xTF32 (onTensorCoresAgainstFp32Gemms):
/// lstm-wavefront's bound (the dot products', under the default options)
/// gives way to 3/8 of the kernel's own, its bound against the per-step
/// lowering, as the wavefront runs the layers' steps together. Measured on
/// the H200 (docs/benchmarks.md, "Where the 3xTF32 kernel starts"),
/// appleyard's four layers of H = 512 (their bound 128), where the
/// branch's bound was 16, beat the wavefront at B = 17 to 48 (2.28 against
/// 2.94 ms at 17, 4.02 against 4.14 at 48) and lost 5% at 64.
static int64_t tensorCoreLayerBound(const PersistentKernelBuilder &builder,
                                    int64_t branchBound) {
  return std::max(branchBound, builder.costModelMaxBatch() * 3 / 8);
}

/// Whether every builder's kernel runs on tensor cores in 3xTF32, against
/// a wavefront of fp32 GEMMs. Against TF32's and bf16's, three times
/// faster, appleyard's layers on tensor cores lost at B = 64 in TF32 (2.60
/// against 1.91 ms, where they won at 32: 1.89 against 2.17) and at 32 in
/// bf16 (2.01 against 1.46; docs/benchmarks.md, "The cost model's bounds
/// on tensor cores"): there the branch's bound holds.
static bool onTensorCoresAgainstFp32Gemms(
    ArrayRef<std::unique_ptr<PersistentKernelBuilder>> builders,
    const PersistentOptions &options) {
  return options.splitTF32 && !options.bf16Operands &&
         llvm::all_of(builders, [](auto &b) { return b->usesTensorCores(); });
}

/// The builders of the kernels that `layers` get as layers of their own
/// (resolveBlockSize); empty where a layer has none or, under the cost
/// model, where one never runs.
static SmallVector<std::unique_ptr<PersistentKernelBuilder>>
layerBuilders(RewriterBase &rewriter, ArrayRef<LayerOp> layers,
              const PersistentOptions &options) {
  SmallVector<std::unique_ptr<PersistentKernelBuilder>> builders;
  for (LayerOp layer : layers) {
    FailureOr<PersistentPlan> plan = planPersistentLayer(layer);
    if (failed(plan))
      return {};
    builders.push_back(std::make_unique<PersistentKernelBuilder>(
        rewriter, *plan, resolveBlockSize(rewriter, *plan, options)));
    if (options.costModel && builders.back()->costModelMaxBatch() < 1)
      return {};
  }
  return builders;
}

int64_t mlir::lstm::chooseStackBranchBound(ArrayRef<LayerOp> layers,
                                           int64_t branchBound,
                                           const PersistentOptions &options) {
  if (layers.empty())
    return 0;
  if (options.stacks) {
    SmallVector<StackChoice> stacks = chooseStacks(layers, options);
    if (stacks.size() == 1 && stacks.front().layers.size() == layers.size())
      return stacks.front().maxBatch;
  }
  // The builders only read the plans here; they build nothing.
  IRRewriter rewriter(layers.front()->getContext());
  SmallVector<std::unique_ptr<PersistentKernelBuilder>> builders =
      layerBuilders(rewriter, layers, options);
  if (builders.empty())
    return 0;
  bool tensorCores = onTensorCoresAgainstFp32Gemms(builders, options);
  int64_t most = std::numeric_limits<int64_t>::max();
  for (auto &builder : builders)
    most = std::min(most,
                    tensorCores
                        ? tensorCoreLayerBound(*builder, branchBound)
                        : std::min(branchBound, builder->costModelMaxBatch()));
  return most;
}

/// The layers of a stack that lstm-wavefront{persistent=true} put in the
/// then branch of `stack` (its else branch runs them as the wavefront):
/// they become one kernel (convertWholeStack) or, where they do not form a
/// chain it runs, their own kernels, without a per-step copy; the kernels'
/// run-time conditions join the branch's. Fails, changing nothing, where a
/// layer has no kernel or the branch condition is not the batch size's
/// bound that lstm-wavefront made.
static LogicalResult convertStack(RewriterBase &rewriter, scf::IfOp stack,
                                  function_ref<std::string()> nextKernelName,
                                  const PersistentOptions &options) {
  auto bound = stack.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!bound || bound.getPredicate() != arith::CmpIPredicate::ule)
    return failure();
  Value batch = bound.getLhs();
  SmallVector<LayerOp> layers(stack.thenBlock()->getOps<LayerOp>());
  OpBuilder::InsertionGuard guard(rewriter);
  // The wavefront's results in buffers like the kernels' (see
  // copiesInNewBuffers).
  auto copyWavefrontResults = [&] {
    Operation *elseYield = stack.elseBlock()->getTerminator();
    rewriter.setInsertionPoint(elseYield);
    SmallVector<Value> copies = persistent::copiesInNewBuffers(
        rewriter, stack.getLoc(), elseYield->getOperands());
    rewriter.modifyOpInPlace(elseYield,
                             [&] { elseYield->setOperands(copies); });
  };
  // The stack as one kernel, its run-time conditions joining the branch's.
  Value stackRuns;
  if (options.stacks &&
      succeeded(convertWholeStack(rewriter, layers, stack, batch, stackRuns,
                                  nextKernelName, options))) {
    // The kernel's own run-time conditions replace the branch's bound:
    // lstm-wavefront judged the chain under the default options, before the
    // compute type is known, and a kernel on tensor cores runs to a larger
    // batch than the dot products (the latency stack's TF32 kernel beat the
    // wavefront to B = 64, 0.47-1.30 ms against 1.78-2.23, where the
    // wavefront ran from B = 16: docs/benchmarks.md, "The cost model's
    // bounds on tensor cores"). Without tensor cores the two bounds are the
    // same.
    // Without the cost model (`always`) the kernel runs at every batch.
    rewriter.modifyOpInPlace(stack, [&] {
      stack.getConditionMutable().assign(stackRuns);
      stack->removeAttr(kPersistentStackAttr);
    });
    if (bound->use_empty())
      rewriter.eraseOp(bound);
    copyWavefrontResults();
    return success();
  }
  SmallVector<std::unique_ptr<PersistentKernelBuilder>> builders =
      layerBuilders(rewriter, layers, options);
  if (builders.empty())
    return failure();
  rewriter.setInsertionPoint(stack);
  // Without the cost model (`always`) the kernels run at every batch size.
  Value chosen = arith::ConstantIntOp::create(rewriter, stack.getLoc(), 1, 1);
  if (options.costModel) {
    // In 3xTF32 the kernels' own bounds replace the branch's
    // (tensorCoreLayerBound); else both hold.
    std::optional<int64_t> branchBound = getConstantIntValue(bound.getRhs());
    bool tensorCores =
        branchBound && onTensorCoresAgainstFp32Gemms(builders, options);
    if (!tensorCores)
      chosen = stack.getCondition();
    for (auto [layer, builder] : llvm::zip(layers, builders)) {
      int64_t most = tensorCores ? tensorCoreLayerBound(*builder, *branchBound)
                                 : builder->costModelMaxBatch();
      chosen = arith::AndIOp::create(
          rewriter, stack.getLoc(), chosen,
          kernelRuns(rewriter, layer, *builder, batch, most));
    }
  }
  rewriter.modifyOpInPlace(stack, [&] {
    stack.getConditionMutable().assign(chosen);
    stack->removeAttr(kPersistentStackAttr);
  });
  if (bound->use_empty())
    rewriter.eraseOp(bound);
  copyWavefrontResults();
  // Each layer's kernel as a layer of its own gets it: on tensor cores
  // from their batch, of dot products below (appleyard's layers, H = 512,
  // ran 3xTF32 at every batch before: 1.80 ms at B = 1 against 0.81 for
  // the dot products; docs/benchmarks.md, "Where the 3xTF32 kernel
  // starts").
  for (auto [layer, builder] : llvm::zip(layers, builders))
    buildLayerKernels(rewriter, layer, *builder, nextKernelName(), options);
  return success();
}

namespace {
struct ConvertLSTMToPersistentPass
    : lstm::impl::ConvertLSTMToPersistentPassBase<ConvertLSTMToPersistentPass> {
  using Base::Base;

  // A module pass: the cost model's choice calls the runtime, declared in
  // the module.
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if ((blockSize != 0 &&
         (blockSize < kLanes || blockSize > 1024 || blockSize % kLanes != 0)) ||
        maxBlocks < 1) {
      module.emitError("lstm-to-persistent: block-size must be 0 (chosen per "
                       "layer) or a multiple of 32 in [32, 1024], and "
                       "max-blocks at least 1");
      return signalPassFailure();
    }
    // One float of a staged row at least; the launch takes the size as an
    // i32.
    if (sharedMemory < int64_t(sizeof(float)) ||
        sharedMemory > std::numeric_limits<int32_t>::max()) {
      module.emitError("lstm-to-persistent: shared-memory must be in [4, " +
                       Twine(std::numeric_limits<int32_t>::max()) +
                       "] bytes, got " + Twine(sharedMemory));
      return signalPassFailure();
    }
    if (unitsAtOnce != 0 && unitsAtOnce != 1 && unitsAtOnce != 2 &&
        unitsAtOnce != 4) {
      module.emitError("lstm-to-persistent: units-at-once must be 0 (chosen "
                       "by the layout), 1, 2 or 4, got " +
                       Twine(unitsAtOnce));
      return signalPassFailure();
    }
    if (tensorCoresFromBatch < 0) {
      module.emitError("lstm-to-persistent: tensor-cores-from-batch must be "
                       "0 (chosen) or a batch size, got " +
                       Twine(tensorCoresFromBatch));
      return signalPassFailure();
    }
    if (tensorCoresSplitDepth < -1 || tensorCoresSplitDepth > 32 ||
        !llvm::isPowerOf2_64(std::max<int64_t>(tensorCoresSplitDepth, 1))) {
      module.emitError("lstm-to-persistent: tensor-cores-split-depth must be "
                       "-1 (chosen), 0 (to fit) or a power of two up to 32, "
                       "got " +
                       Twine(tensorCoresSplitDepth));
      return signalPassFailure();
    }
    if (splitTF32 && bf16Operands) {
      module.emitError("lstm-to-persistent: split-tf32 splits TF32 "
                       "operands; bf16-operands asks for bf16 ones");
      return signalPassFailure();
    }
    PersistentOptions options;
    options.blockSize = blockSize;
    options.unitsAtOnce = unitsAtOnce;
    options.maxBlocks = maxBlocks;
    options.costModel = !always;
    options.asyncCopies = asyncCopies;
    options.sharedMemory = sharedMemory;
    options.stacks = stacks;
    options.rowTiles = rowTiles;
    options.perStepFallback = perStepFallback;
    options.bf16Operands = bf16Operands;
    options.tensorCores = tensorCores;
    options.splitTF32 = splitTF32;
    options.tensorCoresFromBatch = tensorCoresFromBatch;
    options.tensorCoresSplitDepth = tensorCoresSplitDepth;
    IRRewriter rewriter(&getContext());
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      unsigned n = 0;
      auto kernelName = [&] {
        return (kPersistentKernelPrefix + "_" + func.getSymName() + "_" +
                Twine(n))
            .str();
      };
      // Stacks first: their layers then are kernels, which the walk below
      // does not see.
      SmallVector<scf::IfOp> stacks;
      func.walk([&](scf::IfOp op) {
        if (op->hasAttr(kPersistentStackAttr))
          stacks.push_back(op);
      });
      auto nextKernelName = [&] {
        std::string name = kernelName();
        ++n;
        return name;
      };
      for (scf::IfOp stack : stacks)
        (void)convertStack(rewriter, stack, nextKernelName, options);
      SmallVector<LayerOp> layers;
      func.walk([&](LayerOp layer) {
        if (!layer->hasAttr(kPerStepFallbackAttr))
          layers.push_back(layer);
      });
      if (options.stacks)
        layers = convertStackKernels(rewriter, layers, nextKernelName, options);
      for (LayerOp layer : layers)
        if (succeeded(convertLayerToPersistentKernel(rewriter, layer,
                                                     kernelName(), options)))
          ++n;
    }
  }
};
} // namespace
