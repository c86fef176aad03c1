//===- PersistentWarp.cpp - A warp's share of a kernel's step -------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Each warp of a block owns one unit of the block's tile (or several: one
// after the other when the tile has more units than the block has warps,
// or at once where their weights fit in its registers) and a share of the
// rows. In a chunk of staged rows it takes its rows a group at a time: its
// lanes split the dot products of the group's staged rows with the weight
// rows the pointwise region reads (lane l sums k = l, l + 32, ...; each
// staged value loaded once for all the units at once), one butterfly of
// shuffles sums all of them, and lane s · size + j evaluates the element
// of the group's row j of its s-th unit (PersistentElement.cpp): the
// region once per element, not once per lane.
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

Value PersistentKernelBuilder::slotUnit(OpBuilder &b, Value slot, int64_t s) {
  if (s == 0)
    return slot;
  return arith::AddIOp::create(b, loc, slot, index(b, s * unitSlots));
}

Value PersistentKernelBuilder::laneRowInGroup(OpBuilder &b, int64_t size,
                                              Value lane) {
  Value element = laneInGroup(b, size * unitsAtOnce, lane);
  if (unitsAtOnce == 1)
    return element;
  return arith::RemUIOp::create(b, loc, element, index(b, size));
}

Value PersistentKernelBuilder::laneUnit(OpBuilder &b, Value slot, int64_t size,
                                        Value lane) {
  if (unitsAtOnce == 1)
    return slot;
  Value element = laneInGroup(b, size * unitsAtOnce, lane);
  Value s = arith::DivUIOp::create(b, loc, element, index(b, size));
  return arith::AddIOp::create(
      b, loc, slot, arith::MulIOp::create(b, loc, s, index(b, unitSlots)));
}

Value PersistentKernelBuilder::laneRow(OpBuilder &b, Value first, Value rows,
                                       Value group, Value index, int64_t size,
                                       Value lane) {
  Value local = warpRow(
      b, group,
      arith::AddIOp::create(b, loc, index, laneRowInGroup(b, size, lane)));
  Value lastRow = arith::SubIOp::create(b, loc, rows, this->index(b, 1));
  return arith::AddIOp::create(b, loc, first,
                               arith::MinUIOp::create(b, loc, local, lastRow));
}

