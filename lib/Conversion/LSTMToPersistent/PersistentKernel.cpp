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
// memory (in chunks of rows when they do not fit; as asynchronous copies
// from sm_80 on), then each warp computes
// its elements, a group of rows at a time: its lanes split the dot products
// of the group's staged state rows with the weight rows the pointwise
// region reads (lane l sums k = l, l + 32, ...), one butterfly of shuffles
// sums all of them, and lane j evaluates the cloned pointwise region for
// the group's row j and stores its results (the region once per row, not
// once per lane).
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
/// earlier phases (from their scratch buffers); for each op of the phase
/// in program order, for each such operand in order. They do not depend on
/// the staged values, so that they can be loaded before the staging.
SmallVector<Value>
PersistentKernelBuilder::loadOperands(OpBuilder &b, unsigned phase, Value step,
                                      Value cur, Value row, Value unit) {
  using Kind = OperandSource::Kind;
  SmallVector<Value> operands;
  for (PointwiseStep &op : plan.pointwise) {
    if (op.phase != phase)
      continue;
    for (const OperandSource &source : op.operands) {
      auto column = [&] {
        return arith::AddIOp::create(b, loc, unit, index(b, source.column));
      };
      switch (source.kind) {
      case Kind::Product:
        break;
      case Kind::Computed:
        if (plan.pointwise[source.computed.op].phase != phase)
          operands.push_back(memref::LoadOp::create(
              b, loc, scratchFor(source.computed), ValueRange{cur, row, unit}));
        break;
      case Kind::Input:
        operands.push_back(memref::LoadOp::create(
            b, loc, inputs[source.index], ValueRange{step, row, column()}));
        break;
      case Kind::State:
        operands.push_back(
            memref::LoadOp::create(b, loc, stateBuffers[source.index],
                                   ValueRange{cur, row, column()}));
        break;
      case Kind::Above: {
        Value buffer = aboveBuffers.lookup(source.above);
        if (cast<MemRefType>(buffer.getType()).getRank() == 1)
          operands.push_back(
              memref::LoadOp::create(b, loc, buffer, ValueRange{unit}));
        else
          operands.push_back(
              memref::LoadOp::create(b, loc, buffer, ValueRange{row, unit}));
        break;
      }
      }
    }
  }
  return operands;
}

SmallVector<IRMapping>
PersistentKernelBuilder::mapOperands(unsigned phase, ValueRange operands) {
  using Kind = OperandSource::Kind;
  SmallVector<IRMapping> mappings;
  auto next = operands.begin();
  for (PointwiseStep &op : plan.pointwise) {
    if (op.phase != phase)
      continue;
    IRMapping &mapping = mappings.emplace_back();
    Block &region = op.op.getBody().front();
    for (auto [source, arg] : llvm::zip(op.operands, region.getArguments())) {
      if (source.kind == Kind::Product ||
          (source.kind == Kind::Computed &&
           plan.pointwise[source.computed.op].phase == phase))
        continue;
      mapping.map(arg, *next++);
    }
  }
  assert(next == operands.end() && "operands of another phase");
  return mappings;
}

