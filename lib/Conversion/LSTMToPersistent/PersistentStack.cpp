//===- PersistentStack.cpp - A stack's layers in one persistent kernel ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One kernel per layer runs a stack's layers one after the other: at
// char-rnn's sizes two layers of 50 steps are 100 steps separated by grid
// barriers, each a few microseconds of which the barrier is a third. Here a
// chain of layers becomes one cooperative kernel whose blocks are split
// among the layers, each group running its layer's steps as that layer's
// kernel would (PersistentKernel.cpp), layer l's step t in iteration t + l
// of one loop: a wavefront, T + L - 1 iterations separated by grid barriers
// instead of L · T. Layer l + 1's input projection, hoisted into one GEMM
// over layer l's whole output where the layers run one after the other,
// becomes part of its step (projectInputInStep): it reads layer l's output
// of step t, written in the iteration before.
//
// The blocks are split so that the slowest group's step is as short as it
// can be: a block's step costs its units times a unit's multiply-adds per
// row (layer l + 1 also multiplies its input), and the grid has at most
// max-blocks blocks. Which chains become such kernels, and the branches
// around them: PersistentStackConversion.cpp.
//
//===----------------------------------------------------------------------===//

#include "PersistentStackKernel.h"

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "lstm-to-persistent"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

int64_t StackKernel::tensorCoresFrom() const {
  if (options.splitTF32 && !options.bf16Operands &&
      options.tensorCoresFromBatch == 0) {
    PersistentOptions dots = options;
    dots.tensorCores = false;
    StackKernel below(rewriter, chain, dots);
    if (succeeded(below.plan())) {
      int64_t overtaken = std::numeric_limits<int64_t>::max();
      for (auto &builder : below.builders)
        overtaken = std::min(overtaken, builder->dotsOvertakenFrom());
      return tensorCoreMinBatch(options, below.maxBatch(), overtaken);
    }
  }
  int64_t from = std::numeric_limits<int64_t>::max();
  for (auto &builder : builders)
    from = std::min(from, builder->tensorCoresFrom(options));
  return from;
}

LogicalResult mlir::lstm::persistent::rejectStack(LayerOp first,
                                                  const Twine &why) {
  LLVM_DEBUG(llvm::dbgs() << "lstm-to-persistent: " << first.getLoc()
                          << ": stack not in one kernel: " << why << "\n");
  return failure();
}

