//===- MergeGPULaunches.cpp - Independent launches as one -----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A launch that copies a state or fills a gradient with zeros moves a few
// kilobytes: its cost is the launch, about a microsecond on the GPU and the
// gap before the next kernel. Consecutive launches that do not depend on
// each other become one whose blocks are theirs side by side: block b runs
// the body of the launch whose range of blocks holds b, with its block
// index taken relative to that range.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/MergeGPULaunches/MergeGPULaunches.h"
#include "lstm/Conversion/Utils/BufferAccesses.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_MERGEGPULAUNCHESPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

namespace {
/// A launch that may merge, and what it touches.
struct Candidate {
  gpu::LaunchOp launch;
  SmallVector<BufferAccess> accesses;
};
} // namespace

static bool isOne(Value v) {
  std::optional<int64_t> c = getConstantIntValue(v);
  return c && *c == 1;
}

/// The launch's memory accesses, or nothing where it cannot merge: a
/// kernel with a name (the persistent kernels, whose grid barriers count
/// the grid's blocks), dynamic shared memory, asynchronous dependencies,
/// attributions, a grid or blocks of more than one dimension, a body of
/// several blocks, or an op whose effects name no memref.
static std::optional<Candidate> analyze(gpu::LaunchOp launch) {
  if (launch.getFunctionAttr() || launch.getDynamicSharedMemorySize() ||
      launch.getAsyncToken() || !launch.getAsyncDependencies().empty() ||
      !launch.getWorkgroupAttributions().empty() ||
      !launch.getPrivateAttributions().empty() || launch.hasClusterSize() ||
      !launch.getBody().hasOneBlock() || !isOne(launch.getGridSizeY()) ||
      !isOne(launch.getGridSizeZ()) || !isOne(launch.getBlockSizeY()) ||
      !isOne(launch.getBlockSizeZ()))
    return std::nullopt;
  if (launch.getBody()
          .walk([](GridBarrierOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return std::nullopt;
  FailureOr<SmallVector<BufferAccess>> accesses = collectBufferAccesses(launch);
  if (failed(accesses))
    return std::nullopt;
  return Candidate{launch, std::move(*accesses)};
}

static bool sameBlockSize(gpu::LaunchOp a, gpu::LaunchOp b) {
  if (a.getBlockSizeX() == b.getBlockSizeX())
    return true;
  std::optional<int64_t> x = getConstantIntValue(a.getBlockSizeX());
  std::optional<int64_t> y = getConstantIntValue(b.getBlockSizeX());
  return x && y && *x == *y;
}

/// One launch for `group`, at the last one's place.
static void merge(MutableArrayRef<Candidate> group) {
  gpu::LaunchOp last = group.back().launch;
  Location loc = last.getLoc();
  OpBuilder b(last);
  // Launch i takes blocks [ends[i - 1], ends[i]).
  SmallVector<Value> ends;
  for (Candidate &c : group) {
    Value grid = c.launch.getGridSizeX();
    ends.push_back(
        ends.empty() ? grid : arith::AddIOp::create(b, loc, ends.back(), grid));
  }
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto merged = gpu::LaunchOp::create(b, loc, ends.back(), one, one,
                                      last.getBlockSizeX(), one, one);
  OpBuilder body = OpBuilder::atBlockBegin(&merged.getBody().front());
  Value block = merged.getBlockIds().x;
  // Launch i's body where the block is below ends[i] and past the ranges
  // before it, in a chain of branches.
  std::function<void(OpBuilder &, size_t)> emit = [&](OpBuilder &nb, size_t i) {
    gpu::LaunchOp launch = group[i].launch;
    auto clone = [&](OpBuilder &cb) {
      IRMapping mapping;
      Value local = block;
      if (i != 0)
        local = arith::SubIOp::create(cb, loc, block, ends[i - 1]);
      mapping.map(launch.getBlockIds().x, local);
      mapping.map(launch.getBlockIds().y, merged.getBlockIds().y);
      mapping.map(launch.getBlockIds().z, merged.getBlockIds().z);
      mapping.map(launch.getThreadIds().x, merged.getThreadIds().x);
      mapping.map(launch.getThreadIds().y, merged.getThreadIds().y);
      mapping.map(launch.getThreadIds().z, merged.getThreadIds().z);
      mapping.map(launch.getGridSize().x, launch.getGridSizeX());
      mapping.map(launch.getGridSize().y, merged.getGridSize().y);
      mapping.map(launch.getGridSize().z, merged.getGridSize().z);
      mapping.map(launch.getBlockSize().x, merged.getBlockSize().x);
      mapping.map(launch.getBlockSize().y, merged.getBlockSize().y);
      mapping.map(launch.getBlockSize().z, merged.getBlockSize().z);
      for (Operation &op : launch.getBody().front().without_terminator())
        cb.clone(op, mapping);
    };
    if (i + 1 == group.size()) {
      clone(nb);
      return;
    }
    Value mine = arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::ult,
                                       block, ends[i]);
    scf::IfOp::create(
        nb, loc, mine,
        [&](OpBuilder &tb, Location) {
          clone(tb);
          scf::YieldOp::create(tb, loc);
        },
        [&](OpBuilder &eb, Location) {
          emit(eb, i + 1);
          scf::YieldOp::create(eb, loc);
        });
  };
  emit(body, 0);
  gpu::TerminatorOp::create(body, loc);
  for (Candidate &c : group)
    c.launch.erase();
}

namespace {
struct MergeGPULaunchesPass
    : lstm::impl::MergeGPULaunchesPassBase<MergeGPULaunchesPass> {
  void runOnOperation() override {
    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    // Merging adds ops to these blocks, whose dominance is by order.
    DominanceInfo dominance(getOperation());
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) {
      if (!block->getParentOp()->getParentOfType<gpu::LaunchOp>() &&
          !isa<gpu::LaunchOp>(block->getParentOp()))
        blocks.push_back(block);
    });
    for (Block *block : blocks) {
      SmallVector<Candidate> group;
      auto flush = [&] {
        if (group.size() > 1)
          merge(group);
        group.clear();
      };
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        auto launch = dyn_cast<gpu::LaunchOp>(op);
        if (!launch) {
          if (!touchesNoMemory(&op))
            flush();
          continue;
        }
        std::optional<Candidate> candidate = analyze(launch);
        if (!candidate) {
          flush();
          continue;
        }
        bool joins =
            !group.empty() && sameBlockSize(group.front().launch, launch) &&
            llvm::all_of(group, [&](const Candidate &member) {
              return independentAccesses(member.accesses, candidate->accesses,
                                         aliases, dominance);
            });
        if (!joins)
          flush();
        group.push_back(std::move(*candidate));
      }
      flush();
    }
  }
};
} // namespace
