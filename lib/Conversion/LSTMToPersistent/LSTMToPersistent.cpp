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
// The kernel's body (PersistentKernel.cpp): each block owns a tile of units
// for every batch row and meets the others at a grid barrier after every
// step.
//
// The layer becomes, before it (tensor level, ahead of bufferization):
// `bufferization.to_buffer` views of what the kernel reads, `memref.alloc`s
// of what it writes (the outputs, the finals, two buffers per state used
// alternately, the barrier's counter), the `gpu.launch`, and
// `bufferization.to_tensor` of the results.
//
//===----------------------------------------------------------------------===//
#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"

#include "PersistentKernelBuilder.h"

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Debug.h"

#include <limits>

#define DEBUG_TYPE "lstm-to-persistent"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTLSTMTOPERSISTENTPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// A memref of `shape` with a fully dynamic strided layout: what any tensor
/// bufferizes to can be cast to it, so `to_buffer` never copies.
static MemRefType stridedMemRef(ArrayRef<int64_t> shape, Type elementType) {
  MLIRContext *ctx = elementType.getContext();
  SmallVector<int64_t> strides(shape.size(), ShapedType::kDynamic);
  return MemRefType::get(
      shape, elementType,
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides));
}

PersistentKernelBuilder::PersistentKernelBuilder(RewriterBase &rewriter,
                                                 PersistentPlan plan,
                                                 int64_t blockSize,
                                                 int64_t maxBlocks)
    : rewriter(rewriter), plan(std::move(plan)), layer(this->plan.layer),
      loc(layer.getLoc()), blockSize(blockSize) {
  int64_t n = this->plan.width;
  unitsPerBlock = divCeil(n, maxBlocks);
  numBlocks = divCeil(n, unitsPerBlock);
  int64_t warps = blockSize / kWarpSize;
  unitSlots = std::min(unitsPerBlock, warps);
  rowGroups = warps / unitSlots;
  unitsPerWarp = divCeil(unitsPerBlock, unitSlots);

  using Kind = OperandSource::Kind;
  using YieldKind = PersistentPlan::YieldSource::Kind;
  const PersistentPlan &cell = this->plan;
  int64_t registersNeeded = 0;
  for (auto [p, product] : llvm::enumerate(cell.products)) {
    SmallVector<int64_t> &needed = neededColumns.emplace_back();
    for (const PointwiseStep &step : cell.pointwise)
      for (const OperandSource &source : step.operands)
        if (source.kind == Kind::Product && source.index == p &&
            !llvm::is_contained(needed, source.column))
          needed.push_back(source.column);
    // A product that is a new state: its column n.
    for (const PersistentPlan::YieldSource &state : cell.stateResults)
      if (state.kind == YieldKind::Product && state.index == p &&
          !llvm::is_contained(needed, int64_t{0}))
        needed.push_back(0);
    for (auto &[input, weight] : product.terms) {
      int64_t depth = inputWidth(input);
      registersNeeded +=
          int64_t(needed.size()) * divCeil(depth, int64_t(kWarpSize));
      rowWork += int64_t(needed.size()) * depth * n;
    }
  }
  // The products each phase computes (those its ops read, and those that
  // are new states, in their own phase) and what it stages: their inputs.
  // What crosses phases goes through global memory: the computed inputs of
  // products, and the results that an op of a later phase reads.
  stagedInputs.resize(cell.numPhases);
  phaseProducts.resize(cell.numPhases);
  auto addScratch = [&](const Computed &value) {
    if (!llvm::is_contained(scratchValues, value))
      scratchValues.push_back(value);
  };
  auto compute = [&](unsigned phase, unsigned p) {
    if (llvm::is_contained(phaseProducts[phase], p))
      return;
    phaseProducts[phase].push_back(p);
    for (auto &[input, weight] : cell.products[p].terms) {
      if (input.kind == TermInput::Kind::Computed)
        addScratch(input.computed);
      if (input.kind == TermInput::Kind::Concat)
        for (const Computed &piece : cell.concats[input.index].pieces)
          addScratch(piece);
      if (!llvm::is_contained(stagedInputs[phase], input))
        stagedInputs[phase].push_back(input);
    }
  };
  for (const PointwiseStep &step : cell.pointwise)
    for (const OperandSource &source : step.operands) {
      if (source.kind == Kind::Computed &&
          cell.pointwise[source.computed.op].phase < step.phase)
        addScratch(source.computed);
      if (source.kind == Kind::Product)
        compute(step.phase, source.index);
    }
  for (const PersistentPlan::YieldSource &state : cell.stateResults)
    if (state.kind == YieldKind::Product)
      compute(cell.products[state.index].phase, state.index);
  for (const SmallVector<TermInput> &phase : stagedInputs) {
    maxStaged = std::max(maxStaged, phase.size());
    for (const TermInput &input : phase)
      maxInputWidth = std::max(maxInputWidth, inputWidth(input));
  }
  useRegisters = unitsPerWarp == 1 && registersNeeded <= kRegisterWeights;
  // How many rows a warp takes at once: their partial sums, reduced across
  // the lanes together, fill at most kMaxAccumulators registers.
  bool oneRow = useRegisters && 2 * registersNeeded > kRegisterWeights;
  for (ArrayRef<unsigned> products : phaseProducts) {
    int64_t columns = 0;
    for (unsigned p : products)
      columns += int64_t(neededColumns[p].size());
    int64_t fit = kMaxAccumulators / std::max<int64_t>(columns, 1);
    groupRows.push_back(
        oneRow ? 1
               : std::min<int64_t>(
                     kMaxGroupRows,
                     llvm::bit_floor(uint64_t(std::max<int64_t>(fit, 1)))));
  }
  chunkRows = maxStaged == 0
                  ? kStagedFloats
                  : std::max<int64_t>(1, kStagedFloats / (int64_t(maxStaged) *
                                                          maxInputWidth));
}

