//===- ForkIndependentWork.cpp - Independent products on GPU streams ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The weight gradients at the end of a backward pass are GEMMs of a few
// SMs' worth of tiles each (char-rnn's: [512 × T·B] · [T·B × 128]), and they
// do not depend on each other. This pass groups a block's device work by
// the buffers it shares and sends the groups with products to different
// streams between a fork and a join of the runtime (ForkedStreams.cpp).
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ForkIndependentWork/ForkIndependentWork.h"
#include "lstm/Conversion/Utils/BufferAccesses.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Dominance.h"
#include "llvm/ADT/EquivalenceClasses.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_FORKINDEPENDENTWORKPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

/// The runtime's entry points (lstm/Runtime/CudaRuntime.h).
static constexpr llvm::StringLiteral kFork = "lstmRuntimeStreamFork";
static constexpr llvm::StringLiteral kSelect = "lstmRuntimeStreamSelect";
static constexpr llvm::StringLiteral kJoin = "lstmRuntimeStreamJoin";

namespace {
/// An op of device work in a run, what it touches, and whether it is a
/// product (what is worth a stream of its own).
struct Work {
  Operation *op;
  SmallVector<BufferAccess> accesses;
  bool product;
};

/// A run of ops that the pass may reorder: device work, ops that touch no
/// memory, frees.
struct Run {
  SmallVector<Operation *> neutral, frees;
  SmallVector<Work> work;
  bool empty() const { return work.empty(); }
};
} // namespace

/// Whether `memref` is device memory: a `gpu.alloc`'s buffer or a
/// function's argument (the library's callers pass device pointers), a
/// view of one, or a branch's or loop's result (or iteration argument)
/// that is one on every path. Host buffers (`memref.alloc`, which
/// lstm-convert-host-memory-to-gpu leaves to what the host reads) are work
/// of the host, in program order.
static bool isDeviceBuffer(Value memref, DenseSet<Value> &visited) {
  Value root = viewRoot(memref);
  if (!visited.insert(root).second)
    return true; // a loop's cycle: decided by its other values
  if (auto arg = dyn_cast<BlockArgument>(root)) {
    Operation *parent = arg.getOwner()->getParentOp();
    if (isa<func::FuncOp>(parent))
      return true;
    auto loop = dyn_cast<scf::ForOp>(parent);
    if (!loop || arg.getArgNumber() < loop.getNumInductionVars())
      return false;
    unsigned i = arg.getArgNumber() - loop.getNumInductionVars();
    return isDeviceBuffer(loop.getInitArgs()[i], visited) &&
           isDeviceBuffer(loop.getYieldedValues()[i], visited);
  }
  Operation *def = root.getDefiningOp();
  if (isa<gpu::AllocOp>(def))
    return true;
  unsigned i = cast<OpResult>(root).getResultNumber();
  if (auto branch = dyn_cast<scf::IfOp>(def))
    return branch.elseBlock() &&
           isDeviceBuffer(branch.thenYield().getOperand(i), visited) &&
           isDeviceBuffer(branch.elseYield().getOperand(i), visited);
  if (auto loop = dyn_cast<scf::ForOp>(def))
    return isDeviceBuffer(loop.getInitArgs()[i], visited) &&
           isDeviceBuffer(loop.getYieldedValues()[i], visited);
  return false;
}

static std::optional<Work> asWork(Operation *op);

/// Whether every access is to device memory.
static bool onDevice(ArrayRef<BufferAccess> accesses) {
  return llvm::all_of(accesses, [](const BufferAccess &access) {
    DenseSet<Value> visited;
    return isDeviceBuffer(access.memref, visited);
  });
}

