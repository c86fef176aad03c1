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
// This file: the pass, the cost model's choice between a kernel and the
// per-step lowering (or the wavefront) at run time, and the conversion of
// a layer or of a stack's branch. The kernel's layout and host side are
// PersistentKernelBuilder.cpp's, its body PersistentKernel.cpp's, its
// products PersistentProducts.cpp's; a stack's kernel PersistentStack.cpp's.
//
//===----------------------------------------------------------------------===//
#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"

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
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "llvm/Support/Debug.h"

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

/// `options` with the block size chosen where it is 0: 512 threads, or
/// kFewerThreads where a warp's weights fill more than half of what a
/// 512-thread block leaves a lane (it then takes its rows one at a time)
/// or do not fit there at all: with fewer threads a lane may use more
/// registers. At H = 512 the kernels stopped spilling (ptxas: 76-152 bytes
/// before) and ran 17-19% faster at batch 1, where the larger blocks stay
/// ahead at H = 128; at H = 1024 (128 weights a lane) the warps keep their
/// weights at all, and the layer runs 2.8x faster than the per-step
/// lowering at batch 1 (docs/benchmarks.md).
static PersistentOptions resolveBlockSize(RewriterBase &rewriter,
                                          const PersistentPlan &plan,
                                          PersistentOptions options) {
  if (options.blockSize != 0)
    return options;
  options.blockSize = kDefaultBlockSize;
  // The builders only read the plan here; they build nothing.
  PersistentKernelBuilder wide(rewriter, plan, options);
  PersistentOptions fewer = options;
  fewer.blockSize = kFewerThreads;
  PersistentKernelBuilder narrow(rewriter, plan, fewer);
  if (wide.takesRowsOneAtATime())
    options.blockSize = kFewerThreads;
  else if (!wide.usesRegisters()) {
    if (narrow.usesRegisters())
      options.blockSize = kFewerThreads;
  } else if (narrow.unitsAtOnceCount() > wide.unitsAtOnceCount()) {
    options.blockSize = kFewerThreads;
  }
  return options;
}

/// Where `registers` (the kernel resolveBlockSize chose, `options` as given)
/// keeps its weights in registers only in 256-thread blocks: the options of
/// the kernel of 512-thread blocks whose warps read them from memory at
/// every step, if the cost model runs it to a larger batch (H = 1024: the
/// register kernel to B = 4, this one to 16; docs/benchmarks.md, "Weights
/// read from memory"). The layer then gets both, and the per-step lowering
/// above the second's batch.
static std::optional<PersistentOptions>
memoryWeightsKernel(RewriterBase &rewriter, const PersistentPlan &plan,
                    const PersistentOptions &options,
                    const PersistentKernelBuilder &registers) {
  if (options.blockSize != 0 || !registers.usesRegisters() ||
      registers.threadsPerBlock() != kFewerThreads)
    return std::nullopt;
  PersistentOptions wide = options;
  wide.blockSize = kDefaultBlockSize;
  PersistentKernelBuilder memory(rewriter, plan, wide);
  if (memory.usesRegisters() ||
      memory.costModelMaxBatch() <= registers.costModelMaxBatch())
    return std::nullopt;
  return wide;
}

PersistentChoice
mlir::lstm::choosePersistent(LayerOp layer, const PersistentOptions &options) {
  PersistentChoice choice;
  FailureOr<PersistentPlan> plan = planPersistentLayer(layer, &choice.reason);
  if (failed(plan))
    return choice;
  // The builder only reads the plan here; it builds nothing.
  IRRewriter rewriter(layer.getContext());
  PersistentKernelBuilder builder(rewriter, *plan,
                                  resolveBlockSize(rewriter, *plan, options));
  choice.maxBatch = builder.costModelMaxBatch();
  choice.rowsOneAtATime = builder.takesRowsOneAtATime();
  if (std::optional<PersistentOptions> wide =
          memoryWeightsKernel(rewriter, *plan, options, builder))
    choice.maxBatch =
        PersistentKernelBuilder(rewriter, *plan, *wide).costModelMaxBatch();
  if (choice.maxBatch >= 1)
    return choice;
  if (builder.unitsPerWarpCount() != 1)
    choice.reason = "the cost model: a warp would take " +
                    std::to_string(builder.unitsPerWarpCount()) +
                    " units, reading their weights from memory, the "
                    "per-step GEMMs are faster";
  else
    choice.reason = "the cost model: a step of one row is more work than "
                    "the kernel beats the per-step GEMMs at";
  return choice;
}

