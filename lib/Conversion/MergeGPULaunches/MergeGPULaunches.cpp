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
/// A memref defined outside a launch that the launch reads or writes.
struct Access {
  Value memref;
  bool write;
};

/// A launch that may merge, and what it touches.
struct Candidate {
  gpu::LaunchOp launch;
  SmallVector<Access> accesses;
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
  Candidate candidate{launch, {}};
  Region &body = launch.getBody();
  WalkResult walk = body.walk([&](Operation *op) {
    if (isa<GridBarrierOp>(op))
      return WalkResult::interrupt();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      // Loops and branches: their ops are visited in turn.
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &effect : list) {
      Value value = effect.getValue();
      if (!value)
        return WalkResult::interrupt();
      // To the memref defined outside, through the views the body takes.
      while (Operation *def = value.getDefiningOp()) {
        if (!body.isAncestor(def->getParentRegion()))
          break;
        auto view = dyn_cast<ViewLikeOpInterface>(def);
        if (!view)
          break;
        value = view.getViewSource();
      }
      if (body.isAncestor(value.getParentRegion()))
        continue; // the body's own memory
      candidate.accesses.push_back(
          {value, !isa<MemoryEffects::Read>(effect.getEffect())});
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return std::nullopt;
  return candidate;
}

/// Whether `op`, between two launches, touches no memory (so that the
/// earlier launch may move past it): pure ops, allocations, and assertions
/// (which only stop the program), looking into regions.
static bool touchesNoMemory(Operation *op) {
  if (isa<cf::AssertOp>(op))
    return true;
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    if (!llvm::all_of(list, [](const MemoryEffects::EffectInstance &e) {
          return isa<MemoryEffects::Allocate>(e.getEffect());
        }))
      return false;
  } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    return false;
  }
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (!touchesNoMemory(&nested))
        return false;
  return true;
}

/// The memref that `v` is a view of.
static Value viewRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether `a` is (a view of) a buffer allocated after `b` is defined:
/// `b`'s buffer is live then (the launches access it later), so the
/// allocation cannot return any of its memory. Alias analysis does not see
/// this where `b` is a loop's iteration argument, which may be a buffer an
/// earlier iteration allocated at the same op (a wavefront's gather buffer
/// and the links it reads).
static bool allocatedAfter(Value a, Value b, DominanceInfo &dominance) {
  Operation *alloc = viewRoot(a).getDefiningOp();
  if (!isa_and_present<memref::AllocOp, gpu::AllocOp>(alloc))
    return false;
  return dominance.properlyDominates(viewRoot(b), alloc);
}

/// Whether two slices of one memref select disjoint indices in some
/// dimension by their static offsets, sizes and strides.
static bool disjointSlices(memref::SubViewOp sliceA, memref::SubViewOp sliceB) {
  if (sliceA.getSource() != sliceB.getSource())
    return false;
  for (auto [offsetA, sizeA, strideA, offsetB, sizeB, strideB] :
       llvm::zip(sliceA.getStaticOffsets(), sliceA.getStaticSizes(),
                 sliceA.getStaticStrides(), sliceB.getStaticOffsets(),
                 sliceB.getStaticSizes(), sliceB.getStaticStrides())) {
    if (ShapedType::isDynamic(offsetA) || ShapedType::isDynamic(sizeA) ||
        ShapedType::isDynamic(strideA) || ShapedType::isDynamic(offsetB) ||
        ShapedType::isDynamic(sizeB) || ShapedType::isDynamic(strideB))
      continue;
    if (sizeA == 0 || sizeB == 0)
      return true;
    // The indices each selects span [low, high] whatever the stride's
    // sign.
    int64_t endA = offsetA + (sizeA - 1) * strideA;
    int64_t endB = offsetB + (sizeB - 1) * strideB;
    if (std::max(offsetA, endA) < std::min(offsetB, endB) ||
        std::max(offsetB, endB) < std::min(offsetA, endA))
      return true;
  }
  return false;
}

/// Whether memrefs `a` and `b` may share an element: not where alias
/// analysis says they do not (distinct allocations, an allocation and an
/// argument), nor where one is allocated after the other is defined, nor
/// where they are within slices of one memref whose static offsets, sizes
/// and strides in some dimension select disjoint indices (the states of a
/// stack, [L, B, N], written a layer at a time; the two halves of a
/// concatenation, one of them filled through slices of its slice).
static bool mayOverlap(Value a, Value b, AliasAnalysis &aliases,
                       DominanceInfo &dominance) {
  if (allocatedAfter(a, b, dominance) || allocatedAfter(b, a, dominance))
    return false;
  // A slice of a slice lies within the outer one: disjoint outer slices
  // have disjoint contents.
  for (auto sliceA = a.getDefiningOp<memref::SubViewOp>(); sliceA;
       sliceA = sliceA.getSource().getDefiningOp<memref::SubViewOp>())
    for (auto sliceB = b.getDefiningOp<memref::SubViewOp>(); sliceB;
         sliceB = sliceB.getSource().getDefiningOp<memref::SubViewOp>())
      if (disjointSlices(sliceA, sliceB))
        return false;
  return !aliases.alias(a, b).isNo();
}

/// Whether `later` may run beside `earlier`: neither writes an element the
/// other reads or writes.
static bool independent(const Candidate &earlier, const Candidate &later,
                        AliasAnalysis &aliases, DominanceInfo &dominance) {
  for (const Access &a : earlier.accesses)
    for (const Access &b : later.accesses)
      if ((a.write || b.write) &&
          mayOverlap(a.memref, b.memref, aliases, dominance))
        return false;
  return true;
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
              return independent(member, *candidate, aliases, dominance);
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