int64_t PersistentKernelBuilder::inputWidth(const TermInput &input) const {
  return input.kind == TermInput::Kind::Concat ? plan.concats[input.index].width
                                               : plan.width;
}

Value PersistentKernelBuilder::readOnlyBuffer(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      rewriter, loc, stridedMemRef(type.getShape(), type.getElementType()),
      tensor, /*read_only=*/true);
}

/// A buffer of `type`'s shape whose dynamic extents are, in order, those of
/// `leadingExtents` aligned with the leading dimensions.
Value PersistentKernelBuilder::allocLike(RankedTensorType type,
                                         ArrayRef<Value> leadingExtents) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(leadingExtents[d]);
  return memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
      dynamic);
}

void PersistentKernelBuilder::prepareBuffers() {
  // The extents the kernel indexes with must agree (as the per-step
  // lowering checks them).
  assertLayerExtents(rewriter, layer);
  Value seq0 = layer.getInputs().front();
  for (const PointwiseStep &step : plan.pointwise)
    for (const OperandSource &source : step.operands)
      if (source.kind == OperandSource::Kind::Above &&
          cast<RankedTensorType>(source.above.getType()).getRank() == 2)
        assertSameExtent(rewriter, loc, source.above, 0, seq0, 1,
                         "lstm.layer: a value of the cell has a different "
                         "batch size than the input");
  seqLen = tensor::DimOp::create(rewriter, loc, seq0, 0);
  batch = tensor::DimOp::create(rewriter, loc, seq0, 1);

  for (Value seq : layer.getInputs())
    inputs.push_back(readOnlyBuffer(seq));
  for (Value init : layer.getInits())
    inits.push_back(readOnlyBuffer(init));
  for (const PointwiseStep &step : plan.pointwise)
    for (const OperandSource &source : step.operands)
      if (source.kind == OperandSource::Kind::Above &&
          !aboveBuffers.count(source.above))
        aboveBuffers[source.above] = readOnlyBuffer(source.above);

  DenseMap<Value, Value> weightBuffers;
  for (const Product &product : plan.products) {
    SmallVector<Value> &terms = weights.emplace_back();
    for (auto &[input, weight] : product.terms) {
      Value &buffer = weightBuffers[weight];
      if (!buffer)
        buffer = readOnlyBuffer(weight);
      terms.push_back(buffer);
    }
  }

  Type f32 = rewriter.getF32Type();
  for (size_t s = 0; s < layer.getInits().size(); ++s)
    stateBuffers.push_back(memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({2, ShapedType::kDynamic, plan.width}, f32),
        ValueRange{batch}));
  for (Value out : layer.getOutputs())
    outputs.push_back(
        allocLike(cast<RankedTensorType>(out.getType()), {seqLen, batch}));
  for (Value final : layer.getFinals())
    finals.push_back(
        allocLike(cast<RankedTensorType>(final.getType()), {batch}));
  for (size_t i = 0; i < scratchValues.size(); ++i)
    scratch.push_back(memref::AllocOp::create(
        rewriter, loc, MemRefType::get({ShapedType::kDynamic, plan.width}, f32),
        ValueRange{batch}));

  // The barrier's counter counts arrivals: barrier k waits for k·G, which
  // must fit its 32 bits (the barriers are 1 + T · phases). Zeroed by a
  // memset: a one-element linalg.fill would become a store on the host.
  int64_t maxSteps =
      ((int64_t{1} << 31) / numBlocks - 2) / int64_t(plan.numPhases);
  Value fits = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                     seqLen, index(rewriter, maxSteps));
  cf::AssertOp::create(
      rewriter, loc, fits,
      "lstm.layer: the sequence is too long for a persistent kernel of " +
          std::to_string(numBlocks) + " blocks (at most " +
          std::to_string(maxSteps) + " steps) (at " + describeLocation(loc) +
          ")");
  counter = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({1}, rewriter.getI32Type()));
  Value zero = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  gpu::MemsetOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange(),
                        counter, zero);
}