/// Calls the CUDA runtime's `name` (lstm/Runtime/CudaRuntime.h: a property
/// of the current GPU, an i32), declared in `at`'s module once; the result
/// as an index.
static Value queryRuntime(RewriterBase &rewriter, Operation *at,
                          StringRef name) {
  func::FuncOp fn = persistent::declareRuntimeFunction(
      rewriter, at->getParentOfType<ModuleOp>(), name,
      rewriter.getFunctionType({}, {rewriter.getI32Type()}));
  return arith::IndexCastOp::create(
      rewriter, at->getLoc(), rewriter.getIndexType(),
      func::CallOp::create(rewriter, at->getLoc(), fn, ValueRange())
          .getResult(0));
}

/// Whether every buffer of the kernels of `builders` spans fewer elements
/// than lstm-narrow-kernel-indices lets a kernel with 32-bit indices take:
/// at most (T + 1) · B · W, W the widest row of a sequence (the product of
/// a tensor's dimensions after its first two, the [T, B] ones), of a
/// batch-sized tensor (its static dimensions) and of the kernel's own [2,
/// B, N] buffers. Every row a kernel reads or writes has a static width
/// (planPersistentLayer rejects a slice of a dynamic one), so the static
/// dimensions bound it. A static tensor (a weight) that large is never on
/// chip; it makes the condition false.
static Value indexableSequences(RewriterBase &rewriter, Location loc,
                                ArrayRef<PersistentKernelBuilder *> builders,
                                Value batch) {
  int64_t widest = 1;
  bool bounded = true;
  for (PersistentKernelBuilder *builder : builders) {
    widest = std::max(widest, builder->stateWidth());
    Operation *layer = builder->kernelLayer();
    SmallVector<Type> types(layer->getOperandTypes());
    llvm::append_range(types, layer->getResultTypes());
    for (Type type : types) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor)
        continue;
      if (tensor.hasStaticShape()) {
        bounded &= tensor.getNumElements() < kNarrowIndexLimit;
        continue;
      }
      int64_t row = 1;
      ArrayRef<int64_t> shape = tensor.getShape();
      for (int64_t d = tensor.getRank() >= 3 ? 2 : 0; d < tensor.getRank(); ++d)
        if (!ShapedType::isDynamic(shape[d]))
          row *= shape[d];
      widest = std::max(widest, row);
    }
  }
  // The batch is dimension 1 of the first layer's input sequence (or of
  // the stack's, before the branch that lstm-wavefront made): T is its
  // dimension 0, at hand wherever the batch is.
  auto batchDim = batch.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> batchIndex =
      batchDim ? batchDim.getConstantIndex() : std::nullopt;
  if (!bounded || widest >= kNarrowIndexLimit || batchIndex != 1)
    return arith::ConstantIntOp::create(rewriter, loc, 0, 1);
  Value steps =
      tensor::DimOp::create(rewriter, loc, batchDim.getSource(), int64_t{0});
  // (T + 1) · B < limit / W, in index arithmetic that cannot overflow: T
  // and B are extents of a tensor that exists.
  Value rows = arith::MulIOp::create(
      rewriter, loc,
      arith::AddIOp::create(rewriter, loc, steps,
                            arith::ConstantIndexOp::create(rewriter, loc, 1)),
      batch);
  return arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ult, rows,
                               arith::ConstantIndexOp::create(
                                   rewriter, loc, kNarrowIndexLimit / widest));
}

