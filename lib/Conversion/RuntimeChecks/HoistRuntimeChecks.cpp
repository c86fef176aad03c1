//===- HoistRuntimeChecks.cpp - Run-time checks out of loops --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The checks of a cell's ops are generated where the ops are, in the time
// loop, although they compare extents that no step changes: host work per
// step, and on the GPU path a gpu.wait before each (a cf.assert is host
// code; gpu-async-region ends the chain of async launches there). This
// pass moves a loop-invariant check before its loop, guarded so that a loop
// without steps still checks nothing.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/RuntimeChecks/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_HOISTRUNTIMECHECKSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Whether `op` may run before the loop even when the loop runs no step:
/// no memory effects, and nothing in it that may be undefined behaviour on
/// values the loop would have guarded (a division by zero, say). An scf.if
/// qualifies when everything inside it does.
static bool isHoistable(Operation *op) {
  if (!isMemoryEffectFree(op))
    return false;
  WalkResult result = op->walk([](Operation *nested) {
    if (isa<scf::IfOp, scf::YieldOp>(nested) || isSpeculatable(nested))
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// The ops of `loop`'s body that compute `condition`, in program order, if
/// they have no memory effects and read, besides each other's results, only
/// values defined outside the loop; failure otherwise.
static FailureOr<SmallVector<Operation *>> invariantSlice(scf::ForOp loop,
                                                          Value condition) {
  llvm::SetVector<Operation *> slice;
  SmallVector<Value> worklist = {condition};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!loop->isAncestor(v.getParentRegion()->getParentOp()))
      continue; // Defined outside the loop.
    Operation *def = v.getDefiningOp();
    // The induction variable varies; a value of a nested region is not
    // ours to move.
    if (!def || def->getBlock() != loop.getBody() || !isHoistable(def))
      return failure();
    if (!slice.insert(def))
      continue;
    // What the op and its regions read from around it.
    def->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        if (!def->isAncestor(operand.getParentRegion()->getParentOp()))
          worklist.push_back(operand);
    });
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// Moves the invariant checks directly in `loop`'s body before it.
static void hoistChecks(scf::ForOp loop) {
  SmallVector<cf::AssertOp> asserts(loop.getBody()->getOps<cf::AssertOp>());
  if (asserts.empty())
    return;
  OpBuilder b(loop);
  IRMapping mapping;
  Value noStep;
  llvm::DenseSet<std::pair<Value, StringAttr>> made;
  for (cf::AssertOp check : asserts) {
    FailureOr<SmallVector<Operation *>> slice =
        invariantSlice(loop, check.getArg());
    if (failed(slice))
      continue;
    for (Operation *op : *slice)
      if (!mapping.contains(op))
        b.clone(*op, mapping);
    Location loc = check.getLoc();
    if (!noStep)
      noStep = arith::CmpIOp::create(
          b, loop.getLoc(),
          loop.getUnsignedCmp() ? arith::CmpIPredicate::uge
                                : arith::CmpIPredicate::sge,
          loop.getLowerBound(), loop.getUpperBound());
    Value condition = mapping.lookupOrDefault(check.getArg());
    if (made.insert({condition, check.getMsgAttr()}).second) {
      Value holds = arith::OrIOp::create(b, loc, condition, noStep);
      cf::AssertOp::create(b, loc, holds, check.getMsgAttr());
    }
    check.erase();
  }
}

struct HoistRuntimeChecksPass
    : lstm::impl::HoistRuntimeChecksPassBase<HoistRuntimeChecksPass> {
  void runOnOperation() override {
    // Post-order: inner loops first, so that a check hoisted out of an
    // inner loop is then considered for the loop around it.
    getOperation().walk([](scf::ForOp loop) { hoistChecks(loop); });
  }
};

} // namespace
