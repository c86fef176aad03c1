//===- PersistentKernel.cpp - The body of a persistent layer kernel -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each block owns a tile of units (columns of the [B, N] step) for every
// batch row; each warp of a block owns one unit of the tile (or several,
// when the tile has more units than the block has warps) and a share of the
// rows. Per step, the block copies the states the products read into shared
// memory (in chunks of rows when they do not fit), then each warp computes
// its elements: its lanes split the dot products of the staged state row
// with the weight rows the pointwise region reads (lane l sums k = l,
// l + 32, ...), a butterfly of shuffles gives every lane the sums, every
// lane evaluates the cloned pointwise region and lane 0 stores the results.
// Where they fit, a warp's weights stay in its registers for the whole
// sequence (loaded once, before the time loop); otherwise they are read
// from global memory every step (L1 and L2 keep them). A cell whose
// products read values of the step runs each step in phases separated by
// grid barriers; what crosses phases goes through global scratch buffers.
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

/// Runs `body(b, row, unit)` for each element of the block's tile that this
/// thread owns: the tile is every row of `unitsPerBlock` units, its
/// elements dealt out to the threads in turn (consecutive threads,
/// consecutive units).
void PersistentKernelBuilder::forOwnElements(
    OpBuilder &b, Value blockId, Value threadId,
    function_ref<void(OpBuilder &, Value, Value)> body) {
  Value units = index(b, unitsPerBlock);
  Value first = arith::MulIOp::create(b, loc, blockId, units);
  Value count = arith::MulIOp::create(b, loc, batch, units);
  scf::ForOp::create(
      b, loc, threadId, count, index(b, blockSize), ValueRange(),
      [&](OpBuilder &nb, Location l, Value item, ValueRange) {
        Value row = arith::DivUIOp::create(nb, l, item, units);
        Value unit = arith::AddIOp::create(
            nb, l, first, arith::RemUIOp::create(nb, l, item, units));
        Value inside = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult,
                                             unit, index(nb, plan.width));
        scf::IfOp::create(nb, l, inside, [&](OpBuilder &ib, Location) {
          body(ib, row, unit);
          scf::YieldOp::create(ib, l);
        });
        scf::YieldOp::create(nb, l);
      });
}

/// The operands of the pointwise regions of `phase` for element (row,
/// unit) that the phase does not compute: the step's inputs, the states at
/// its start, the values defined above the layer and the results of
/// earlier phases (from their scratch buffers). One mapping per op of the
/// phase, in program order. They do not depend on the staged values, so
/// that they can be loaded before the staging.
SmallVector<IRMapping>
PersistentKernelBuilder::loadOperands(OpBuilder &b, unsigned phase, Value step,
                                      Value cur, Value row, Value unit) {
  using Kind = OperandSource::Kind;
  SmallVector<IRMapping> mappings;
  for (PointwiseStep &op : plan.pointwise) {
    if (op.phase != phase)
      continue;
    IRMapping &mapping = mappings.emplace_back();
    Block &region = op.op.getBody().front();
    for (auto [source, arg] : llvm::zip(op.operands, region.getArguments())) {
      auto column = [&] {
        return arith::AddIOp::create(b, loc, unit, index(b, source.column));
      };
      Value v;
      switch (source.kind) {
      case Kind::Product:
        continue;
      case Kind::Computed:
        if (plan.pointwise[source.computed.op].phase == phase)
          continue;
        v = memref::LoadOp::create(b, loc, scratchFor(source.computed),
                                   ValueRange{row, unit});
        break;
      case Kind::Input:
        v = memref::LoadOp::create(b, loc, inputs[source.index],
                                   ValueRange{step, row, column()});
        break;
      case Kind::State:
        v = memref::LoadOp::create(b, loc, stateBuffers[source.index],
                                   ValueRange{cur, row, column()});
        break;
      case Kind::Above: {
        Value buffer = aboveBuffers.lookup(source.above);
        if (cast<MemRefType>(buffer.getType()).getRank() == 1)
          v = memref::LoadOp::create(b, loc, buffer, ValueRange{unit});
        else
          v = memref::LoadOp::create(b, loc, buffer, ValueRange{row, unit});
        break;
      }
      }
      mapping.map(arg, v);
    }
  }
  return mappings;
}

