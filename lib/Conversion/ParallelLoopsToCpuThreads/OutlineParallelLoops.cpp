//===- OutlineParallelLoops.cpp - Parallel loops as functions of a range --===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// On the CPU, a network's elementwise work (a step's fused cell, the
// backward's pointwise derivatives) is an scf.parallel once linalg is
// lowered. For the runtime to run parts of it on other threads, the loop
// must be a function of an iteration range; this pass makes that function
// and calls it on the whole range. lstm-dispatch-parallel-bodies, on the
// LLVM dialect, turns the call into one through the runtime's thread pool:
// only there can the loop's buffers be stored in memory for the threads to
// read (a memref cannot be written to memory and read back as a memref).
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ParallelLoopsToCpuThreads/ParallelLoopsToCpuThreads.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The number of iterations from `lb` to `ub` by `step`, at least 0.
Value buildTripCount(OpBuilder &b, Location loc, Value lb, Value ub,
                     Value step) {
  Value span = b.createOrFold<arith::SubIOp>(loc, ub, lb);
  Value count = b.createOrFold<arith::CeilDivSIOp>(loc, span, step);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  return b.createOrFold<arith::MaxSIOp>(loc, count, zero);
}

/// The work the runtime is told a task loop's iteration is worth: enough
/// for a thread of its own (lstmRuntimeCpuParallelFor gives a thread at
/// least 2^16 operations).
constexpr int64_t kTaskWork = int64_t(1) << 40;

/// What one innermost iteration of `loop` costs, in operations of its body
/// (ops of loops nested in it counted once: an underestimate, which only
/// makes the runtime keep more calls on one thread).
int64_t countBodyOperations(scf::ParallelOp loop) {
  int64_t count = 0;
  loop.getBody()->walk([&](Operation *op) {
    if (!isa<scf::ReduceOp>(op))
      ++count;
  });
  return std::max<int64_t>(count, 1);
}

