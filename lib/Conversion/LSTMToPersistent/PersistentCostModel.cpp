//===- PersistentCostModel.cpp - Which persistent kernels run, and when ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The choices lstm-to-persistent makes for a layer before building
// anything: its kernel's block size, a second kernel that reads its
// weights from memory for larger batches, the batch from which tensor
// cores run, and the run-time conditions (the batch, the GPU's SMs and
// shared memory, the kernels' 32-bit indices) under which a kernel runs
// rather than the per-step lowering.
//
//===----------------------------------------------------------------------===//

#include "PersistentCostModel.h"
#include "PersistentKernelBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>

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
PersistentOptions
mlir::lstm::persistent::resolveBlockSize(RewriterBase &rewriter,
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
std::optional<PersistentOptions> mlir::lstm::persistent::memoryWeightsKernel(
    RewriterBase &rewriter, const PersistentPlan &plan,
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
  if (builder.usesTensorCores()) {
    int64_t from = builder.tensorCoresFrom(options);
    if (from <= choice.maxBatch)
      choice.tensorCoresFromBatch = from;
  }
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
Value mlir::lstm::persistent::kernelRuns(RewriterBase &rewriter, LayerOp layer,
                                         PersistentKernelBuilder &builder,
                                         Value batch, int64_t maxBatch) {
  return persistentKernelRuns(rewriter, layer, {&builder}, builder.gridBlocks(),
                              batch, maxBatch);
}

PersistentOptions
mlir::lstm::persistentOptionsForGpu(GemmComputeType computeType, StringRef chip,
                                    bool tensorCores) {
  PersistentOptions options;
  int version = gpuChipVersion(chip);
  options.bf16Operands = computeType == GemmComputeType::bf16;
  // mma.sync's TF32 and bf16 shapes, from sm_80 on; the fp32 compute
  // type's products on them as three TF32 products of split operands.
  options.tensorCores = tensorCores && version >= 80;
  options.splitTF32 = computeType == GemmComputeType::fp32;
  // cp.async, from sm_80 on.
  options.asyncCopies = version >= 80;
  // The shared memory every GPU of the chip's family gives a block once a
  // kernel opts in: 227 KiB on sm_90 (and sm_100), 99 KiB on sm_86 and
  // sm_89 (163 KiB on sm_80); the cost model still asks the GPU at run
  // time where a batch needs more than 48 KiB.
  if (version >= 90)
    options.sharedMemory = 224 * 1024;
  else if (version >= 80)
    options.sharedMemory = 96 * 1024;
  return options;
}

ConvertLSTMToPersistentPassOptions
mlir::lstm::persistentPassOptionsForGpu(GemmComputeType computeType,
                                        StringRef chip, bool tensorCores) {
  PersistentOptions kernels =
      persistentOptionsForGpu(computeType, chip, tensorCores);
  ConvertLSTMToPersistentPassOptions pass;
  pass.bf16Operands = kernels.bf16Operands;
  pass.tensorCores = kernels.tensorCores;
  pass.splitTF32 = kernels.splitTF32;
  pass.asyncCopies = kernels.asyncCopies;
  pass.sharedMemory = kernels.sharedMemory;
  return pass;
}

int64_t mlir::lstm::tensorCoreMinBatch(const PersistentOptions &options,
                                       int64_t dotsMaxBatch,
                                       int64_t dotsOvertakenFrom) {
  if (options.tensorCoresFromBatch > 0)
    return options.tensorCoresFromBatch;
  // Measured on the H200 (docs/benchmarks.md, "Tensor cores in the
  // persistent kernels"): against the dot products, char-rnn's stack ties
  // at B = 16 and wins from 50 in TF32 and wins from 16 in bf16; two layers
  // of H = 512 tie at B = 4 in TF32 and win there in bf16; at B = 1 both
  // lose by 25-60%.
  if (options.bf16Operands)
    return 4;
  if (!options.splitTF32)
    return 16;
  // 3xTF32, three instructions for TF32's one, against the fp32 dot
  // products (docs/benchmarks.md, "fp32 on tensor cores" and "Where the
  // 3xTF32 kernel starts"): its step costs about the same at every batch
  // to 16 rows a tile, theirs grows with the rows a warp takes in turn, so
  // it takes over where they are overtaken (kDotsRowsInTurn: the latency
  // stack from B = 5 of their bound 8, a layer of H = 512 from 9 of 16,
  // three layers of H = 256 from 13 of 32), or where they stop
  // (deepbench's layer, 5), at 64 at the latest (char-rnn's stack, whose
  // dot products run to 256).
  return std::clamp<int64_t>(std::min(dotsMaxBatch + 1, dotsOvertakenFrom), 1,
                             kSplitTF32MaxFromBatch);
}

int64_t PersistentKernelBuilder::tensorCoresFrom(
    const PersistentOptions &options) const {
  if (!splitTF32 || options.tensorCoresFromBatch > 0)
    return tensorCoreMinBatch(options, dotsMaxBatch(), dotsOvertakenFrom());
  // The kernel of dot products that takes the batches below, as
  // lstm-to-persistent builds it (its own block size: 256 threads where
  // this one may take 512).
  PersistentOptions dots = options;
  dots.tensorCores = false;
  PersistentKernelBuilder below(rewriter, plan,
                                resolveBlockSize(rewriter, plan, dots));
  return tensorCoreMinBatch(options, below.dotsMaxBatch(),
                            below.dotsOvertakenFrom());
}

Value mlir::lstm::persistent::tensorCoresRun(RewriterBase &rewriter,
                                             Location loc, Value batch,
                                             int64_t fromBatch) {
  return arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::uge, batch,
      arith::ConstantIndexOp::create(rewriter, loc, fromBatch));
}