/// The cost model takes the batch, every block is resident at once (at most
/// one per SM counted on: a GPU with fewer SMs than the grid has blocks
/// takes the per-step layer instead of failing the cooperative launch), the
/// sequences are short enough for the kernels' 32-bit indices, and
/// a kernel that may stage more than every GPU gives a block without
/// opting in gets what this batch needs (the runtime opts the kernel in at
/// its launch).
Value mlir::lstm::persistent::persistentKernelRuns(
    RewriterBase &rewriter, Operation *at,
    ArrayRef<PersistentKernelBuilder *> builders, int64_t gridBlocks,
    Value batch, int64_t maxBatch) {
  Location loc = at->getLoc();
  Value small = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ule, batch,
      arith::ConstantIndexOp::create(rewriter, loc, maxBatch));
  Value fits = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ule,
      arith::ConstantIndexOp::create(rewriter, loc, gridBlocks),
      queryRuntime(rewriter, at, kMultiprocessorCountName));
  Value chosen = arith::AndIOp::create(rewriter, loc, small, fits);
  chosen =
      arith::AndIOp::create(rewriter, loc, chosen,
                            indexableSequences(rewriter, loc, builders, batch));
  int64_t most = 0;
  for (PersistentKernelBuilder *builder : builders)
    most = std::max(most, builder->sharedBytes());
  if (most > kSharedMemoryWithoutOptIn) {
    Value limit = arith::MaxUIOp::create(
        rewriter, loc, queryRuntime(rewriter, at, kSharedMemoryPerBlockName),
        arith::ConstantIndexOp::create(rewriter, loc,
                                       kSharedMemoryWithoutOptIn));
    for (PersistentKernelBuilder *builder : builders) {
      if (builder->sharedBytes() <= kSharedMemoryWithoutOptIn)
        continue;
      Value sharedFits =
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                builder->sharedBytesAt(rewriter, batch), limit);
      chosen = arith::AndIOp::create(rewriter, loc, chosen, sharedFits);
    }
  }
  return chosen;
}

/// Whether `builder`'s kernel of `layer` runs at batch size `batch` (an
/// index, before `layer`).
static Value kernelRuns(RewriterBase &rewriter, LayerOp layer,
                        PersistentKernelBuilder &builder, Value batch,
                        int64_t maxBatch) {
  return persistentKernelRuns(rewriter, layer, {&builder}, builder.gridBlocks(),
                              batch, maxBatch);
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
    builder.build(kernelName);
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
  builder.build(kernelName);
  return success();
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
    rewriter.setInsertionPoint(stack);
    Value chosen = stackRuns;
    if (options.costModel)
      chosen = arith::AndIOp::create(rewriter, stack.getLoc(),
                                     stack.getCondition(), stackRuns);
    rewriter.modifyOpInPlace(stack, [&] {
      stack.getConditionMutable().assign(chosen);
      stack->removeAttr(kPersistentStackAttr);
    });
    copyWavefrontResults();
    return success();
  }
  SmallVector<std::unique_ptr<PersistentKernelBuilder>> builders;
  for (LayerOp layer : layers) {
    FailureOr<PersistentPlan> plan = planPersistentLayer(layer);
    if (failed(plan))
      return failure();
    builders.push_back(std::make_unique<PersistentKernelBuilder>(
        rewriter, *plan, resolveBlockSize(rewriter, *plan, options)));
    if (options.costModel && builders.back()->costModelMaxBatch() < 1)
      return failure();
  }
  rewriter.setInsertionPoint(stack);
  // Without the cost model (`always`) the kernels run at every batch size.
  Value chosen = arith::ConstantIntOp::create(rewriter, stack.getLoc(), 1, 1);
  if (options.costModel) {
    chosen = stack.getCondition();
    for (auto [layer, builder] : llvm::zip(layers, builders))
      chosen =
          arith::AndIOp::create(rewriter, stack.getLoc(), chosen,
                                kernelRuns(rewriter, layer, *builder, batch,
                                           builder->costModelMaxBatch()));
  }
  rewriter.modifyOpInPlace(stack, [&] {
    stack.getConditionMutable().assign(chosen);
    stack->removeAttr(kPersistentStackAttr);
  });
  copyWavefrontResults();
  for (LayerOp layer : layers) {
    FailureOr<PersistentPlan> plan = planPersistentLayer(layer);
    assert(succeeded(plan) && "a copy of a layer that had a plan");
    PersistentKernelBuilder(rewriter, *plan,
                            resolveBlockSize(rewriter, *plan, options))
        .build(nextKernelName());
  }
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
