//===- ParallelLoopsToGPU.cpp - scf.parallel to 1-D gpu.launch ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The iteration space of a step's linalg ops is small and dynamic ([B, H]
// with a run-time batch size), so the simplest mapping is also the most
// robust: one thread per iteration of the linearised space, guarded by a
// bounds check, in blocks of a fixed size.
//
// Constants (memref.get_global) that a kernel reads are read from the
// kernels' module: the launch gets its own memref.get_global, which kernel
// outlining turns into a global of the gpu.module, in device memory.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ParallelLoopsToGPU/ParallelLoopsToGPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTPARALLELLOOPSTOGPUPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Rewrites `loop` into a gpu.launch of ceil(N / blockSize) blocks, N the
/// product of the trip counts.
static void launchLoop(OpBuilder &b, scf::ParallelOp loop, int64_t blockSize) {
  Location loc = loop.getLoc();
  b.setInsertionPoint(loop);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);

  // Trip count of each dimension: ceil((ub - lb) / step), clamped at 0.
  SmallVector<Value> counts;
  Value total = one;
  for (auto [lb, ub, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = arith::SubIOp::create(b, loc, ub, lb);
    Value stepMinus1 = arith::SubIOp::create(b, loc, step, one);
    Value count = arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, span, stepMinus1), step);
    Value positive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, span, zero);
    count = arith::SelectOp::create(b, loc, positive, count, zero);
    counts.push_back(count);
    total = arith::MulIOp::create(b, loc, total, count);
  }
  Value block = arith::ConstantIndexOp::create(b, loc, blockSize);
  Value blockMinus1 = arith::ConstantIndexOp::create(b, loc, blockSize - 1);
  Value grid = arith::DivUIOp::create(
      b, loc, arith::AddIOp::create(b, loc, total, blockMinus1), block);

  auto launch = gpu::LaunchOp::create(b, loc, grid, one, one, block, one, one);
  b.setInsertionPointToStart(&launch.getBody().front());
  Value bid = launch.getBlockIds().x;
  Value tid = launch.getThreadIds().x;
  Value id = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, bid, block), tid);
  Value inRange =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, id, total);
  auto guard = scf::IfOp::create(b, loc, inRange, /*withElse=*/false);
  b.setInsertionPointToStart(&guard.getThenRegion().front());

  // Delinearise, innermost dimension fastest (coalesced for row-major data).
  IRMapping map;
  Value rest = id;
  for (int64_t d = loop.getNumLoops() - 1; d >= 0; --d) {
    Value index = arith::RemUIOp::create(b, loc, rest, counts[d]);
    rest = arith::DivUIOp::create(b, loc, rest, counts[d]);
    Value iv = arith::AddIOp::create(
        b, loc, loop.getLowerBound()[d],
        arith::MulIOp::create(b, loc, index, loop.getStep()[d]));
    map.map(loop.getInductionVars()[d], iv);
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, map);

  b.setInsertionPointToEnd(&launch.getBody().front());
  gpu::TerminatorOp::create(b, loc);
  loop.erase();

  // A constant (the copy kernel of HostMemoryToGPU reads one) is read from
  // the kernels' module, where outlining copies the global: the global of
  // the host code is host memory.
  b.setInsertionPointToStart(&launch.getBody().front());
  DenseMap<Value, Value> sunk;
  launch.getBody().walk([&](Operation *op) {
    for (OpOperand &operand : op->getOpOperands()) {
      auto getGlobal = operand.get().getDefiningOp<memref::GetGlobalOp>();
      if (!getGlobal || launch->isAncestor(getGlobal))
        continue;
      Value &inside = sunk[getGlobal.getResult()];
      if (!inside)
        inside = b.clone(*getGlobal)->getResult(0);
      operand.set(inside);
    }
  });
}

struct ConvertParallelLoopsToGPUPass
    : lstm::impl::ConvertParallelLoopsToGPUPassBase<
          ConvertParallelLoopsToGPUPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
        loops.push_back(loop);
        return WalkResult::skip(); // Nested loops run inside the kernel.
      }
      return WalkResult::advance();
    });
    for (scf::ParallelOp loop : loops) {
      if (!loop.getInitVals().empty()) {
        loop.emitError("parallel reductions are not mapped to the GPU");
        return signalPassFailure();
      }
      OpBuilder b(loop);
      launchLoop(b, loop, blockSize);
    }
  }
};

} // namespace