struct OutlineParallelLoopsPass
    : lstm::impl::OutlineParallelLoopsPassBase<OutlineParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The outermost loops of the module's own functions. A loop in a task
    // is outlined too: where the task is the only one (one part), the
    // runtime splits the loop among the threads; inside a task running on
    // a thread of a team, it runs on that thread.
    auto inFunction = [&](Operation *loop) {
      auto caller = loop->getParentOfType<func::FuncOp>();
      return caller && caller->getParentOp() == module &&
             !loop->getParentOfType<scf::ParallelOp>();
    };
    SmallVector<scf::ParallelOp> loops;
    SmallVector<scf::ForallOp> tasks;
    module.walk([&](Operation *op) {
      // A loop that yields reduced values has no per-range form here.
      if (auto loop = dyn_cast<scf::ParallelOp>(op);
          loop && inFunction(loop) && loop.getInitVals().empty())
        loops.push_back(loop);
      // A bufferized forall (no shared outputs) of one dimension.
      if (auto forall = dyn_cast<scf::ForallOp>(op);
          forall && inFunction(forall) &&
          !forall->getParentOfType<scf::ForallOp>() &&
          forall.getOutputs().empty() && forall.getRank() == 1)
        tasks.push_back(forall);
    });
    SymbolTable symbols(module);
    // Loops nested in a task first: its body then calls their functions.
    for (scf::ParallelOp loop : loops)
      outline(loop, symbols);
    for (scf::ForallOp forall : tasks)
      outline(forall, symbols);
  }

  /// The functions made so far. Two loops of the same code (the cells of
  /// a stack's layers, which differ in their weights only, or a layer's two
  /// forms under lstm-hoist-by-threads) call one: LLVM's code generation,
  /// most of a CPU compile, then runs once for them.
  SmallVector<func::FuncOp> bodies;

  /// `body` or an earlier function equivalent to it, which then replaces it.
  func::FuncOp deduplicate(func::FuncOp body, SymbolTable &symbols) {
    for (func::FuncOp earlier : bodies)
      if (earlier.getFunctionType() == body.getFunctionType() &&
          OperationEquivalence::isRegionEquivalentTo(
              &earlier.getBody(), &body.getBody(),
              OperationEquivalence::IgnoreLocations)) {
        symbols.erase(body);
        return earlier;
      }
    bodies.push_back(body);
    return body;
  }

  /// A new private function @<caller>_parallel(%lo, %hi, %work,
  /// passed...) for `loop`, its entry block's builder (after the cloned
  /// constants) and the mapping of the values it takes from outside.
  func::FuncOp makeBody(Operation *loop, SymbolTable &symbols,
                        SmallVectorImpl<Value> &passed, IRMapping &mapping,
                        OpBuilder &b) {
    auto caller = loop->getParentOfType<func::FuncOp>();
    Location loc = loop->getLoc();
    MLIRContext *context = loop->getContext();
    // What the loop takes from outside: constants are cloned into the new
    // function (its code generation sees static extents), the rest passed.
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(loop->getRegion(0), used);
    used.insert(loop->operand_begin(), loop->operand_end());
    SmallVector<Operation *> constants;
    for (Value value : used) {
      Operation *def = value.getDefiningOp();
      if (def && def->hasTrait<OpTrait::ConstantLike>())
        constants.push_back(def);
      else
        passed.push_back(value);
    }
    Type index = IndexType::get(context);
    SmallVector<Type> argTypes(3, index);
    for (Value value : passed)
      argTypes.push_back(value.getType());
    auto body =
        func::FuncOp::create(loc, (caller.getSymName() + "_parallel").str(),
                             FunctionType::get(context, argTypes, {}));
    body.setPrivate();
    body->setAttr(lstm::kParallelBodyAttrName, UnitAttr::get(context));
    symbols.insert(body, std::next(Block::iterator(caller)));
    Block *entry = body.addEntryBlock();
    b.setInsertionPointToStart(entry);
    for (Operation *constant : constants)
      b.clone(*constant, mapping);
    for (auto [value, arg] :
         llvm::zip_equal(passed, entry->getArguments().drop_front(3)))
      mapping.map(value, arg);
    return body;
  }

  /// Replaces `loop` by a call of `body` on iterations [0, count), each
  /// worth `work` operations.
  void callBody(Operation *loop, func::FuncOp body, SymbolTable &symbols,
                ArrayRef<Value> passed, Value count, Value work, OpBuilder &b) {
    body = deduplicate(body, symbols);
    SmallVector<Value> args = {
        arith::ConstantIndexOp::create(b, loop->getLoc(), 0), count, work};
    llvm::append_range(args, passed);
    func::CallOp::create(b, loop->getLoc(), body, args);
    loop->erase();
  }

  /// A task loop: each iteration a part of the work for a thread (a
  /// layer's rows, lstm-split-batch), as a function running the
  /// iterations [lo, hi) one after the other.
  void outline(scf::ForallOp forall, SymbolTable &symbols) {
    Location loc = forall.getLoc();
    SmallVector<Value> passed;
    IRMapping mapping;
    OpBuilder b(forall.getContext());
    func::FuncOp body = makeBody(forall, symbols, passed, mapping, b);
    Block *entry = &body.getBody().front();
    Value lo = entry->getArgument(0), hi = entry->getArgument(1);
    auto bound = [&](OpFoldResult v) {
      return getValueOrCreateConstantIndexOp(
          b, loc,
          isa<Value>(v) ? OpFoldResult(mapping.lookup(cast<Value>(v))) : v);
    };
    Value lb = bound(forall.getMixedLowerBound()[0]);
    Value step = bound(forall.getMixedStep()[0]);
    auto loop = scf::ForOp::create(b, loc, lo, hi,
                                   arith::ConstantIndexOp::create(b, loc, 1));
    OpBuilder inner = OpBuilder::atBlockBegin(loop.getBody());
    mapping.map(forall.getInductionVar(0),
                inner.createOrFold<arith::AddIOp>(
                    loc, lb,
                    inner.createOrFold<arith::MulIOp>(
                        loc, loop.getInductionVar(), step)));
    for (Operation &op : forall.getBody()->without_terminator())
      inner.clone(op, mapping);
    b.setInsertionPointAfter(loop);
    func::ReturnOp::create(b, loc);

    // Each iteration is worth a thread of its own.
    b.setInsertionPoint(forall);
    Value count = buildTripCount(
        b, loc,
        getValueOrCreateConstantIndexOp(b, loc, forall.getMixedLowerBound()[0]),
        getValueOrCreateConstantIndexOp(b, loc, forall.getMixedUpperBound()[0]),
        getValueOrCreateConstantIndexOp(b, loc, forall.getMixedStep()[0]));
    Value work = arith::ConstantIndexOp::create(b, loc, kTaskWork);
    callBody(forall, body, symbols, passed, count, work, b);
  }

  void outline(scf::ParallelOp loop, SymbolTable &symbols) {
    Location loc = loop.getLoc();
    SmallVector<Value> passed;
    IRMapping mapping;
    OpBuilder b(loop.getContext());
    func::FuncOp body = makeBody(loop, symbols, passed, mapping, b);
    Block *entry = &body.getBody().front();
    // The loop with its first dimension narrowed to the iterations
    // [lo, hi).
    Value lo = entry->getArgument(0), hi = entry->getArgument(1);
    Value lb = mapping.lookup(loop.getLowerBound()[0]);
    Value ub = mapping.lookup(loop.getUpperBound()[0]);
    Value step = mapping.lookup(loop.getStep()[0]);
    Value from = b.createOrFold<arith::AddIOp>(
        loc, lb, b.createOrFold<arith::MulIOp>(loc, lo, step));
    Value to = b.createOrFold<arith::MinSIOp>(
        loc, ub,
        b.createOrFold<arith::AddIOp>(
            loc, lb, b.createOrFold<arith::MulIOp>(loc, hi, step)));
    auto narrowed = cast<scf::ParallelOp>(b.clone(*loop, mapping));
    unsigned rank = loop.getNumLoops();
    narrowed->setOperand(0, from);
    narrowed->setOperand(rank, to);
    func::ReturnOp::create(b, loc);

    // The call on all iterations, with the work of one iteration of the
    // first dimension: the other dimensions' iterations times the body's
    // operations.
    b.setInsertionPoint(loop);
    Value count = buildTripCount(b, loc, loop.getLowerBound()[0],
                                 loop.getUpperBound()[0], loop.getStep()[0]);
    Value work =
        arith::ConstantIndexOp::create(b, loc, countBodyOperations(loop));
    for (unsigned d = 1; d < rank; ++d)
      work = b.createOrFold<arith::MulIOp>(
          loc, work,
          buildTripCount(b, loc, loop.getLowerBound()[d],
                         loop.getUpperBound()[d], loop.getStep()[d]));
    callBody(loop, body, symbols, passed, count, work, b);
  }
};

} // namespace