LogicalResult StackKernel::plan() {
  LayerOp first = chain.layers.front();
  std::vector<PersistentPlan> plans;
  for (auto [k, layer] : llvm::enumerate(chain.layers)) {
    std::string why;
    FailureOr<PersistentPlan> plan = planPersistentLayer(layer, &why);
    if (failed(plan))
      return rejectStack(first, "a layer has no kernel: " + why);
    if (k != 0) {
      const Link &link = chain.links[k - 1];
      projectInputInStep(*plan, link.input, link.weight, link.transposed);
    }
    plans.push_back(std::move(*plan));
  }
  // The builders of one block size (512 threads; 256 where a layer's warps
  // would not keep their weights in registers otherwise: below), with
  // their share of the blocks.
  auto makeBuilders = [&](int64_t blockSize) -> LogicalResult {
    builders.clear();
    SmallVector<int64_t> work, widths;
    for (PersistentPlan &plan : plans) {
      PersistentOptions probe = options;
      probe.blockSize = blockSize;
      // A unit's share of the layer's multiply-adds per row.
      work.push_back(divCeil(
          PersistentKernelBuilder(rewriter, plan, probe).multiplyAddsPerRow(),
          plan.width));
      widths.push_back(plan.width);
    }
    SmallVector<int64_t> units =
        splitBlocks(work, widths, blockSize / kLanes, options.maxBlocks);
    if (units.empty())
      return rejectStack(first, "more layers than blocks");
    totalBlocks = 0;
    for (auto [plan, u] : llvm::zip(plans, units)) {
      PersistentOptions layerOptions = options;
      layerOptions.blockSize = blockSize;
      layerOptions.maxBlocks = divCeil(plan.width, u);
      builders.push_back(std::make_unique<PersistentKernelBuilder>(
          rewriter, plan, layerOptions));
      totalBlocks += builders.back()->gridBlocks();
    }
    return success();
  };
  int64_t blockSize = options.blockSize ? options.blockSize : kDefaultBlockSize;
  if (failed(makeBuilders(blockSize)))
    return failure();
  // A stack's kernel takes 512-thread blocks, 256 where a layer's warps
  // would not keep their weights in registers otherwise (H = 512). With
  // 32-bit indices (lstm-narrow-kernel-indices) the larger blocks won on
  // the H100 from B = 50 at char-rnn's sizes (training forward 0.235
  // against 0.253 ms, backward 0.339 against 0.380; inference 0.248 against
  // 0.265 at B = 50, 0.659 against 0.910 at 256, though 0.175 against 0.145
  // at 16), and from B = 4 for two H = 256 layers, whose second layer's
  // warps take their rows one at a time in them (0.363 against 0.441 ms at
  // B = 16, 0.634 against 0.815 at 32; 0.140 against 0.133 at B = 1). With
  // 64-bit indices the 512-thread blocks spilled, and stacks took 256
  // (docs/benchmarks.md, "512 threads again for a stack").
  if (options.blockSize == 0 &&
      llvm::any_of(builders, [](auto &b) { return !b->usesRegisters(); })) {
    if (failed(makeBuilders(kFewerThreads)))
      return failure();
  } else if (options.blockSize == 0) {
    // 256 threads also where a layer's warps then take more units at once
    // (their lanes hold the weights of more units): char-rnn's backward
    // stack, 4 units at once in both layers against 4 and 2 (and 176 bytes
    // of spills, ptxas) with 512 threads: 0.218 against 0.269 ms on the
    // H200 (docs/benchmarks.md, "Several units a warp at once").
    SmallVector<int64_t> wide;
    for (auto &builder : builders)
      wide.push_back(builder->unitsAtOnceCount());
    bool more =
        succeeded(makeBuilders(kFewerThreads)) &&
        llvm::all_of(builders, [](auto &b) { return b->usesRegisters(); }) &&
        llvm::any_of(llvm::zip(builders, wide), [](auto pair) {
          return std::get<0>(pair)->unitsAtOnceCount() > std::get<1>(pair);
        });
    if (!more && failed(makeBuilders(kDefaultBlockSize)))
      return failure();
  }
  // Layer l + 1 reads layer l's output of step t in the iteration after
  // the one that wrote it: a grid barrier must follow the write.
  for (auto [k, link] : llvm::enumerate(chain.links))
    if (!builders[k]->outputVisibleAfterStep(link.output))
      return rejectStack(first, "a layer's output is complete only at the "
                                "block barrier that ends its step");
  // The batch bound of the layers' own kernels: measured on the H100 at
  // char-rnn's sizes, the stack's kernel is faster than the layers' at
  // every batch to 192 and than the per-step lowering to 192 as well
  // (docs/benchmarks.md), though its layers after the first multiply twice
  // as much a step.
  mostBatch = std::numeric_limits<int32_t>::max();
  // Except where a layer's projection in the step (the link's product,
  // twice the weights) makes its warps take their rows one at a time
  // where its own kernel's did not: a chunk of one row a warp, the whole
  // step's work as in a kernel of one row at a time (appleyard's layers,
  // whose bound was measured on their whole work). Measured on the H100: a
  // stack of two H = 256 layers beat the per-step lowering to B = 32 (its
  // second layer's work with the link, 2^24) and lost from 48, where the
  // layers' own bound is 64 (docs/benchmarks.md, "The cost model's
  // bounds with row tiles").
  for (auto [layer, builder] : llvm::zip(chain.layers, builders)) {
    PersistentChoice own = choosePersistent(layer, options);
    mostBatch = std::min(mostBatch, own.maxBatch);
    if (builder->takesRowsOneAtATime() && !own.rowsOneAtATime)
      mostBatch = std::min(mostBatch, builder->costModelMaxBatch());
  }
  if (options.costModel &&
      (mostBatch < 1 ||
       !llvm::all_of(builders, [](auto &b) { return b->usesRegisters(); })))
    return rejectStack(first, "the cost model: a layer's warps cannot keep "
                              "their weights in registers");
  LLVM_DEBUG({
    for (auto [k, builder] : llvm::enumerate(builders)) {
      llvm::dbgs() << "lstm-to-persistent: " << first.getLoc()
                   << ": stack layer " << k << ": ";
      builder->printLayout(llvm::dbgs());
      llvm::dbgs() << "\n";
    }
  });
  return success();
}