void PersistentKernelBuilder::build(StringRef kernelName) {
  rewriter.setInsertionPoint(layer);
  prepareBuffers();
  Value one = index(rewriter, 1);
  // One shared buffer per staged state, chunkRows rows of N, carved out of
  // the kernel's dynamic shared memory (workgroup attributions of the
  // launch would be block arguments, which the ownership-based buffer
  // deallocation of the host code does not accept).
  Value sharedBytes;
  if (maxStaged != 0)
    sharedBytes = arith::ConstantIntOp::create(
        rewriter, loc,
        int64_t(maxStaged) * chunkRows * maxInputWidth * int64_t(sizeof(float)),
        32);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, index(rewriter, numBlocks), one, one,
      index(rewriter, blockSize), one, one, sharedBytes,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/{}, /*privateAttributions=*/{},
      /*clusterSizeX=*/nullptr, /*clusterSizeY=*/nullptr,
      /*clusterSizeZ=*/nullptr,
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName),
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName));
  buildKernel(launch);

  rewriter.setInsertionPointAfter(launch);
  SmallVector<Value> results;
  auto toTensor = [&](Value buffer, Type type) {
    return bufferization::ToTensorOp::create(rewriter, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  };
  for (auto [buffer, out] : llvm::zip(outputs, layer.getOutputs()))
    results.push_back(toTensor(buffer, out.getType()));
  for (auto [buffer, final] : llvm::zip(finals, layer.getFinals()))
    results.push_back(toTensor(buffer, final.getType()));
  rewriter.replaceOp(layer, results);
}

int64_t PersistentKernelBuilder::costModelMaxBatch() const {
  // Weights read from memory at every step: slower than the per-step
  // GEMMs at every size measured.
  if (!useRegisters)
    return 0;
  return rowWork == 0 ? std::numeric_limits<int32_t>::max()
                      : kMaxStepWork / rowWork;
}

PersistentChoice mlir::lstm::choosePersistent(LayerOp layer, int64_t blockSize,
                                              int64_t maxBlocks) {
  PersistentChoice choice;
  FailureOr<PersistentPlan> plan = planPersistentLayer(layer, &choice.reason);
  if (failed(plan))
    return choice;
  // The builder only reads the plan here; it builds nothing.
  IRRewriter rewriter(layer.getContext());
  choice.maxBatch =
      PersistentKernelBuilder(rewriter, *plan, blockSize, maxBlocks)
          .costModelMaxBatch();
  if (choice.maxBatch < 1)
    choice.reason = "the cost model: the weights do not fit in registers ("
                    "more than " +
                    std::to_string(kRegisterWeights) +
                    " per lane), the per-step GEMMs are faster";
  return choice;
}

