//===- PrepareLoopGemms.cpp - Pack a loop's invariant GEMM operand once ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A time loop multiplies the carried state by the same recurrent weight at
// every step. After lstm-gemm-to-blas that is a call of lstmRuntimeCpuSgemm
// in the loop's body whose B never changes; the GEMM library repacks B at
// every call. This pass prepares the product once before the loop (B packed
// into the kernels' layout), computes it with the plan in the loop and
// releases the plan after (lib/Runtime/CpuPreparedGemm.cpp).
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/GemmToBlas/GemmToBlas.h"

#include "lstm/Conversion/Utils/GemmCall.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_PREPARELOOPGEMMSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

namespace {

/// The arguments of lstmRuntimeCpuSgemmPrepare, in order: everything but A,
/// C, their batch strides and the batch.
constexpr unsigned kPlanOperands[] = {
    kGemmTransA, kGemmTransB, kGemmM,   kGemmN,    kGemmK,  kGemmAlpha,
    kGemmLda,    kGemmB,      kGemmLdb, kGemmBeta, kGemmLdc};

/// The buffers that `value` (a pointer, a memref, an extent) is computed
/// from: arguments of `function` and allocations, through operations
/// without memory effects, the iteration arguments and results of scf.for
/// (a buffer carried by a loop is any of its initial and yielded buffers)
/// and the results of scf.if (any branch's); the iterations of scf.forall
/// and scf.parallel are indices. Fails on anything else (a
/// load, a call, a value of another region).
LogicalResult collectRoots(Value value, func::FuncOp function,
                           llvm::SmallPtrSetImpl<Value> &roots) {
  SmallVector<Value> work = {value};
  llvm::SmallPtrSet<Value, 16> seen;
  auto carried = [&](scf::ForOp loop, unsigned i) {
    work.push_back(loop.getInitArgs()[i]);
    work.push_back(loop.getYieldedValues()[i]);
  };
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Block *block = arg.getOwner();
      if (block == &function.getBody().front()) {
        if (isa<BaseMemRefType>(arg.getType()))
          roots.insert(arg);
        continue;
      }
      // The iteration of a task loop (a part of a layer's batch,
      // lstm-split-batch) or a parallel loop: an index, not a buffer.
      if (auto forall = dyn_cast<scf::ForallOp>(block->getParentOp());
          forall && llvm::is_contained(forall.getInductionVars(), arg))
        continue;
      if (auto parallel = dyn_cast<scf::ParallelOp>(block->getParentOp());
          parallel && llvm::is_contained(parallel.getInductionVars(), arg))
        continue;
      auto loop = dyn_cast<scf::ForOp>(block->getParentOp());
      if (!loop)
        return failure();
      if (arg == loop.getInductionVar())
        continue;
      carried(loop, arg.getArgNumber() - loop.getNumInductionVars());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (isa<memref::AllocOp, memref::AllocaOp>(def)) {
      roots.insert(v);
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(def)) {
      carried(loop, cast<OpResult>(v).getResultNumber());
      continue;
    }
    // A choice's result is what either branch yields (the hoisted or the
    // stepwise form of a layer, lstm-hoist-by-threads).
    if (auto choice = dyn_cast<scf::IfOp>(def)) {
      unsigned i = cast<OpResult>(v).getResultNumber();
      for (Region *branch : {&choice.getThenRegion(), &choice.getElseRegion()})
        if (!branch->empty())
          work.push_back(cast<scf::YieldOp>(branch->front().getTerminator())
                             .getOperand(i));
      continue;
    }
    // A view's buffer is its source's; its offsets and sizes are indices
    // (which may come from anything, a call of the runtime's thread count
    // included).
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      work.push_back(view.getViewSource());
      continue;
    }
    if (!isMemoryEffectFree(def) || def->getNumRegions() != 0)
      return failure();
    llvm::append_range(work, def->getOperands());
  }
  return success();
}