/// The rest of element (row, unit)'s work in `phase`, the values its
/// products read staged at `localRow` and its other operands in `mappings`
/// (loadOperands): for each op of the phase in program order, the product
/// columns it reads (each product once per element), the results of the
/// phase's earlier ops, its region; then, where `store` holds, lane 0's
/// stores of the outputs, new states and scratch values the phase makes.
void PersistentKernelBuilder::computeElement(OpBuilder &b, unsigned phase,
                                             SmallVector<IRMapping> mappings,
                                             Value step, Value cur, Value next,
                                             Value row, Value localRow,
                                             Value unit, Value lane,
                                             Value store) {
  using Kind = OperandSource::Kind;
  DenseMap<std::pair<unsigned, int64_t>, Value> columns;
  DenseSet<unsigned> computedProducts;
  SmallVector<std::pair<Computed, Value>> results;
  auto resultOf = [&](const Computed &value) -> Value {
    for (auto &[v, r] : results)
      if (v == value)
        return r;
    return Value();
  };
  unsigned m = 0;
  for (auto [i, op] : llvm::enumerate(plan.pointwise)) {
    if (op.phase != phase)
      continue;
    IRMapping &mapping = mappings[m++];
    Block &region = op.op.getBody().front();
    for (auto [source, arg] : llvm::zip(op.operands, region.getArguments())) {
      if (source.kind == Kind::Product) {
        unsigned p = source.index;
        if (computedProducts.insert(p).second) {
          SmallVector<Value> sums =
              buildProductColumns(b, p, localRow, unit, lane);
          for (auto [column, sum] : llvm::zip(neededColumns[p], sums))
            columns[{p, column}] = sum;
        }
        mapping.map(arg, columns.lookup({p, source.column}));
      } else if (source.kind == Kind::Computed &&
                 plan.pointwise[source.computed.op].phase == phase) {
        mapping.map(arg, resultOf(source.computed));
      }
    }
    for (Operation &inner : region.without_terminator())
      b.clone(inner, mapping);
    auto yield = cast<PointwiseYieldOp>(region.getTerminator());
    for (auto [r, value] : llvm::enumerate(yield.getValues()))
      results.push_back(
          {Computed{unsigned(i), unsigned(r)}, mapping.lookupOrDefault(value)});
  }
  // A product that is a new state is computed in its own phase.
  using YieldKind = PersistentPlan::YieldSource::Kind;
  for (const PersistentPlan::YieldSource &state : plan.stateResults) {
    unsigned p = state.index;
    if (state.kind != YieldKind::Product || plan.products[p].phase != phase ||
        !computedProducts.insert(p).second)
      continue;
    SmallVector<Value> sums = buildProductColumns(b, p, localRow, unit, lane);
    for (auto [column, sum] : llvm::zip(neededColumns[p], sums))
      columns[{p, column}] = sum;
  }
  // Every lane has the results; lane 0 writes those of this phase.
  Value isFirst = arith::AndIOp::create(
      b, loc, store,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                            index(b, 0)));
  scf::IfOp::create(b, loc, isFirst, [&](OpBuilder &ib, Location l) {
    // A yield of a state argument (the state at the start of the step) is
    // written in the first phase, a product in its own.
    auto yielded = [&](const PersistentPlan::YieldSource &source) -> Value {
      switch (source.kind) {
      case YieldKind::Computed:
        return resultOf(source.computed);
      case YieldKind::StateArg:
        if (phase != 0)
          return Value();
        return memref::LoadOp::create(ib, l, stateBuffers[source.index],
                                      ValueRange{cur, row, unit});
      case YieldKind::Product:
        if (plan.products[source.index].phase != phase)
          return Value();
        return columns.lookup({source.index, 0});
      case YieldKind::Concat:
        break;
      }
      return Value();
    };
    for (auto [o, r] : llvm::enumerate(plan.outputResults)) {
      if (r.kind == YieldKind::Concat) {
        // Each piece at its columns, in the phase that makes it.
        for (auto [j, piece] : llvm::enumerate(plan.concats[r.index].pieces))
          if (Value v = resultOf(piece))
            memref::StoreOp::create(
                ib, l, v, outputs[o],
                ValueRange{
                    step, row,
                    arith::AddIOp::create(ib, l, unit,
                                          index(ib, int64_t(j) * plan.width))});
        continue;
      }
      if (Value v = yielded(r))
        memref::StoreOp::create(ib, l, v, outputs[o],
                                ValueRange{step, row, unit});
    }
    for (auto [s, r] : llvm::enumerate(plan.stateResults))
      if (Value v = yielded(r))
        memref::StoreOp::create(ib, l, v, stateBuffers[s],
                                ValueRange{next, row, unit});
    for (auto [value, buffer] : llvm::zip(scratchValues, scratch))
      if (Value v = resultOf(value))
        memref::StoreOp::create(ib, l, v, buffer, ValueRange{row, unit});
    scf::YieldOp::create(ib, l);
  });
}