/// The rest of element (row, unit)'s work in `phase`, its product columns
/// in `columns` and its other operands in `mappings` (loadOperands): for
/// each op of the phase in program order, the results of the phase's
/// earlier ops, its region; then, where `store` holds, the stores of the
/// outputs, new states and scratch values the phase makes. `stagedRow` is
/// the row's place among the rows the phase staged.
void PersistentKernelBuilder::computeElement(OpBuilder &b, unsigned phase,
                                             SmallVector<IRMapping> mappings,
                                             const ColumnSums &columns,
                                             Value step, Value cur, Value next,
                                             Value row, Value stagedRow,
                                             Value unit, Value store) {
  using Kind = OperandSource::Kind;
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
      if (source.kind == Kind::Product)
        mapping.map(arg, columns.lookup({source.index, source.column}));
      else if (source.kind == Kind::Computed &&
               plan.pointwise[source.computed.op].phase == phase)
        mapping.map(arg, resultOf(source.computed));
    }
    for (Operation &inner : region.without_terminator())
      b.clone(inner, mapping);
    auto yield = cast<PointwiseYieldOp>(region.getTerminator());
    for (auto [r, value] : llvm::enumerate(yield.getValues()))
      results.push_back(
          {Computed{unsigned(i), unsigned(r)}, mapping.lookupOrDefault(value)});
  }
  using YieldKind = PersistentPlan::YieldSource::Kind;
  scf::IfOp::create(b, loc, store, [&](OpBuilder &ib, Location l) {
    // A yield of a state argument (the state at the start of the step) is
    // written in the first phase, a product in its own.
    auto yielded = [&](const PersistentPlan::YieldSource &source) -> Value {
      switch (source.kind) {
      case YieldKind::Computed:
        return resultOf(source.computed);
      case YieldKind::StateArg: {
        if (phase != 0)
          return Value();
        // A training forward saves h_{t-1}: where the phase staged it,
        // from shared memory (from global memory, the store waited for
        // the load's round trip: 15% of the kernel's time in ncu).
        TermInput state{TermInput::Kind::State, source.index, {}};
        if (llvm::is_contained(stagedInputs[phase], state)) {
          Value at = arith::AddIOp::create(
              ib, l,
              arith::MulIOp::create(ib, l, stagedRow,
                                    index(ib, inputWidth(state))),
              unit);
          return memref::LoadOp::create(ib, l, stagedFor(state),
                                        ValueRange{at});
        }
        return memref::LoadOp::create(ib, l, stateBuffers[source.index],
                                      ValueRange{cur, row, unit});
      }
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
        memref::StoreOp::create(ib, l, v, buffer, ValueRange{cur, row, unit});
    scf::YieldOp::create(ib, l);
  });
}

Value PersistentKernelBuilder::warpRow(OpBuilder &b, Value group,
                                       Value ordinal) {
  return arith::AddIOp::create(
      b, loc, group,
      arith::MulIOp::create(b, loc, ordinal, this->index(b, rowGroups)));
}

Value PersistentKernelBuilder::laneInGroup(OpBuilder &b, int64_t size,
                                           Value lane) {
  if (size == 1)
    return index(b, 0);
  return arith::MinUIOp::create(b, loc, lane, index(b, size - 1));
}

Value PersistentKernelBuilder::laneRow(OpBuilder &b, Value first, Value rows,
                                       Value group, Value index, int64_t size,
                                       Value lane) {
  Value local =
      warpRow(b, group,
              arith::AddIOp::create(b, loc, index, laneInGroup(b, size, lane)));
  Value lastRow = arith::SubIOp::create(b, loc, rows, this->index(b, 1));
  return arith::AddIOp::create(b, loc, first,
                               arith::MinUIOp::create(b, loc, local, lastRow));
}

/// `size` of the warp's rows of the chunk [first, first + rows) for one
/// unit, from its `index`-th on (rows group + (index + j) · rowGroups; one
/// past the chunk is computed on its last row and not stored): every lane
/// accumulates its share of each row's dot products, reduceAcrossLanes
/// sums them, and lane j gathers the sums of the group's row j with
/// shuffles and evaluates that row's element (with `size` 1, lane 0; the
/// other lanes' results are not stored). `operands` are the lane's
/// (loadOperands on its row, laneRow with the phase's group size).
void PersistentKernelBuilder::buildRowGroup(
    OpBuilder &b, unsigned phase, int64_t size, Value index, Value first,
    Value rows, Value group, Value step, Value cur, Value next, Value unit,
    Value inside, Value lane, ValueRange operands) {
  Value lastRow = arith::SubIOp::create(b, loc, rows, this->index(b, 1));
  SmallVector<Value> localRows;
  for (int64_t j = 0; j < size; ++j) {
    Value local = warpRow(
        b, group, arith::AddIOp::create(b, loc, index, this->index(b, j)));
    localRows.push_back(arith::MinUIOp::create(b, loc, local, lastRow));
  }
  // The partial sums, [row][product][column], reduced together.
  SmallVector<SmallVector<SmallVector<Value>>> partials;
  int64_t perRow = 0;
  for (unsigned p : phaseProducts[phase]) {
    partials.push_back(buildProductPartials(b, p, localRows, unit, lane));
    perRow += int64_t(neededColumns[p].size());
  }
  SmallVector<Value> values;
  for (int64_t j = 0; j < size; ++j)
    for (auto &perProduct : partials)
      llvm::append_range(values, perProduct[j]);
  SmallVector<Value> sums = reduceAcrossLanes(b, values, lane);
  // Value v of a chunk of 2^m is in lane v << (5 - m) (and those after it).
  auto laneOf = [&](int64_t chunkSize) {
    return 5 - int64_t(llvm::Log2_64(llvm::PowerOf2Ceil(chunkSize)));
  };
  Value inGroup = laneInGroup(b, size, lane);
  ColumnSums columns;
  int64_t v = 0;
  for (unsigned p : phaseProducts[phase]) {
    for (int64_t column : neededColumns[p]) {
      Value source, sum;
      if (size == 1) {
        // Every lane reads the one row's sums.
        int64_t chunk = v / kLanes;
        int64_t chunkSize =
            std::min<int64_t>(kLanes, int64_t(values.size()) - chunk * kLanes);
        source = arith::ConstantIntOp::create(
            b, loc, b.getI32Type(), (v % kLanes) << laneOf(chunkSize));
        sum = sums[chunk];
      } else {
        // One chunk (size · perRow <= 32); lane j reads row j's.
        Value at = arith::AddIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, inGroup, this->index(b, perRow)),
            this->index(b, v));
        at = arith::ShLIOp::create(b, loc, at,
                                   this->index(b, laneOf(values.size())));
        source = arith::IndexCastOp::create(b, loc, b.getI32Type(), at);
        sum = sums.front();
      }
      Value width =
          arith::ConstantIntOp::create(b, loc, b.getI32Type(), kLanes);
      columns[{p, column}] = gpu::ShuffleOp::create(b, loc, sum, source, width,
                                                    gpu::ShuffleMode::IDX)
                                 .getShuffleResult();
      ++v;
    }
  }
  // The lane's row, and whether it stores it.
  Value local =
      warpRow(b, group, arith::AddIOp::create(b, loc, index, inGroup));
  Value store = arith::AndIOp::create(
      b, loc, inside,
      arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, local, rows),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                                this->index(b, size))));
  Value stagedRow = arith::MinUIOp::create(b, loc, local, lastRow);
  Value row = arith::AddIOp::create(b, loc, first, stagedRow);
  computeElement(b, phase, mapOperands(phase, operands), columns, step, cur,
                 next, row, stagedRow, unit, store);
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
/// each of its units, its rows group, group + rowGroups, ... in groups of
/// the phase's size (the last one partly past them, unless only one row is
/// left: that one alone), each group's operands loaded at its start
/// (`early`: the first group's, loaded before the staging).
void PersistentKernelBuilder::buildWarpChunk(
    OpBuilder &b, unsigned phase, Value step, Value cur, Value next,
    Value first, Value rows, Value slot, Value group, Value lane,
    std::optional<SmallVector<Value>> early) {
  int64_t size = groupRows[phase];
  // The warp's rows in the chunk, and its groups of `size` rows.
  Value count = arith::CeilDivUIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, arith::MaxUIOp::create(b, loc, rows, group),
                            group),
      index(b, rowGroups));
  Value groups =
      size == 1 ? count
                : arith::DivUIOp::create(
                      b, loc,
                      arith::AddIOp::create(b, loc, count, index(b, size - 2)),
                      index(b, size))
                      .getResult();
  scf::ForOp::create(
      b, loc, index(b, 0), index(b, unitsPerWarp), index(b, 1), ValueRange(),
      [&](OpBuilder &ub, Location l, Value u, ValueRange) {
        WarpUnit unit = warpUnit(
            ub, arith::AddIOp::create(
                    ub, l, slot,
                    arith::MulIOp::create(ub, l, u, index(ub, unitSlots))));
        auto operandsAt = [&](OpBuilder &nb, Value at) {
          return loadOperands(nb, phase, step, cur,
                              laneRow(nb, first, rows, group, at, size, lane),
                              unit.index);
        };
        // The operands of the group at `at`: the early ones for the first
        // group, else loaded at the start of the group (carried from the
        // group before, they would be live through its work: a training
        // forward's cell, which saves its activations, spilled).
        auto operandsOf = [&](OpBuilder &nb, Location nl, Value at) {
          if (!early)
            return operandsAt(nb, at);
          Value isFirst = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::eq, at, index(nb, 0));
          auto choice = scf::IfOp::create(
              nb, nl, isFirst,
              [&](OpBuilder &tb, Location tl) {
                scf::YieldOp::create(tb, tl, *early);
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el, operandsAt(eb, at));
              });
          return SmallVector<Value>(choice.getResults());
        };
        scf::ForOp::create(
            ub, l, index(ub, 0), groups, index(ub, 1), ValueRange(),
            [&](OpBuilder &gb, Location gl, Value g, ValueRange) {
              Value at = arith::MulIOp::create(gb, gl, g, index(gb, size));
              buildRowGroup(gb, phase, size, at, first, rows, group, step, cur,
                            next, unit.index, unit.inside, lane,
                            operandsOf(gb, gl, at));
              scf::YieldOp::create(gb, gl);
            });
        if (size != 1) {
          Value at = arith::MulIOp::create(ub, l, groups, index(ub, size));
          Value single = arith::CmpIOp::create(ub, l, arith::CmpIPredicate::ult,
                                               at, count);
          scf::IfOp::create(ub, l, single, [&](OpBuilder &ib, Location) {
            buildRowGroup(ib, phase, 1, at, first, rows, group, step, cur, next,
                          unit.index, unit.inside, lane, operandsOf(ib, l, at));
            scf::YieldOp::create(ib, l);
          });
        }
        scf::YieldOp::create(ub, l);
      });
}