/// Whether an op in `loop` may write a buffer whose roots meet `roots`:
/// memref-level writes by their effects, GEMM calls by their C pointer;
/// any other call, or a write to a buffer of unknown roots, may write
/// anything.
bool loopMayWrite(scf::ForOp loop, func::FuncOp function,
                  const llvm::SmallPtrSetImpl<Value> &roots) {
  auto mayWrite = [&](Value target) {
    llvm::SmallPtrSet<Value, 4> targetRoots;
    if (failed(collectRoots(target, function, targetRoots)))
      return true;
    return llvm::any_of(targetRoots,
                        [&](Value r) { return roots.contains(r); });
  };
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    // An assertion's effect stands for stopping the program, not a write.
    if (isa<cf::AssertOp>(op))
      return WalkResult::advance();
    if (auto call = dyn_cast<func::CallOp>(op)) {
      StringRef callee = call.getCallee();
      if (callee == "lstmRuntimeCpuSgemm" || callee == "lstmRuntimeCpuDgemm")
        return mayWrite(call.getOperand(kGemmC)) ? WalkResult::interrupt()
                                                 : WalkResult::advance();
      // (plan, A, C)
      if (callee == "lstmRuntimeCpuSgemmPrepared")
        return mayWrite(call.getOperand(2)) ? WalkResult::interrupt()
                                            : WalkResult::advance();
      return WalkResult::interrupt();
    }
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects)
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &effect : list) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value target = effect.getValue();
      if (!target || mayWrite(target))
        return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

func::FuncOp declare(ModuleOp module, StringRef name, TypeRange inputs,
                     TypeRange results) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
  auto function = func::FuncOp::create(
      builder, module.getLoc(), name, builder.getFunctionType(inputs, results));
  function.setPrivate();
  return function;
}

struct PrepareLoopGemmsPass
    : lstm::impl::PrepareLoopGemmsPassBase<PrepareLoopGemmsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (call.getCallee() == "lstmRuntimeCpuSgemm" &&
          call.getNumOperands() == kGemmOperandCount)
        calls.push_back(call);
    });
    for (func::CallOp call : calls)
      prepare(module, call);
  }

  /// Whether `call`'s plan can be made before `loop`: its operands are
  /// defined outside, and B is a view of buffers that exist before the
  /// loop and that nothing in the loop writes.
  static bool invariantIn(func::CallOp call, scf::ForOp loop,
                          func::FuncOp function) {
    for (unsigned i : kPlanOperands)
      if (!loop.isDefinedOutsideOfLoop(call.getOperand(i)))
        return false;
    llvm::SmallPtrSet<Value, 4> roots;
    return succeeded(collectRoots(call.getOperand(kGemmB), function, roots)) &&
           !roots.empty() &&
           llvm::all_of(
               roots,
               [&](Value r) { return loop.isDefinedOutsideOfLoop(r); }) &&
           !loopMayWrite(loop, function, roots);
  }

  void prepare(ModuleOp module, func::CallOp call) {
    auto function = call->getParentOfType<func::FuncOp>();
    if (!function || getConstantIntValue(call.getOperand(kGemmBatch)) != 1)
      return;
    // The outermost of the loops around the call that the product is
    // invariant in: a layer run a chunk of steps at a time
    // (lstm-chunk-hoisted-projections) packs its recurrent weight once, not
    // once a chunk.
    scf::ForOp loop;
    for (auto parent = call->getParentOfType<scf::ForOp>();
         parent && invariantIn(call, parent, function);
         parent = parent->getParentOfType<scf::ForOp>())
      loop = parent;
    if (!loop)
      return;

    OpBuilder builder(loop);
    Location loc = call.getLoc();
    Type ptr = LLVM::LLVMPointerType::get(builder.getContext());
    SmallVector<Value> prepareArgs;
    for (unsigned i : kPlanOperands)
      prepareArgs.push_back(call.getOperand(i));
    func::FuncOp prepareFn =
        declare(module, "lstmRuntimeCpuSgemmPrepare",
                ValueRange(prepareArgs).getTypes(), TypeRange{ptr});
    func::FuncOp preparedFn = declare(module, "lstmRuntimeCpuSgemmPrepared",
                                      TypeRange{ptr, ptr, ptr}, TypeRange{});
    func::FuncOp releaseFn = declare(module, "lstmRuntimeCpuSgemmRelease",
                                     TypeRange{ptr}, TypeRange{});
    Value plan =
        func::CallOp::create(builder, loc, prepareFn, prepareArgs).getResult(0);
    builder.setInsertionPointAfter(loop);
    func::CallOp::create(builder, loc, releaseFn, ValueRange{plan});
    builder.setInsertionPoint(call);
    func::CallOp::create(
        builder, loc, preparedFn,
        ValueRange{plan, call.getOperand(kGemmA), call.getOperand(kGemmC)});
    call.erase();
  }
};

} // namespace