/// Rows r, r + rowGroups, ... (rowsAtOnce of them) of the chunk of staged
/// rows [first, first + rows) for one unit: a row past the chunk is
/// computed on the chunk's last row and not stored.
PersistentKernelBuilder::RowGroup
PersistentKernelBuilder::rowGroupAt(OpBuilder &b, Value first, Value rows,
                                    Value r) {
  RowGroup group;
  Value lastRow = arith::SubIOp::create(b, loc, rows, index(b, 1));
  for (int64_t i = 0; i < rowsAtOnce; ++i) {
    Value local = arith::AddIOp::create(b, loc, r, index(b, i * rowGroups));
    group.valid.push_back(
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, local, rows));
    local = arith::MinUIOp::create(b, loc, local, lastRow);
    group.localRows.push_back(local);
    group.rows.push_back(arith::AddIOp::create(b, loc, first, local));
  }
  return group;
}

/// The elements of `group` for `unit` in `phase`: every operand load first
/// (the rows' memory latencies overlap), then each row's products and
/// regions; or, with `loaded`, the operands loaded earlier (before the
/// staging).
void PersistentKernelBuilder::buildRowGroup(
    OpBuilder &b, unsigned phase, const RowGroup &group, Value step, Value cur,
    Value next, Value unit, Value inside, Value lane,
    ArrayRef<SmallVector<IRMapping>> loaded) {
  SmallVector<SmallVector<IRMapping>> operands(loaded.begin(), loaded.end());
  if (operands.empty())
    for (Value row : group.rows)
      operands.push_back(loadOperands(b, phase, step, cur, row, unit));
  for (auto [i, mappings] : llvm::enumerate(operands))
    computeElement(b, phase, mappings, step, cur, next, group.rows[i],
                   group.localRows[i], unit, lane,
                   arith::AndIOp::create(b, loc, group.valid[i], inside));
}

/// The warp's `unit` (its index in the block's tile `local`; `inside` if
/// it is a unit of the tile and of the layer) and, where it has one, the
/// safe index to load with (the layer's last unit for a warp past it).
PersistentKernelBuilder::WarpUnit
PersistentKernelBuilder::warpUnit(OpBuilder &b, Value local) {
  Value blockFirst =
      arith::MulIOp::create(b, loc, blockIdValue, index(b, unitsPerBlock));
  Value unit = arith::AddIOp::create(b, loc, blockFirst, local);
  Value inside = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, local,
                            index(b, unitsPerBlock)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, unit,
                            index(b, plan.width)));
  Value safeUnit =
      arith::MinUIOp::create(b, loc, unit, index(b, plan.width - 1));
  return {safeUnit, inside};
}

/// The warp's work in one chunk of staged rows [first, first + rows): for
/// each of its units, the row groups from `rowBegin` on: rows `rowBegin`,
/// `rowBegin + rowGroups`, ..., rowsAtOnce of them per iteration
/// (independent work in flight together).
void PersistentKernelBuilder::buildWarpChunk(OpBuilder &b, unsigned phase,
                                             Value step, Value cur, Value next,
                                             Value first, Value rows,
                                             Value slot, Value rowBegin,
                                             Value lane) {
  scf::ForOp::create(
      b, loc, index(b, 0), index(b, unitsPerWarp), index(b, 1), ValueRange(),
      [&](OpBuilder &ub, Location l, Value u, ValueRange) {
        WarpUnit unit = warpUnit(
            ub, arith::AddIOp::create(
                    ub, l, slot,
                    arith::MulIOp::create(ub, l, u, index(ub, unitSlots))));
        scf::ForOp::create(
            ub, l, rowBegin, rows, index(ub, rowGroups * rowsAtOnce),
            ValueRange(), [&](OpBuilder &rb, Location rl, Value r, ValueRange) {
              buildRowGroup(rb, phase, rowGroupAt(rb, first, rows, r), step,
                            cur, next, unit.index, unit.inside, lane, {});
              scf::YieldOp::create(rb, rl);
            });
        scf::YieldOp::create(ub, l);
      });
}

