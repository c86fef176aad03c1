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

/// Copies rows [first, first + rows) of every value that the products of
/// `phase` read (a state: buffer `cur`; a computed value: its scratch
/// buffer) into the block's shared memory. All threads take part: thread
/// `tid` copies elements tid, tid + blockSize, ... of the rows' N·rows
/// elements, kStageUnroll of them at a time: the loads first (their
/// indices clamped to the last element, so that they need no branch and
/// are in flight together), then the stores of those in range.
void PersistentKernelBuilder::stageInputs(OpBuilder &b, unsigned phase,
                                          Value threadId, Value cur,
                                          Value first, Value rows) {
  int64_t n = plan.width;
  Value total = arith::MulIOp::create(b, loc, rows, index(b, n));
  Value last = arith::SubIOp::create(b, loc, total, index(b, 1));
  for (auto [input, staged] : llvm::zip(stagedInputs[phase], sharedViews)) {
    auto load = [&](OpBuilder &nb, Location l, Value row, Value col) -> Value {
      if (input.isState)
        return memref::LoadOp::create(nb, l, stateBuffers[input.state],
                                      ValueRange{cur, row, col});
      return memref::LoadOp::create(nb, l, scratchFor(input.computed),
                                    ValueRange{row, col});
    };
    scf::ForOp::create(
        b, loc, threadId, total, index(b, blockSize * kStageUnroll),
        ValueRange(), [&](OpBuilder &nb, Location l, Value base, ValueRange) {
          SmallVector<Value> at, values;
          for (int64_t u = 0; u < kStageUnroll; ++u) {
            at.push_back(
                arith::AddIOp::create(nb, l, base, index(nb, u * blockSize)));
            Value i = arith::MinUIOp::create(nb, l, at.back(), last);
            Value row = arith::AddIOp::create(
                nb, l, first, arith::DivUIOp::create(nb, l, i, index(nb, n)));
            Value col = arith::RemUIOp::create(nb, l, i, index(nb, n));
            values.push_back(load(nb, l, row, col));
          }
          for (auto [i, v] : llvm::zip(at, values)) {
            Value inRange = arith::CmpIOp::create(
                nb, l, arith::CmpIPredicate::ult, i, total);
            scf::IfOp::create(nb, l, inRange, [&](OpBuilder &ib, Location) {
              memref::StoreOp::create(ib, l, v, staged, ValueRange{i});
              scf::YieldOp::create(ib, l);
            });
          }
          scf::YieldOp::create(nb, l);
        });
  }
}

Value PersistentKernelBuilder::stagedFor(const TermInput &input) const {
  for (auto [staged, view] : llvm::zip(stagedInputs[currentPhase], sharedViews))
    if (staged == input)
      return view;
  llvm_unreachable("a product input that its phase does not stage");
}

Value PersistentKernelBuilder::scratchFor(const Computed &value) const {
  for (auto [v, buffer] : llvm::zip(scratchValues, scratch))
    if (v == value)
      return buffer;
  return Value();
}

/// The weights a warp keeps in registers for the whole sequence, loaded
/// before the time loop: per product, per term, per column the product
/// needs, the ceil(N/32) elements k = lane + 32j of the row of `unit`
/// (zero where k >= N).
void PersistentKernelBuilder::loadRegisterWeights(OpBuilder &b, Value unit,
                                                  Value lane) {
  int64_t n = plan.width;
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  for (auto [p, product] : llvm::enumerate(plan.products)) {
    auto &perTerm = registerWeights.emplace_back();
    for (Value weight : weights[p]) {
      auto &perColumn = perTerm.emplace_back();
      for (int64_t column : neededColumns[p]) {
        Value row = arith::AddIOp::create(b, loc, unit, index(b, column));
        auto &values = perColumn.emplace_back();
        for (int64_t j = 0; j < divCeil(n, kWarpSize); ++j) {
          Value k =
              arith::AddIOp::create(b, loc, lane, index(b, j * kWarpSize));
          bool partial = (j + 1) * kWarpSize > n;
          Value kc =
              partial ? arith::MinUIOp::create(b, loc, k, index(b, n - 1)) : k;
          Value w = memref::LoadOp::create(b, loc, weight, ValueRange{row, kc});
          if (partial)
            w = arith::SelectOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k,
                                      index(b, n)),
                w, zero);
          values.push_back(w);
        }
      }
    }
  }
}