/// A loop or branch whose ops are all device work, ops that touch no memory
/// and frees of device buffers (lstm-split-tf32-gemms's product in parts,
/// behind its check of the extents) as one piece of work: a product if it
/// holds one. The buffers it yields count as written by it, so that what
/// reads them stays in its group, after it.
static std::optional<Work> asStructuredWork(Operation *op) {
  bool product = false, work = false;
  WalkResult walk = op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    if (nested == op || isa<scf::ForOp, scf::IfOp>(nested))
      return WalkResult::advance();
    if (isa<scf::YieldOp, gpu::DeallocOp>(nested))
      return WalkResult::skip();
    if (std::optional<Work> inner = asWork(nested)) {
      work = true;
      product |= inner->product;
      return WalkResult::skip();
    }
    if (!isa<gpu::LaunchOp>(nested) && touchesNoMemory(nested))
      return WalkResult::skip();
    return WalkResult::interrupt();
  });
  if (walk.wasInterrupted() || !work)
    return std::nullopt;
  FailureOr<SmallVector<BufferAccess>> accesses = collectBufferAccesses(op);
  if (failed(accesses))
    return std::nullopt;
  for (Value result : op->getResults()) {
    if (!isa<BaseMemRefType>(result.getType()))
      return std::nullopt;
    accesses->push_back({result, /*write=*/true});
  }
  if (accesses->empty() || !onDevice(*accesses))
    return std::nullopt;
  return Work{op, std::move(*accesses), product};
}

/// `op` as device work, or nothing where it is not: linalg ops, copies,
/// fills and launches (without a name: the persistent kernels' grid
/// barriers need the whole GPU) on device buffers, with no results, and
/// loops and branches of them (asStructuredWork).
static std::optional<Work> asWork(Operation *op) {
  if (isa<scf::ForOp, scf::IfOp>(op))
    return asStructuredWork(op);
  if (op->getNumResults() != 0)
    return std::nullopt;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (linalgOp && !linalgOp.hasPureBufferSemantics())
    return std::nullopt;
  if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
    if (launch.getFunctionAttr() || !launch.getAsyncDependencies().empty() ||
        launch.getBody()
            .walk([](GridBarrierOp) { return WalkResult::interrupt(); })
            .wasInterrupted())
      return std::nullopt;
  } else if (auto memset = dyn_cast<gpu::MemsetOp>(op)) {
    if (!memset.getAsyncDependencies().empty())
      return std::nullopt;
  } else if (auto memcpy = dyn_cast<gpu::MemcpyOp>(op)) {
    if (!memcpy.getAsyncDependencies().empty())
      return std::nullopt;
  } else if (!linalgOp && !isa<memref::CopyOp>(op)) {
    return std::nullopt;
  }
  FailureOr<SmallVector<BufferAccess>> accesses = collectBufferAccesses(op);
  if (failed(accesses) || accesses->empty() || !onDevice(*accesses))
    return std::nullopt;
  return Work{op, std::move(*accesses),
              linalgOp && linalgOp.getNumReductionLoops() > 0};
}

/// `name(argTypes) -> ()`, declared once in `module`.
static func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                           TypeRange argTypes) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto function =
      func::FuncOp::create(builder, module.getLoc(), name,
                           builder.getFunctionType(argTypes, TypeRange()));
  function.setPrivate();
  return function;
}

