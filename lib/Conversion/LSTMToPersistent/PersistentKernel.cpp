//===- PersistentKernel.cpp - The body of a persistent layer kernel -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each block owns a tile of units (columns of the [B, N] step) for every
// batch row. Per step, in each phase, the block copies the states the
// products read into shared memory (in chunks of rows when they do not fit;
// as asynchronous copies from sm_80 on), then each warp computes its share
// of the tile's elements (PersistentWarp.cpp; an element's pointwise work
// in PersistentElement.cpp). Where they fit, a warp's weights stay in its
// registers for the whole sequence (loaded once, before the time loop);
// otherwise they are read from global memory every step (L1 and L2 keep
// them). A cell whose products read values of the step runs each step in
// phases separated by grid barriers; what crosses phases goes through
// global scratch buffers. This file: the kernel's body, its blocks' loop of
// steps (a stack's blocks, each in its layer's schedule) and a step's
// phases.
//
//===----------------------------------------------------------------------===//

#include "PersistentKernelBuilder.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <optional>

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// One phase of a step: in chunks of rows, the warp's first operands
/// loaded early, the phase's product inputs staged, the warp's elements.
void PersistentKernelBuilder::buildPhase(OpBuilder &lb, unsigned phase,
                                         Value threadId, Value step, Value cur,
                                         Value next, Value slot, Value group,
                                         Value computes, Value lane) {
  int64_t chunk = phaseChunkRows[phase];
  scf::ForOp::create(
      lb, loc, rowBegin, rowEnd, index(lb, chunk), ValueRange(),
      [&](OpBuilder &cb, Location cl, Value first, ValueRange) {
        Value rows = arith::MinUIOp::create(
            cb, cl, index(cb, chunk),
            arith::SubIOp::create(cb, cl, rowEnd, first));
        // A warp with one unit loads the operands of its first rows before
        // the staging: their latency overlaps the staging's. (Not on
        // tensor cores: loading a warp's first tile's early gained nothing
        // in char-rnn's forward, and its training step took 0.655 ms
        // against 0.481: docs/benchmarks.md, "The depth split".)
        bool mma = tensorCores && !phaseProducts[phase].empty();
        std::optional<SmallVector<Value>> early;
        if (unitsPerWarp == 1 && !mma)
          early = loadOperands(
              cb, phase, step, cur,
              laneRow(cb, first, rows, group, index(cb, 0), groupRows[phase],
                      lane),
              warpUnit(cb, laneUnit(cb, slot, groupRows[phase], lane)).index);
        // A phase that stages nothing (one chunk: the whole batch) starts
        // after a barrier already.
        if (!stagedInputs[phase].empty()) {
          bool async = stageInputs(cb, phase, threadId, step, cur, first, rows);
          BlockBarrierOp::create(cb, cl, /*waitAsyncCopies=*/async);
        }
        scf::IfOp::create(cb, cl, computes, [&](OpBuilder &ib, Location) {
          if (mma)
            buildMmaChunk(
                ib, phase, step, cur, next, first, rows, slot, group,
                arith::DivUIOp::create(ib, cl, threadId, index(ib, kLanes)),
                lane);
          else
            buildWarpChunk(ib, phase, step, cur, next, first, rows, slot, group,
                           lane, early);
          scf::YieldOp::create(ib, cl);
        });
        // The next chunk overwrites the staged rows (the next phase's
        // staging comes after a grid barrier, itself a block barrier).
        Value more = arith::CmpIOp::create(
            cb, cl, arith::CmpIPredicate::ult,
            arith::AddIOp::create(cb, cl, first, index(cb, chunk)), rowEnd);
        scf::IfOp::create(cb, cl, more, [&](OpBuilder &ib, Location) {
          BlockBarrierOp::create(ib, cl);
          scf::YieldOp::create(ib, cl);
        });
        scf::YieldOp::create(cb, cl);
      });
}

