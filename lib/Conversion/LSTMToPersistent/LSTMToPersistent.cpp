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
#include "PersistentStack.h"

#include "lstm/Conversion/LSTMToLinalg/LSTMToLinalg.h"
#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/Debug.h"

#include <limits>
#include <memory>

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

PersistentKernelBuilder::PersistentKernelBuilder(
    RewriterBase &rewriter, PersistentPlan plan,
    const PersistentOptions &options)
    : rewriter(rewriter), plan(std::move(plan)), layer(this->plan.layer),
      loc(layer.getLoc()), blockSize(options.blockSize) {
  int64_t n = this->plan.width;
  unitsPerBlock = divCeil(n, options.maxBlocks);
  numBlocks = divCeil(n, unitsPerBlock);
  int64_t warps = blockSize / kLanes;
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
          int64_t(needed.size()) * divCeil(depth, int64_t(kLanes));
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
  int64_t registerBudget = blockSize <= kFewerThreads
                               ? kRegisterWeightsFewerThreads
                               : kRegisterWeights;
  useRegisters = unitsPerWarp == 1 && registersNeeded <= registerBudget;
  // How many rows a warp takes at once: their partial sums, reduced across
  // the lanes together, fill at most kMaxAccumulators registers.
  oneRow = useRegisters && 2 * registersNeeded > kRegisterWeights;
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
  // Each staged value gets an equal share of the budget, as rows of the
  // widest: as many rows at a time (at least one), but no more than the
  // largest batch the cost model runs the kernel for.
  chunkRows = 1;
  if (maxStaged != 0) {
    chunkRows =
        std::max<int64_t>(1, options.sharedMemory / int64_t(sizeof(float)) /
                                 (int64_t(maxStaged) * maxInputWidth));
    if (int64_t most = costModelMaxBatch(); most > 0)
      chunkRows = std::min(chunkRows, most);
    // A warp whose weights take more than half its registers computes one
    // row at a time; with a second row of a chunk to loop to, the backward
    // kernel of H = 512 spilled (ptxas -v): one row per warp per chunk.
    if (oneRow)
      chunkRows = std::min(chunkRows, rowGroups);
  }
  // A phase that stages nothing takes the whole batch at once: chunks
  // would only add block barriers.
  for (ArrayRef<TermInput> staged : stagedInputs)
    phaseChunkRows.push_back(staged.empty() ? kWholeBatch : chunkRows);
  // 16-byte copies need every staged row segment (N wide, at a multiple of
  // N in a row of K) to start at a multiple of 4 floats.
  asyncCopies = options.asyncCopies && maxStaged != 0 && n % 4 == 0 &&
                llvm::all_of(cell.inStepInputs, [](const auto &input) {
                  return input.second % 4 == 0;
                });
  // The grid barrier that ends a step makes its new states visible to the
  // blocks that stage them in the next step. Where no product reads a
  // state (a backward step's products read the step's dG only), a block
  // reads no other block's state, and a block barrier suffices: the
  // phases' own grid barriers keep a block from running a step ahead of
  // another's reads of the scratch buffers, which alternate by step.
  stepGridBarrier = false;
  for (const Product &product : cell.products)
    for (auto &[input, weight] : product.terms)
      stepGridBarrier |= input.kind == TermInput::Kind::State;
  if (cell.numPhases < 2)
    stepGridBarrier = true;
}

int64_t PersistentKernelBuilder::inputWidth(const TermInput &input) const {
  switch (input.kind) {
  case TermInput::Kind::Concat:
    return plan.concats[input.index].width;
  case TermInput::Kind::Input:
    return plan.inStepInputs.lookup(input.index);
  case TermInput::Kind::State:
  case TermInput::Kind::Computed:
    break;
  }
  return plan.width;
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

/// Asserts that `extent` (of `value`'s dimension `dim`) is `expected`.
static void assertExtent(OpBuilder &b, Location loc, Value value, int64_t dim,
                         Value expected, const Twine &what) {
  Value extent = tensor::DimOp::create(b, loc, value, dim);
  Value same =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, extent, expected);
  cf::AssertOp::create(b, loc, same,
                       (what + " (at " + describeLocation(loc) + ")").str());
}

/// The extents the kernel indexes with must agree (as the per-step lowering
/// checks them). In a stack's kernel, against the stack's: the sequences
/// it projects in the step are another layer's outputs, of those extents.
void PersistentKernelBuilder::assertExtents() {
  if (!seqLen) {
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
    return;
  }
  for (auto [i, seq] : llvm::enumerate(layer.getInputs())) {
    if (stackInputs.count(i))
      continue;
    assertExtent(rewriter, loc, seq, 0, seqLen,
                 "lstm.layer: input #" + Twine(i) +
                     " has a different sequence length than the layer's "
                     "input from the layer before");
    assertExtent(rewriter, loc, seq, 1, batch,
                 "lstm.layer: input #" + Twine(i) +
                     " has a different batch size than the layer's input "
                     "from the layer before");
  }
  for (auto [i, init] : llvm::enumerate(layer.getInits()))
    assertExtent(rewriter, loc, init, 0, batch,
                 "lstm.layer: initial state #" + Twine(i) +
                     " has a different batch size than the input");
  for (const PointwiseStep &step : plan.pointwise)
    for (const OperandSource &source : step.operands)
      if (source.kind == OperandSource::Kind::Above &&
          cast<RankedTensorType>(source.above.getType()).getRank() == 2)
        assertExtent(rewriter, loc, source.above, 0, batch,
                     "lstm.layer: a value of the cell has a different batch "
                     "size than the input");
}