/// The columns `neededColumns[p]` (plus `unit`) of product `p` for the row
/// staged at `localRow`, in every lane of the warp: lane `lane` sums the
/// terms k = lane (mod 32) of the dot products, the shuffles sum the
/// lanes'. The weights come from registers (loadRegisterWeights) or, where
/// they do not fit, from global memory (L1 and L2); the states from the
/// block's shared memory.
SmallVector<Value> PersistentKernelBuilder::buildProductColumns(
    OpBuilder &b, unsigned p, Value localRow, Value unit, Value lane) {
  const Product &product = plan.products[p];
  ArrayRef<int64_t> columns = neededColumns[p];
  int64_t n = plan.width;
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  SmallVector<Value> acc(columns.size(), zero);
  Value rowBase = arith::MulIOp::create(b, loc, localRow, index(b, n));
  auto stagedAt = [&](OpBuilder &nb, Location l, Value staged, Value k) {
    return memref::LoadOp::create(
        nb, l, staged, ValueRange{arith::AddIOp::create(nb, l, rowBase, k)});
  };
  for (auto [t, term] : llvm::enumerate(product.terms)) {
    Value staged = stagedFor(term.first);
    if (useRegisters) {
      for (int64_t j = 0; j < divCeil(n, kWarpSize); ++j) {
        Value k = arith::AddIOp::create(b, loc, lane, index(b, j * kWarpSize));
        if ((j + 1) * kWarpSize > n)
          k = arith::MinUIOp::create(b, loc, k, index(b, n - 1));
        Value h = stagedAt(b, loc, staged, k);
        for (auto [c, sum] : llvm::enumerate(acc))
          sum =
              math::FmaOp::create(b, loc, h, registerWeights[p][t][c][j], sum);
      }
      continue;
    }
    Value weight = weights[p][t];
    SmallVector<Value> weightRows;
    for (int64_t column : columns)
      weightRows.push_back(
          arith::AddIOp::create(b, loc, unit, index(b, column)));
    auto accumulate = [&](OpBuilder &nb, Location l, Value k,
                          SmallVector<Value> sums) {
      Value h = stagedAt(nb, l, staged, k);
      for (auto [weightRow, partial] : llvm::zip(weightRows, sums)) {
        Value w =
            memref::LoadOp::create(nb, l, weight, ValueRange{weightRow, k});
        partial = math::FmaOp::create(nb, l, h, w, partial);
      }
      return sums;
    };
    // A main loop over kUnrollFactor of the lane's k at a time (their
    // weight loads in flight together: one iteration would otherwise wait
    // for L2 before the next), then the rest one at a time.
    int64_t span = kWarpSize * kUnrollFactor;
    // The main loop's k satisfy k + span - 32 < N.
    Value mainEnd = index(b, std::max<int64_t>(n - span + kWarpSize, 0));
    auto main = scf::ForOp::create(
        b, loc, lane, mainEnd, index(b, span), acc,
        [&](OpBuilder &nb, Location l, Value k, ValueRange iterArgs) {
          SmallVector<Value> sums(iterArgs);
          for (int64_t j = 0; j < kUnrollFactor; ++j) {
            Value kj =
                arith::AddIOp::create(nb, l, k, index(nb, j * kWarpSize));
            sums = accumulate(nb, l, kj, sums);
          }
          scf::YieldOp::create(nb, l, sums);
        });
    // Where the main loop stopped: the first k = lane (mod span) at or past
    // mainEnd.
    Value mainSteps = arith::CeilDivUIOp::create(
        b, loc,
        arith::SubIOp::create(
            b, loc, arith::MaxUIOp::create(b, loc, mainEnd, lane), lane),
        index(b, span));
    Value restBegin = arith::AddIOp::create(
        b, loc, lane, arith::MulIOp::create(b, loc, mainSteps, index(b, span)));
    auto rest = scf::ForOp::create(
        b, loc, restBegin, index(b, n), index(b, kWarpSize), main.getResults(),
        [&](OpBuilder &nb, Location l, Value k, ValueRange iterArgs) {
          scf::YieldOp::create(
              nb, l, accumulate(nb, l, k, SmallVector<Value>(iterArgs)));
        });
    acc.assign(rest.getResults().begin(), rest.getResults().end());
  }
  for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2)
    for (Value &sum : acc) {
      Value other = gpu::ShuffleOp::create(b, loc, sum, offset, kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      sum = arith::AddFOp::create(b, loc, sum, other);
    }
  return acc;
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
                                             Value step, Value next, Value row,
                                             Value localRow, Value unit,
                                             Value lane, Value store) {
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
  // Every lane has the results; lane 0 writes those of this phase.
  Value isFirst = arith::AndIOp::create(
      b, loc, store,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                            index(b, 0)));
  scf::IfOp::create(b, loc, isFirst, [&](OpBuilder &ib, Location l) {
    for (auto [o, r] : llvm::enumerate(plan.outputResults))
      if (Value v = resultOf(r))
        memref::StoreOp::create(ib, l, v, outputs[o],
                                ValueRange{step, row, unit});
    for (auto [s, r] : llvm::enumerate(plan.stateResults))
      if (Value v = resultOf(r))
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
    computeElement(b, phase, mappings, step, next, group.rows[i],
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
    int64_t floats = chunkRows * plan.width;
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