/// `size` of the warp's rows of the chunk [first, first + rows) for its
/// units at once, from its `index`-th on (rows group + (index + j) ·
/// rowGroups; one past the chunk is computed on its last row and not
/// stored): every lane accumulates its share of each row's dot products,
/// reduceAcrossLanes sums them, and lane s · size + j gathers the sums of
/// the group's row j for the s-th unit with shuffles and evaluates that
/// element (with one element, lane 0; the other lanes' results are not
/// stored). `unit` and `inside` are the lane's unit (warpUnit of laneUnit),
/// `operands` the lane's (loadOperands on its row, laneRow with the phase's
/// group size, and its unit).
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
  // The group's elements: its rows for each of the units at once.
  int64_t elements = size * unitsAtOnce;
  SmallVector<Value> values;
  for (int64_t j = 0; j < elements; ++j)
    for (auto &perProduct : partials)
      llvm::append_range(values, perProduct[j]);
  SmallVector<Value> sums = reduceAcrossLanes(b, values, lane);
  // Value v of a chunk of 2^m is in lane v << (5 - m) (and those after it).
  auto laneOf = [&](int64_t chunkSize) {
    return 5 - int64_t(llvm::Log2_64(llvm::PowerOf2Ceil(chunkSize)));
  };
  Value inGroup = laneInGroup(b, elements, lane);
  ColumnSums columns;
  int64_t v = 0;
  for (unsigned p : phaseProducts[phase]) {
    for (int64_t column : neededColumns[p]) {
      Value source, sum;
      if (elements == 1) {
        // Every lane reads the one row's sums.
        int64_t chunk = v / kLanes;
        int64_t chunkSize =
            std::min<int64_t>(kLanes, int64_t(values.size()) - chunk * kLanes);
        source = arith::ConstantIntOp::create(
            b, loc, b.getI32Type(), (v % kLanes) << laneOf(chunkSize));
        sum = sums[chunk];
      } else {
        // One chunk (elements · perRow <= 32); lane j reads element j's.
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
  Value local = warpRow(
      b, group,
      arith::AddIOp::create(b, loc, index, laneRowInGroup(b, size, lane)));
  Value store = arith::AndIOp::create(
      b, loc, inside,
      arith::AndIOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, local, rows),
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, lane,
                                this->index(b, elements))));
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
      arith::MulIOp::create(b, loc, unitTile, index(b, unitsPerBlock));
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
        // The slot of the warp's units (one after the other, or at once).
        Value unitSlot = arith::AddIOp::create(
            ub, l, slot, arith::MulIOp::create(ub, l, u, index(ub, unitSlots)));
        // The lane's unit in groups of `rowsAtOnce` rows.
        auto unitOf = [&](OpBuilder &nb, int64_t rowsAtOnce) {
          return warpUnit(nb, laneUnit(nb, unitSlot, rowsAtOnce, lane));
        };
        WarpUnit unit = unitOf(ub, size);
        auto operandsAt = [&](OpBuilder &nb, Value at, const WarpUnit &of,
                              int64_t rowsAtOnce) {
          return loadOperands(
              nb, phase, step, cur,
              laneRow(nb, first, rows, group, at, rowsAtOnce, lane), of.index);
        };
        // The operands of the group at `at`: the early ones for the first
        // group, else loaded at the start of the group (carried from the
        // group before, they would be live through its work: a training
        // forward's cell, which saves its activations, spilled).
        auto operandsOf = [&](OpBuilder &nb, Location nl, Value at,
                              const WarpUnit &of, int64_t rowsAtOnce) {
          if (!early)
            return operandsAt(nb, at, of, rowsAtOnce);
          Value isFirst = arith::CmpIOp::create(
              nb, nl, arith::CmpIPredicate::eq, at, index(nb, 0));
          auto choice = scf::IfOp::create(
              nb, nl, isFirst,
              [&](OpBuilder &tb, Location tl) {
                scf::YieldOp::create(tb, tl, *early);
              },
              [&](OpBuilder &eb, Location el) {
                scf::YieldOp::create(eb, el,
                                     operandsAt(eb, at, of, rowsAtOnce));
              });
          return SmallVector<Value>(choice.getResults());
        };
        scf::ForOp::create(
            ub, l, index(ub, 0), groups, index(ub, 1), ValueRange(),
            [&](OpBuilder &gb, Location gl, Value g, ValueRange) {
              Value at = arith::MulIOp::create(gb, gl, g, index(gb, size));
              buildRowGroup(gb, phase, size, at, first, rows, group, step, cur,
                            next, unit.index, unit.inside, lane,
                            operandsOf(gb, gl, at, unit, size));
              scf::YieldOp::create(gb, gl);
            });
        if (size != 1) {
          Value at = arith::MulIOp::create(ub, l, groups, index(ub, size));
          Value single = arith::CmpIOp::create(ub, l, arith::CmpIPredicate::ult,
                                               at, count);
          scf::IfOp::create(ub, l, single, [&](OpBuilder &ib, Location) {
            // One row: with several units at once, the lanes' units differ
            // from the groups' (the early operands are the first group's,
            // never this one's unless it is the first: then it has the
            // first group's lanes too, as laneRow clamps the same way).
            WarpUnit one = unitsAtOnce == 1 ? unit : unitOf(ib, 1);
            buildRowGroup(ib, phase, 1, at, first, rows, group, step, cur, next,
                          one.index, one.inside, lane,
                          unitsAtOnce == 1 ? operandsOf(ib, l, at, one, 1)
                                           : operandsAt(ib, at, one, 1));
            scf::YieldOp::create(ib, l);
          });
        }
        scf::YieldOp::create(ub, l);
      });
}