namespace {
struct ForkIndependentWorkPass
    : lstm::impl::ForkIndependentWorkPassBase<ForkIndependentWorkPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxStreams < 1) {
      getOperation().emitError("lstm-fork-independent-work: max-streams must "
                               "be at least 1 (got ")
          << static_cast<int64_t>(maxStreams) << ")";
      return signalPassFailure();
    }
    if (maxStreams == 1)
      return;
    ModuleOp module = getOperation();
    AliasAnalysis &aliases = getAnalysis<AliasAnalysis>();
    DominanceInfo dominance(module);
    SmallVector<Block *> blocks;
    for (auto function : module.getOps<func::FuncOp>())
      function.walk([&](Block *block) {
        Operation *parent = block->getParentOp();
        if (!isa<gpu::LaunchOp>(parent) &&
            !parent->getParentOfType<gpu::LaunchOp>())
          blocks.push_back(block);
      });
    for (Block *block : blocks) {
      Run run;
      for (Operation &op : llvm::make_early_inc_range(*block)) {
        if (op.hasTrait<OpTrait::IsTerminator>()) {
          rewrite(run, &op, aliases, dominance);
          run = Run();
        } else if (std::optional<Work> work = asWork(&op)) {
          run.work.push_back(std::move(*work));
        } else if (isa<gpu::DeallocOp, memref::DeallocOp>(op) &&
                   op.getNumResults() == 0 && !run.empty()) {
          run.frees.push_back(&op);
        } else if (!isa<gpu::LaunchOp>(op) && touchesNoMemory(&op)) {
          // (A launch that is not work, even one whose body declares no
          // effects, keeps its place among the GPU's work.)
          // The run's ops that touch no memory move before its work: one
          // that reads what a loop or branch of the run yields ends it.
          if (readsResultOf(&op, run)) {
            rewrite(run, &op, aliases, dominance);
            run = Run();
          }
          run.neutral.push_back(&op);
        } else {
          rewrite(run, &op, aliases, dominance);
          run = Run();
        }
      }
    }
  }

  /// Whether `op` (or an op nested in it) reads a value that work of `run`
  /// defines.
  static bool readsResultOf(Operation *op, const Run &run) {
    return op
        ->walk([&](Operation *nested) {
          for (Value operand : nested->getOperands())
            if (Operation *def = operand.getDefiningOp())
              if (llvm::any_of(run.work,
                               [&](const Work &w) { return w.op == def; }))
                return WalkResult::interrupt();
          return WalkResult::advance();
        })
        .wasInterrupted();
  }

  /// Splits `run` among streams where at least two of its independent
  /// groups hold a product; its ops end up before `next`, the op that ended
  /// it.
  void rewrite(Run &run, Operation *next, AliasAnalysis &aliases,
               DominanceInfo &dominance) {
    if (run.work.size() < 2)
      return;
    // Groups: work that touches a buffer that other work writes (or writes
    // one the other touches) stays with it, in program order.
    llvm::EquivalenceClasses<unsigned> groups;
    for (unsigned i = 0; i < run.work.size(); ++i) {
      groups.insert(i);
      for (unsigned j = 0; j < i; ++j)
        if (!independentAccesses(run.work[j].accesses, run.work[i].accesses,
                                 aliases, dominance))
          groups.unionSets(i, j);
    }
    // The groups with a product, by their first op.
    SmallVector<unsigned> productGroups;
    for (unsigned i = 0; i < run.work.size(); ++i) {
      unsigned leader = groups.getLeaderValue(i);
      if (run.work[i].product && !llvm::is_contained(productGroups, leader))
        productGroups.push_back(leader);
    }
    if (productGroups.size() < 2)
      return;
    int64_t streams =
        std::min<int64_t>(maxStreams, int64_t(productGroups.size()));
    auto streamOf = [&](unsigned i) -> int64_t {
      const auto *it = llvm::find(productGroups, groups.getLeaderValue(i));
      if (it == productGroups.end())
        return 0;
      return (it - productGroups.begin()) % streams;
    };

    ModuleOp module = getOperation();
    OpBuilder builder(next);
    Type i32 = builder.getI32Type();
    func::FuncOp fork = declareRuntimeFunction(module, kFork, i32);
    func::FuncOp select = declareRuntimeFunction(module, kSelect, i32);
    func::FuncOp join = declareRuntimeFunction(module, kJoin, {});
    Location loc = run.work.front().op->getLoc();
    auto constant = [&](int64_t value) -> Value {
      return arith::ConstantIntOp::create(builder, loc, i32, value);
    };
    // Nothing of the run reads what these define but its own ops, and they
    // touch no memory: before the fork, the run's allocations are ordered
    // on the run's stream, where its frees are too.
    for (Operation *op : run.neutral)
      op->moveBefore(next);
    func::CallOp::create(builder, loc, fork, constant(streams));
    // The side streams' work first, then the run's stream's.
    for (int64_t s = 1; s <= streams; ++s) {
      int64_t stream = s % streams;
      func::CallOp::create(builder, loc, select, constant(stream));
      for (unsigned i = 0; i < run.work.size(); ++i)
        if (streamOf(i) == stream)
          run.work[i].op->moveBefore(next);
    }
    func::CallOp::create(builder, loc, join, ValueRange());
    for (Operation *op : run.frees)
      op->moveBefore(next);
  }
};
} // namespace