/// The CUDA runtime's SM count (lstm/Runtime/CudaRuntime.h), declared in
/// `layer`'s module once.
static func::FuncOp declareMultiprocessorCount(RewriterBase &rewriter,
                                               LayerOp layer) {
  auto module = layer->getParentOfType<ModuleOp>();
  if (auto fn = module.lookupSymbol<func::FuncOp>(kMultiprocessorCountName))
    return fn;
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointToStart(module.getBody());
  auto fn = func::FuncOp::create(
      rewriter, module.getLoc(), kMultiprocessorCountName,
      rewriter.getFunctionType({}, {rewriter.getI32Type()}));
  fn.setPrivate();
  return fn;
}

LogicalResult mlir::lstm::convertLayerToPersistentKernel(
    RewriterBase &rewriter, LayerOp layer, StringRef kernelName,
    int64_t blockSize, int64_t maxBlocks, bool costModel) {
  FailureOr<PersistentPlan> plan = planPersistentLayer(layer);
  if (failed(plan))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  PersistentKernelBuilder builder(rewriter, *plan, blockSize, maxBlocks);
  if (!costModel) {
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
  Value small = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ule, batch,
      arith::ConstantIndexOp::create(rewriter, loc, maxBatch));
  // Every block resident at once: at most one per SM counted on. A GPU
  // with fewer SMs than the grid has blocks takes the per-step layer
  // instead of failing the cooperative launch.
  Value multiprocessors = arith::IndexCastOp::create(
      rewriter, loc, rewriter.getIndexType(),
      func::CallOp::create(rewriter, loc,
                           declareMultiprocessorCount(rewriter, layer),
                           ValueRange())
          .getResult(0));
  Value fits = arith::CmpIOp::create(
      rewriter, loc, arith::CmpIPredicate::ule,
      arith::ConstantIndexOp::create(rewriter, loc, builder.gridBlocks()),
      multiprocessors);
  Value chosen = arith::AndIOp::create(rewriter, loc, small, fits);
  auto choice = scf::IfOp::create(rewriter, loc, layer->getResultTypes(),
                                  chosen, /*withElseRegion=*/true);
  rewriter.replaceAllUsesWith(layer->getResults(), choice.getResults());
  rewriter.setInsertionPointToStart(choice.elseBlock());
  Operation *perStep = rewriter.clone(*layer);
  rewriter.modifyOpInPlace(perStep, [&] {
    perStep->setAttr(kPerStepFallbackAttr, rewriter.getUnitAttr());
  });
  scf::YieldOp::create(rewriter, loc, perStep->getResults());
  rewriter.setInsertionPointToStart(choice.thenBlock());
  auto yield = scf::YieldOp::create(rewriter, loc, layer->getResults());
  rewriter.moveOpBefore(layer, yield);
  builder.build(kernelName);
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
    if (blockSize < kWarpSize || blockSize > 1024 ||
        blockSize % kWarpSize != 0 || maxBlocks < 1) {
      module.emitError("lstm-to-persistent: block-size must be a multiple of "
                       "32 in [32, 1024] and max-blocks at least 1");
      return signalPassFailure();
    }
    IRRewriter rewriter(&getContext());
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      SmallVector<LayerOp> layers;
      func.walk([&](LayerOp layer) {
        if (!layer->hasAttr(kPerStepFallbackAttr))
          layers.push_back(layer);
      });
      unsigned n = 0;
      for (LayerOp layer : layers) {
        std::string name =
            (kPersistentKernelPrefix + "_" + func.getSymName() + "_" + Twine(n))
                .str();
        if (succeeded(convertLayerToPersistentKernel(
                rewriter, layer, name, blockSize, maxBlocks, !always)))
          ++n;
      }
    }
  }
};
} // namespace