/// One phase of a step: in chunks of rows, the warp's first operands
/// loaded early, the phase's product inputs staged, the warp's elements.
void PersistentKernelBuilder::buildPhase(OpBuilder &lb, unsigned phase,
                                         Value threadId, Value step, Value cur,
                                         Value next, Value slot, Value group,
                                         Value computes, Value lane) {
  scf::ForOp::create(
      lb, loc, index(lb, 0), batch, index(lb, chunkRows), ValueRange(),
      [&](OpBuilder &cb, Location cl, Value first, ValueRange) {
        Value rows =
            arith::MinUIOp::create(cb, cl, index(cb, chunkRows),
                                   arith::SubIOp::create(cb, cl, batch, first));
        // A warp with one unit loads the operands of its first rows before
        // the staging: their latency overlaps the staging's.
        SmallVector<SmallVector<IRMapping>> early;
        std::optional<RowGroup> firstRows;
        std::optional<WarpUnit> unit;
        if (unitsPerWarp == 1) {
          unit = warpUnit(cb, slot);
          firstRows = rowGroupAt(cb, first, rows, group);
          for (Value row : firstRows->rows)
            early.push_back(
                loadOperands(cb, phase, step, cur, row, unit->index));
        }
        stageInputs(cb, phase, threadId, cur, first, rows);
        BlockBarrierOp::create(cb, cl);
        scf::IfOp::create(cb, cl, computes, [&](OpBuilder &ib, Location) {
          Value rowBegin = group;
          if (firstRows) {
            buildRowGroup(ib, phase, *firstRows, step, cur, next, unit->index,
                          unit->inside, lane, early);
            rowBegin = arith::AddIOp::create(ib, cl, group,
                                             index(ib, rowGroups * rowsAtOnce));
          }
          buildWarpChunk(ib, phase, step, cur, next, first, rows, slot,
                         rowBegin, lane);
          scf::YieldOp::create(ib, cl);
        });
        // The next chunk overwrites the staged rows (the next phase's
        // staging comes after a grid barrier, itself a block barrier).
        Value more = arith::CmpIOp::create(
            cb, cl, arith::CmpIPredicate::ult,
            arith::AddIOp::create(cb, cl, first, index(cb, chunkRows)), batch);
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
  if (maxStaged != 0) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    Value shared = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
    int64_t floats = chunkRows * maxInputWidth;
    for (size_t i = 0; i < maxStaged; ++i)
      sharedViews.push_back(memref::ViewOp::create(
          b, loc,
          MemRefType::get({floats}, b.getF32Type(), MemRefLayoutAttrInterface(),
                          workgroup),
          shared, index(b, int64_t(i) * floats * int64_t(sizeof(float))),
          ValueRange()));
  }
  Value blockId = launch.getBlockIds().x;
  blockIdValue = blockId;
  Value threadId = launch.getThreadIds().x;
  Value warpSize = index(b, kWarpSize);
  Value warp = arith::DivUIOp::create(b, loc, threadId, warpSize);
  Value lane = arith::RemUIOp::create(b, loc, threadId, warpSize);
  Value slot = arith::RemUIOp::create(b, loc, warp, index(b, unitSlots));
  Value group = arith::DivUIOp::create(b, loc, warp, index(b, unitSlots));
  // Warps past the last whole row group only help to stage.
  Value computes = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                         warp, index(b, unitSlots * rowGroups));
  Value zero = index(b, 0), one = index(b, 1), two = index(b, 2);

  if (useRegisters) {
    Value unit = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, blockId, index(b, unitsPerBlock)),
        slot);
    loadRegisterWeights(
        b, arith::MinUIOp::create(b, loc, unit, index(b, plan.width - 1)),
        lane);
  }

  forOwnElements(
      b, blockId, threadId, [&](OpBuilder &ib, Value row, Value unit) {
        for (auto [init, buffer] : llvm::zip(inits, stateBuffers)) {
          Value v =
              memref::LoadOp::create(ib, loc, init, ValueRange{row, unit});
          memref::StoreOp::create(ib, loc, v, buffer,
                                  ValueRange{zero, row, unit});
        }
      });
  GridBarrierOp::create(b, loc, counter, one);

  scf::ForOp::create(
      b, loc, zero, seqLen, one, ValueRange(),
      [&](OpBuilder &lb, Location l, Value t, ValueRange) {
        Value cur = arith::RemUIOp::create(lb, l, t, two);
        Value next = arith::SubIOp::create(lb, l, one, cur);
        // Reverse layers walk the sequence from its end; outputs are
        // written at the step's own index.
        Value step = t;
        if (layer.isReverse())
          step = arith::SubIOp::create(
              lb, l, arith::SubIOp::create(lb, l, seqLen, one), t);
        for (unsigned phase = 0; phase < plan.numPhases; ++phase) {
          currentPhase = phase;
          buildPhase(lb, phase, threadId, step, cur, next, slot, group,
                     computes, lane);
          // Barrier 2 + t · phases + phase: the phase's results (the next
          // phase's staged values, the next step's states) are complete.
          Value ordinal = arith::AddIOp::create(
              lb, l, arith::MulIOp::create(lb, l, t, index(lb, plan.numPhases)),
              index(lb, 2 + phase));
          GridBarrierOp::create(lb, l, counter, ordinal);
        }
        scf::YieldOp::create(lb, l);
      });

  Value last = arith::RemUIOp::create(b, loc, seqLen, two);
  forOwnElements(
      b, blockId, threadId, [&](OpBuilder &ib, Value row, Value unit) {
        for (auto [buffer, final] : llvm::zip(stateBuffers, finals)) {
          Value v = memref::LoadOp::create(ib, loc, buffer,
                                           ValueRange{last, row, unit});
          memref::StoreOp::create(ib, loc, v, final, ValueRange{row, unit});
        }
      });
  gpu::TerminatorOp::create(b, loc);
}