void PersistentKernelBuilder::buildKernel(gpu::LaunchOp launch) {
  OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
  b.setListener(rewriter.getListener());
  StepSchedule schedule;
  schedule.iterations = seqLen;
  schedule.barriers = gridBarriersPerStep();
  buildBlocks(b, launch.getBlockIds().x, launch.getThreadIds().x, schedule);
  gpu::TerminatorOp::create(b, loc);
}

void PersistentKernelBuilder::buildBlocks(OpBuilder &b, Value blockId,
                                          Value threadId,
                                          const StepSchedule &schedule) {
  // The block's tile: units [unitTile · unitsPerBlock, ...) of the rows
  // [rowBegin, rowEnd), ⌈B / rowTiles⌉ a tile (fewer in the last, none in
  // the tiles past a small batch).
  unitTile = blockId;
  rowBegin = index(b, 0);
  rowEnd = batch;
  Value tileRows = batch;
  if (rowTiles > 1) {
    unitTile = arith::DivUIOp::create(b, loc, blockId, index(b, rowTiles));
    Value rowTile = arith::RemUIOp::create(b, loc, blockId, index(b, rowTiles));
    tileRows = tileRowsAt(b, batch);
    rowBegin = arith::MinUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, rowTile, tileRows), batch);
    rowEnd = arith::MinUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, rowBegin, tileRows), batch);
  }
  if (maxStaged != 0) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    Value shared = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
    // Each view holds a chunk: min(tile's rows, chunkRows) rows of the
    // widest, one after the other (sharedBytesAt), so that a tile smaller
    // than the chunk leaves the rest of the SM's shared memory to L1. The
    // view types keep the whole chunk's extent; a chunk never has more
    // rows than the tile.
    int64_t floats = chunkRows * maxInputWidth;
    Value viewBytes = arith::MulIOp::create(
        b, loc, arith::MinUIOp::create(b, loc, tileRows, index(b, chunkRows)),
        index(b, maxInputWidth * int64_t(sizeof(float))));
    sharedViews.clear();
    for (size_t i = 0; i < maxStaged; ++i)
      sharedViews.push_back(memref::ViewOp::create(
          b, loc,
          MemRefType::get({floats}, b.getF32Type(), MemRefLayoutAttrInterface(),
                          workgroup),
          shared,
          arith::MulIOp::create(b, loc, viewBytes, index(b, int64_t(i))),
          ValueRange()));
    // The warps' tiles of product results, after the views.
    if (tensorCores)
      mmaScratch = memref::ViewOp::create(
          b, loc,
          MemRefType::get({mmaScratchBytes() / int64_t(sizeof(float))},
                          b.getF32Type(), MemRefLayoutAttrInterface(),
                          workgroup),
          shared,
          arith::MulIOp::create(b, loc, viewBytes,
                                index(b, int64_t(maxStaged))),
          ValueRange());
  }
  Value warpSize = index(b, kLanes);
  Value warp = arith::DivUIOp::create(b, loc, threadId, warpSize);
  Value lane = arith::RemUIOp::create(b, loc, threadId, warpSize);
  Value slot = arith::RemUIOp::create(b, loc, warp, index(b, unitSlots));
  Value group = arith::DivUIOp::create(b, loc, warp, index(b, unitSlots));
  // Warps past the last whole row group only help to stage.
  Value computes = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         warp, index(b, unitSlots * rowGroups));
  Value zero = index(b, 0), one = index(b, 1), two = index(b, 2);

  if (tensorCores) {
    loadMmaWeights(b, slot,
                   depthSplit > 1 ? arith::RemUIOp::create(b, loc, group,
                                                           index(b, depthSplit))
                                  : Value(),
                   lane);
  } else if (useRegisters) {
    registerWeights.clear();
    for (int64_t s = 0; s < unitsAtOnce; ++s)
      loadRegisterWeights(b, warpUnit(b, slotUnit(b, slot, s)).index, lane);
  }

  // A state narrower than N: its units only.
  auto forStateUnits = [&](OpBuilder &ib, unsigned s, Value unit,
                           function_ref<void(OpBuilder &)> body) {
    if (plan.stateWidths[s] == plan.width) {
      body(ib);
      return;
    }
    Value within = arith::CmpIOp::create(ib, loc, arith::CmpIPredicate::ult,
                                         unit, index(ib, plan.stateWidths[s]));
    scf::IfOp::create(ib, loc, within, [&](OpBuilder &tb, Location) {
      body(tb);
      scf::YieldOp::create(tb, loc);
    });
  };
  forOwnElements(b, threadId, [&](OpBuilder &ib, Value row, Value unit) {
    for (auto [s, init, buffer] : llvm::enumerate(inits, stateBuffers))
      forStateUnits(ib, s, unit, [&](OpBuilder &tb) {
        Value v = memref::LoadOp::create(tb, loc, init, ValueRange{row, unit});
        memref::StoreOp::create(tb, loc, v, buffer,
                                ValueRange{zero, row, unit});
      });
  });
  GridBarrierOp::create(b, loc, counter, one);

  scf::ForOp::create(
      b, loc, zero, schedule.iterations, one, ValueRange(),
      [&](OpBuilder &lb, Location l, Value iteration, ValueRange) {
        Value t = iteration;
        if (schedule.lag != 0)
          t = arith::SubIOp::create(lb, l, iteration, index(lb, schedule.lag));
        Value cur = arith::RemUIOp::create(lb, l, t, two);
        Value next = arith::SubIOp::create(lb, l, one, cur);
        // Reverse layers walk the sequence from its end; outputs are
        // written at the step's own index.
        Value step = t;
        if (layer.isReverse())
          step = arith::SubIOp::create(
              lb, l, arith::SubIOp::create(lb, l, seqLen, one), t);
        int64_t barriers = schedule.barriers;
        // Barrier 2 + iteration · barriers + k, the k-th of the iteration:
        // the results of the phase before it (the next phase's staged
        // values, the next step's states) are complete.
        auto gridBarrier = [&](unsigned k) {
          Value ordinal = arith::AddIOp::create(
              lb, l,
              arith::MulIOp::create(lb, l, iteration, index(lb, barriers)),
              index(lb, 2 + k));
          GridBarrierOp::create(lb, l, counter, ordinal);
        };
        // In a stack, iterations before the layer's first step (t wraps
        // around) and after its last run no phase, and every iteration
        // meets the other layers' grid barriers after the layer's own.
        Value active;
        if (schedule.stack)
          active = arith::CmpIOp::create(lb, l, arith::CmpIPredicate::ult, t,
                                         seqLen);
        unsigned ordinal = 0;
        for (unsigned phase = 0; phase < plan.numPhases; ++phase) {
          currentPhase = phase;
          if (active)
            scf::IfOp::create(lb, l, active, [&](OpBuilder &ib, Location) {
              buildPhase(ib, phase, threadId, step, cur, next, slot, group,
                         computes, lane);
              scf::YieldOp::create(ib, l);
            });
          else
            buildPhase(lb, phase, threadId, step, cur, next, slot, group,
                       computes, lane);
          if (phase + 1 == plan.numPhases && !stepGridBarrier) {
            // Only this block reads what it wrote; the next step's staging
            // overwrites shared memory that this one's warps may still
            // read.
            BlockBarrierOp::create(lb, l);
            continue;
          }
          gridBarrier(ordinal++);
        }
        assert(ordinal <= barriers && "fewer barriers than the step's");
        for (; ordinal < barriers; ++ordinal)
          gridBarrier(ordinal);
        scf::YieldOp::create(lb, l);
      });

  Value last = arith::RemUIOp::create(b, loc, seqLen, two);
  forOwnElements(b, threadId, [&](OpBuilder &ib, Value row, Value unit) {
    for (auto [s, buffer, final] : llvm::enumerate(stateBuffers, finals))
      forStateUnits(ib, s, unit, [&](OpBuilder &tb) {
        Value v = memref::LoadOp::create(tb, loc, buffer,
                                         ValueRange{last, row, unit});
        memref::StoreOp::create(tb, loc, v, final, ValueRange{row, unit});
      });
  });
}