void PersistentKernelBuilder::prepareBuffers() {
  assertExtents();
  for (auto [i, seq] : llvm::enumerate(layer.getInputs()))
    inputs.push_back(stackInputs.count(i) ? stackInputs.lookup(i)
                                          : readOnlyBuffer(seq));
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
  // Two per value, used by alternate steps (as the states): a block that
  // starts the next step while another still stages this one's values
  // writes the other buffer.
  for (size_t i = 0; i < scratchValues.size(); ++i)
    scratch.push_back(memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({2, ShapedType::kDynamic, plan.width}, f32),
        ValueRange{batch}));
}

Value PersistentKernelBuilder::allocateCounter(Value iterations,
                                               int64_t gridBlocks,
                                               int64_t barriersPerIteration) {
  // The barrier's counter counts arrivals: barrier k waits for k·G, which
  // must fit its 32 bits (the barriers are 1 + T · the step's). Zeroed by
  // a memset: a one-element linalg.fill would become a store on the host.
  int64_t maxSteps =
      ((int64_t{1} << 31) / gridBlocks - 2) / barriersPerIteration;
  Value fits = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                     iterations, index(rewriter, maxSteps));
  cf::AssertOp::create(
      rewriter, loc, fits,
      "lstm.layer: the sequence is too long for a persistent kernel of " +
          std::to_string(gridBlocks) + " blocks (at most " +
          std::to_string(maxSteps) + " steps) (at " + describeLocation(loc) +
          ")");
  Value buffer = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({1}, rewriter.getI32Type()));
  Value zero = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  gpu::MemsetOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange(),
                        buffer, zero);
  return buffer;
}

void PersistentKernelBuilder::build(StringRef kernelName) {
  rewriter.setInsertionPoint(layer);
  prepareBuffers();
  counter = allocateCounter(seqLen, numBlocks, gridBarriersPerStep());
  Value one = index(rewriter, 1);
  // One shared buffer per staged value, chunkRows rows of the widest,
  // carved out of the kernel's dynamic shared memory (workgroup
  // attributions of the launch would be block arguments, which the
  // ownership-based buffer deallocation of the host code does not accept).
  // The last one only as long as the batch needs: what a block does not
  // take is L1 cache, and a small batch needs no opting in.
  Value sharedBytes;
  if (maxStaged != 0)
    sharedBytes = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI32Type(), sharedBytesAt(rewriter, batch));
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
  replaceLayer();
}