void StackKernel::build(StringRef kernelName, ArrayRef<Operation *> dead) {
  LayerOp last = chain.layers.back();
  Location loc = last.getLoc();
  rewriter.setInsertionPoint(last);
  PersistentKernelBuilder &head = *builders.front();
  head.prepareBuffers();
  for (auto [k, link] : llvm::enumerate(chain.links)) {
    PersistentKernelBuilder &builder = *builders[k + 1];
    builder.setStackExtents(head.sequenceLength(), head.batchSize());
    builder.setStackInput(link.input, builders[k]->outputBuffer(link.output));
    builder.prepareBuffers();
  }
  // Each link's expansion gives the later layer the earlier one's [T, B]
  // (the kernel indexes both with the first layer's).
  for (const Link &link : chain.links) {
    auto expand = cast<tensor::ExpandShapeOp>(link.projection.front());
    Value extents[] = {head.sequenceLength(), head.batchSize()};
    for (auto [d, extent] : llvm::enumerate(
             ArrayRef(expand.getMixedOutputShape()).take_front(2))) {
      Value v = getValueOrCreateConstantIndexOp(rewriter, loc, extent);
      if (v == extents[d])
        continue;
      Value same = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::eq, v, extents[d]);
      cf::AssertOp::create(
          rewriter, loc, same,
          "lstm.layer: the input sequence reshaped from the layer before's "
          "output has a different " +
              std::string(d == 0 ? "length" : "batch size") + " (at " +
              describeLocation(link.from->getLoc()) + ")");
    }
  }
  auto layers = int64_t(chain.layers.size());
  int64_t barriers = 1;
  for (auto &builder : builders)
    barriers = std::max<int64_t>(barriers, builder->gridBarriersPerStep());
  Value iterations = arith::AddIOp::create(
      rewriter, loc, head.sequenceLength(),
      arith::ConstantIndexOp::create(rewriter, loc, layers - 1));
  Value counter = head.allocateCounter(iterations, totalBlocks, barriers);
  // The shared memory of the layer that stages the most.
  Value sharedBytes;
  for (auto &builder : builders) {
    if (builder->sharedBytes() == 0)
      continue;
    Value bytes = builder->sharedBytesAt(rewriter, head.batchSize());
    sharedBytes =
        sharedBytes ? arith::MaxUIOp::create(rewriter, loc, sharedBytes, bytes)
                          .getResult()
                    : bytes;
  }
  if (sharedBytes)
    sharedBytes = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI32Type(), sharedBytes);
  auto index = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value one = index(rewriter, 1);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, index(rewriter, totalBlocks), one, one,
      index(rewriter, builders.front()->threadsPerBlock()), one, one,
      sharedBytes, /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/{}, /*privateAttributions=*/{},
      /*clusterSizeX=*/nullptr, /*clusterSizeY=*/nullptr,
      /*clusterSizeZ=*/nullptr,
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName),
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName));
  {
    OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
    b.setListener(rewriter.getListener());
    Value blockId = launch.getBlockIds().x;
    Value threadId = launch.getThreadIds().x;
    int64_t offset = 0;
    for (auto [k, builder] : llvm::enumerate(builders)) {
      // The layer's blocks: [offset, offset + its grid).
      Value local = arith::SubIOp::create(b, loc, blockId, index(b, offset));
      Value mine =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, local,
                                index(b, builder->gridBlocks()));
      PersistentKernelBuilder::StepSchedule schedule;
      schedule.iterations = iterations;
      schedule.lag = int64_t(k);
      schedule.barriers = barriers;
      schedule.stack = true;
      scf::IfOp::create(b, loc, mine, [&](OpBuilder &ib, Location) {
        builder->setCounter(counter);
        builder->buildBlocks(ib, local, threadId, schedule);
        scf::YieldOp::create(ib, loc);
      });
      offset += builder->gridBlocks();
    }
    gpu::TerminatorOp::create(b, loc);
  }
  rewriter.setInsertionPointAfter(launch);
  for (auto &builder : llvm::reverse(builders))
    builder->replaceLayer();
  // (What the kernel reads of them stays: a link's weight assembled
  // between the layers.)
  for (Operation *op : llvm::reverse(dead))
    if (op->use_empty())
      rewriter.eraseOp(op);
}