/// One phase of a step: in chunks of rows, the warp's first operands
/// loaded early, the phase's product inputs staged, the warp's elements.
void PersistentKernelBuilder::buildPhase(OpBuilder &lb, unsigned phase,
                                         Value threadId, Value step, Value cur,
                                         Value next, Value slot, Value group,
                                         Value computes, Value lane) {
  int64_t chunk = phaseChunkRows[phase];
  scf::ForOp::create(
      lb, loc, index(lb, 0), batch, index(lb, chunk), ValueRange(),
      [&](OpBuilder &cb, Location cl, Value first, ValueRange) {
        Value rows =
            arith::MinUIOp::create(cb, cl, index(cb, chunk),
                                   arith::SubIOp::create(cb, cl, batch, first));
        // A warp with one unit loads the operands of its first rows before
        // the staging: their latency overlaps the staging's.
        std::optional<SmallVector<Value>> early;
        if (unitsPerWarp == 1)
          early = loadOperands(cb, phase, step, cur,
                               laneRow(cb, first, rows, group, index(cb, 0),
                                       groupRows[phase], lane),
                               warpUnit(cb, slot).index);
        // A phase that stages nothing (one chunk: the whole batch) starts
        // after a barrier already.
        if (!stagedInputs[phase].empty()) {
          bool async = stageInputs(cb, phase, threadId, step, cur, first, rows);
          BlockBarrierOp::create(cb, cl, /*waitAsyncCopies=*/async);
        }
        scf::IfOp::create(cb, cl, computes, [&](OpBuilder &ib, Location) {
          buildWarpChunk(ib, phase, step, cur, next, first, rows, slot, group,
                         lane, early);
          scf::YieldOp::create(ib, cl);
        });
        // The next chunk overwrites the staged rows (the next phase's
        // staging comes after a grid barrier, itself a block barrier).
        Value more = arith::CmpIOp::create(
            cb, cl, arith::CmpIPredicate::ult,
            arith::AddIOp::create(cb, cl, first, index(cb, chunk)), batch);
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
  if (maxStaged != 0) {
    auto workgroup = gpu::AddressSpaceAttr::get(b.getContext(),
                                                gpu::AddressSpace::Workgroup);
    Value shared = gpu::DynamicSharedMemoryOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic}, b.getI8Type(),
                        MemRefLayoutAttrInterface(), workgroup));
    int64_t floats = chunkRows * maxInputWidth;
    sharedViews.clear();
    for (size_t i = 0; i < maxStaged; ++i)
      sharedViews.push_back(memref::ViewOp::create(
          b, loc,
          MemRefType::get({floats}, b.getF32Type(), MemRefLayoutAttrInterface(),
                          workgroup),
          shared, index(b, int64_t(i) * floats * int64_t(sizeof(float))),
          ValueRange()));
  }
  blockIdValue = blockId;
  Value warpSize = index(b, kLanes);
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
    registerWeights.clear();
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
  forOwnElements(
      b, blockId, threadId, [&](OpBuilder &ib, Value row, Value unit) {
        for (auto [buffer, final] : llvm::zip(stateBuffers, finals)) {
          Value v = memref::LoadOp::create(ib, loc, buffer,
                                           ValueRange{last, row, unit});
          memref::StoreOp::create(ib, loc, v, final, ValueRange{row, unit});
        }
      });
}