void PersistentKernelBuilder::replaceLayer() {
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

int64_t PersistentKernelBuilder::sharedBytes() const {
  return int64_t(maxStaged) * chunkRows * maxInputWidth *
         int64_t(sizeof(float));
}

Value PersistentKernelBuilder::sharedBytesAt(OpBuilder &b, Value rows) {
  // Every view but the last whole; the last min(rows, chunkRows) rows long.
  Value staged = arith::MinUIOp::create(b, loc, rows, index(b, chunkRows));
  Value allRows = arith::AddIOp::create(
      b, loc, staged, index(b, (int64_t(maxStaged) - 1) * chunkRows));
  return arith::MulIOp::create(
      b, loc, allRows, index(b, maxInputWidth * int64_t(sizeof(float))));
}

int64_t PersistentKernelBuilder::costModelMaxBatch() const {
  // Weights read from memory at every step: slower than the per-step
  // GEMMs at every size measured.
  if (!useRegisters)
    return 0;
  return rowWork == 0 ? std::numeric_limits<int32_t>::max()
                      : kMaxStepWork / rowWork;
}

/// `options` with the block size chosen where it is 0: 512 threads, or
/// kFewerThreads where a warp's weights fill more than half of what a
/// 512-thread block leaves a lane (it then takes its rows one at a time):
/// with fewer threads a lane may use more registers, and at H = 512 the
/// kernels stopped spilling (ptxas: 76-152 bytes before) and ran 17-19%
/// faster at batch 1, where the larger blocks stay ahead at H = 128
/// (docs/benchmarks.md).
static PersistentOptions resolveBlockSize(RewriterBase &rewriter,
                                          const PersistentPlan &plan,
                                          PersistentOptions options) {
  if (options.blockSize != 0)
    return options;
  options.blockSize = kDefaultBlockSize;
  // The builder only reads the plan here; it builds nothing.
  if (PersistentKernelBuilder(rewriter, plan, options).takesRowsOneAtATime())
    options.blockSize = kFewerThreads;
  return options;
}

PersistentChoice
mlir::lstm::choosePersistent(LayerOp layer, const PersistentOptions &options) {
  PersistentChoice choice;
  FailureOr<PersistentPlan> plan = planPersistentLayer(layer, &choice.reason);
  if (failed(plan))
    return choice;
  // The builder only reads the plan here; it builds nothing.
  IRRewriter rewriter(layer.getContext());
  choice.maxBatch =
      PersistentKernelBuilder(rewriter, *plan,
                              resolveBlockSize(rewriter, *plan, options))
          .costModelMaxBatch();
  if (choice.maxBatch < 1)
    choice.reason = "the cost model: the weights do not fit in registers ("
                    "more than " +
                    std::to_string(kRegisterWeights) +
                    " per lane), the per-step GEMMs are faster";
  return choice;
}

/// Calls the CUDA runtime's `name` (lstm/Runtime/CudaRuntime.h: a property
/// of the current GPU, an i32), declared in `at`'s module once; the result
/// as an index.
static Value queryRuntime(RewriterBase &rewriter, Operation *at,
                          StringRef name) {
  auto module = at->getParentOfType<ModuleOp>();
  auto fn = module.lookupSymbol<func::FuncOp>(name);
  if (!fn) {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(module.getBody());
    fn = func::FuncOp::create(
        rewriter, module.getLoc(), name,
        rewriter.getFunctionType({}, {rewriter.getI32Type()}));
    fn.setPrivate();
  }
  return arith::IndexCastOp::create(
      rewriter, at->getLoc(), rewriter.getIndexType(),
      func::CallOp::create(rewriter, at->getLoc(), fn, ValueRange())
          .getResult(0));
}

/// The cost model takes the batch, every block is resident at once (at most
/// one per SM counted on: a GPU with fewer SMs than the grid has blocks
/// takes the per-step layer instead of failing the cooperative launch), and
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

/// `values` with each ranked tensor copied into a buffer of its own, with
/// the identity layout of a `memref.alloc` (other values as they are: a
/// branch may also yield an index computed among the layers). The kernel's
/// results are such buffers; a branch that yields per-step results (views of
/// the [T + 1] state stacks, strided) would give the scf.if a strided result
/// type, which a function returns or a later op reads only through a copy,
/// taken whichever branch ran: copying in the fallback branch instead keeps the
/// kernel's branch free of it (charrnn's training forward: eight copies of [T,
/// B, H]). Where `copy` is given, only the values it marks are copied (the
/// others are buffers of their own already).
static SmallVector<Value> copiesInNewBuffers(RewriterBase &rewriter,
                                             Location loc, ValueRange values,
                                             ArrayRef<bool> copy = {}) {
  SmallVector<Value> copies;
  for (auto [i, value] : llvm::enumerate(values)) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || (!copy.empty() && !copy[i])) {
      copies.push_back(value);
      continue;
    }
    Value view = bufferization::ToBufferOp::create(
        rewriter, loc, stridedMemRef(type.getShape(), type.getElementType()),
        value, /*read_only=*/true);
    SmallVector<Value> extents;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        extents.push_back(tensor::DimOp::create(rewriter, loc, value, d));
    Value buffer = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
        extents);
    memref::CopyOp::create(rewriter, loc, view, buffer);
    copies.push_back(bufferization::ToTensorOp::create(
        rewriter, loc, type, buffer, /*restrict=*/true, /*writable=*/true));
  }
  return copies;
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
  Operation *perStep = rewriter.clone(*layer);
  rewriter.modifyOpInPlace(perStep, [&] {
    perStep->setAttr(kPerStepFallbackAttr, rewriter.getUnitAttr());
  });
  // Of the output sequences only those that the per-step lowering makes
  // views of a state's stack: the others (a training forward's gates, a
  // backward's dG) are buffers of their own there too, and a copy of them
  // would cost a read and a write of every saved activation wherever the
  // batch is above the kernel's (appleyard's training step: 0.8 ms). The
  // finals, [B, N] each, always.
  SmallVector<bool> copy = perStepOutputsInStateStacks(cast<LayerOp>(perStep));
  copy.resize(perStep->getNumResults(), true);
  scf::YieldOp::create(
      rewriter, loc,
      copiesInNewBuffers(rewriter, loc, perStep->getResults(), copy));
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
    SmallVector<Value> copies =
        copiesInNewBuffers(rewriter, stack.getLoc(), elseYield->getOperands());
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
    PersistentOptions options;
    options.blockSize = blockSize;
    options.maxBlocks = maxBlocks;
    options.costModel = !always;
    options.asyncCopies = asyncCopies;
    options.sharedMemory = sharedMemory;
    options.stacks = stacks;
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
