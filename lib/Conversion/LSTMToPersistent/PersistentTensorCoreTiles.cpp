//===- PersistentTensorCoreTiles.cpp - A warp's tiles on MMA ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A warp's work in a chunk of staged rows on tensor cores, around the
// products of PersistentTensorCores.cpp: its 16-row tiles in turn, each
// phase's products into the warp's tile of shared memory, then the lanes'
// elements read back from it (which row and unit a lane takes, how the
// partial tiles of a depth split are summed) and evaluated as the
// dot-product path does (PersistentElement.cpp).
//
//===----------------------------------------------------------------------===//

#include "PersistentKernelBuilder.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// The warp's work in one chunk of staged rows [first, first + rows) on
/// tensor cores: its tiles of kMmaRows rows (tile `group`, group +
/// rowGroups, ...; the rows past the chunk computed on its last row and not
/// stored), for its units at once. Per tile, the phase's products into the
/// warp's tile of shared memory, then each lane's elements: element e =
/// lane + 32i is row e mod 16 of the tile, unit e / 16 of the warp's.
void PersistentKernelBuilder::buildMmaChunk(OpBuilder &b, unsigned phase,
                                            Value step, Value cur, Value next,
                                            Value first, Value rows, Value slot,
                                            Value group, Value warp,
                                            Value lane) {
  Value tiles = arith::CeilDivUIOp::create(b, loc, rows, index(b, kMmaRows));
  Value lastRow = arith::SubIOp::create(b, loc, rows, index(b, 1));
  Value g = arith::DivUIOp::create(b, loc, lane, index(b, kLaneTerms));
  Value twoT = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, index(b, kLaneTerms)),
      index(b, 2));
  int64_t tileFloats = kMmaRows * mmaScratchStride;
  Value base = arith::MulIOp::create(b, loc, warp,
                                     index(b, scratchTiles() * tileFloats));
  // Under a depth split, the warps of row groups [tileGroup · depthSplit,
  // + depthSplit) of the slot take the same tiles, each its part of the
  // depth, and meet at named barrier 1 + slot + unitSlots · tileGroup.
  Value part, tileGroup = group, barrierId, firstBase;
  if (depthSplit > 1) {
    part = arith::RemUIOp::create(b, loc, group, index(b, depthSplit));
    tileGroup = arith::DivUIOp::create(b, loc, group, index(b, depthSplit));
    barrierId = arith::IndexCastOp::create(
        b, loc, b.getI32Type(),
        arith::AddIOp::create(
            b, loc, index(b, 1),
            arith::AddIOp::create(b, loc, slot,
                                  arith::MulIOp::create(b, loc, tileGroup,
                                                        index(b, unitSlots)))));
    // The scratch of the set's first warp (warp = slot + unitSlots ·
    // group); the s-th's is s · unitSlots warps on.
    Value firstWarp = arith::AddIOp::create(
        b, loc, slot,
        arith::MulIOp::create(
            b, loc,
            arith::MulIOp::create(b, loc, tileGroup, index(b, depthSplit)),
            index(b, unitSlots)));
    firstBase = arith::MulIOp::create(b, loc, firstWarp,
                                      index(b, scratchTiles() * tileFloats));
  }
  int64_t tileGroups = rowGroups / depthSplit;
  scf::ForOp::create(
      b, loc, tileGroup, tiles, index(b, tileGroups), ValueRange(),
      [&](OpBuilder &tb, Location l, Value tile, ValueRange) {
        Value tileFirst =
            arith::MulIOp::create(tb, l, tile, index(tb, kMmaRows));
        auto stagedRow = [&](Value offset) -> Value {
          return arith::MinUIOp::create(
              tb, l, arith::AddIOp::create(tb, l, tileFirst, offset), lastRow);
        };
        Value rowLow = stagedRow(g);
        Value rowHigh =
            stagedRow(arith::AddIOp::create(tb, l, g, index(tb, kMmaRows / 2)));
        // The warp's tile of scratch: under a depth split, the tiles
        // alternate (the j-th of the warp's, j = (tile - tileGroup) /
        // tileGroups), and the set's warps take the j-th tile's rounds of
        // elements in turn from warp j mod depthSplit (rotation: the
        // warp's place after it).
        Value tileBase = base, rotation, parity;
        if (depthSplit > 1) {
          Value j = arith::DivUIOp::create(
              tb, l, arith::SubIOp::create(tb, l, tile, tileGroup),
              index(tb, tileGroups));
          parity = arith::MulIOp::create(
              tb, l, arith::RemUIOp::create(tb, l, j, index(tb, 2)),
              index(tb, tileFloats));
          tileBase = arith::AddIOp::create(tb, l, base, parity);
          rotation = arith::RemUIOp::create(
              tb, l,
              arith::SubIOp::create(
                  tb, l,
                  arith::AddIOp::create(tb, l, part, index(tb, depthSplit)),
                  arith::RemUIOp::create(tb, l, j, index(tb, depthSplit))),
              index(tb, depthSplit));
        } else {
          // The lanes' reads of the tile before are done.
          WarpBarrierOp::create(tb, l);
        }
        SmallVector<std::pair<unsigned, int64_t>> offsets;
        int64_t offset = 0;
        for (unsigned p : phaseProducts[phase]) {
          SmallVector<SmallVector<Value>> sums =
              buildMmaProduct(tb, p, rowLow, rowHigh, lane, part);
          for (auto [i, sum] : llvm::enumerate(sums)) {
            // c0, c1: row g, columns 2t and 2t + 1; c2, c3: row g + 8.
            for (int64_t e = 0; e < 4; ++e) {
              Value row = e < 2 ? g
                                : arith::AddIOp::create(
                                      tb, l, g, index(tb, kMmaRows / 2));
              Value column = arith::AddIOp::create(
                  tb, l, twoT,
                  index(tb, offset + int64_t(i) * kMmaColumns + e % 2));
              Value at = arith::AddIOp::create(
                  tb, l, tileBase,
                  arith::AddIOp::create(
                      tb, l,
                      arith::MulIOp::create(tb, l, row,
                                            index(tb, mmaScratchStride)),
                      column));
              memref::StoreOp::create(tb, l, sum[e], mmaScratch,
                                      ValueRange{at});
            }
          }
          offsets.push_back({p, offset});
          offset += mmaTiles(p) * kMmaColumns;
        }
        // The partial tiles are written: with a depth split, the warps'
        // next tile is written to the other half of their scratch, and
        // the one after only once every warp of the set has reached this
        // barrier again, its reads of this tile done.
        if (depthSplit > 1)
          WarpsBarrierOp::create(tb, l, barrierId, depthSplit);
        else
          WarpBarrierOp::create(tb, l);
        evaluateMmaTile(tb, phase, step, cur, next, first, rows, slot, lane,
                        tileFirst, offsets,
                        depthSplit > 1
                            ? arith::AddIOp::create(tb, l, firstBase, parity)
                            : tileBase,
                        rotation);
        scf::YieldOp::create(tb, l);
      });
}

PersistentKernelBuilder::MmaElement
PersistentKernelBuilder::mmaElement(OpBuilder &b, Value first, Value rows,
                                    Value slot, Value lane, Value tileFirst,
                                    int64_t i, Value rotation) {
  MmaElement e;
  Value lastRow = arith::SubIOp::create(b, loc, rows, index(b, 1));
  e.tileRow = arith::RemUIOp::create(b, loc, lane, index(b, kMmaRows));
  // The lane's unit of the warp's: lane / 16 + 2m, for its round m = i
  // (under a depth split m = rotation + depthSplit · i: the set's warps
  // take the tile's rounds in turn).
  e.warpUnit = arith::AddIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, lane, index(b, kMmaRows)),
      index(b, depthSplit * i * kLanes / kMmaRows));
  if (rotation)
    e.warpUnit = arith::AddIOp::create(
        b, loc, e.warpUnit,
        arith::MulIOp::create(b, loc, rotation, index(b, kLanes / kMmaRows)));
  Value valid;
  if (kMmaRows * unitsAtOnce < depthSplit * (i + 1) * kLanes) {
    valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, e.warpUnit,
                                  index(b, unitsAtOnce));
    e.warpUnit =
        arith::MinUIOp::create(b, loc, e.warpUnit, index(b, unitsAtOnce - 1));
  }
  Value local = arith::AddIOp::create(b, loc, tileFirst, e.tileRow);
  e.staged = arith::MinUIOp::create(b, loc, local, lastRow);
  e.row = arith::AddIOp::create(b, loc, first, e.staged);
  e.unit = warpUnit(
      b, arith::AddIOp::create(
             b, loc, slot,
             arith::MulIOp::create(b, loc, e.warpUnit, index(b, unitSlots))));
  e.store = arith::AndIOp::create(
      b, loc, e.unit.inside,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, local, rows));
  if (valid)
    e.store = arith::AndIOp::create(b, loc, e.store, valid);
  return e;
}

int64_t PersistentKernelBuilder::mmaElementsPerLane() const {
  return divCeil(kMmaRows * unitsAtOnce, kLanes);
}

void PersistentKernelBuilder::evaluateMmaTile(
    OpBuilder &tb, unsigned phase, Value step, Value cur, Value next,
    Value first, Value rows, Value slot, Value lane, Value tileFirst,
    ArrayRef<std::pair<unsigned, int64_t>> offsets, Value tileBase,
    Value rotation) {
  Location l = loc;
  // Under a depth split, the set's warps' partial tiles, unitSlots warps
  // apart.
  int64_t partStride = scratchTiles() * kMmaRows * mmaScratchStride * unitSlots;
  auto evaluate = [&](OpBuilder &tb, int64_t i) {
    MmaElement e =
        mmaElement(tb, first, rows, slot, lane, tileFirst, i, rotation);
    Value rowAt = arith::AddIOp::create(
        tb, l, tileBase,
        arith::MulIOp::create(tb, l, e.tileRow, index(tb, mmaScratchStride)));
    ColumnSums columns;
    for (auto [p, at] : offsets) {
      auto count = int64_t(neededColumns[p].size());
      Value unitColumns = arith::AddIOp::create(
          tb, l, rowAt,
          arith::AddIOp::create(
              tb, l, arith::MulIOp::create(tb, l, e.warpUnit, index(tb, count)),
              index(tb, at)));
      for (auto [c, column] : llvm::enumerate(neededColumns[p])) {
        Value sum;
        for (int64_t w = 0; w < depthSplit; ++w) {
          Value partial = memref::LoadOp::create(
              tb, l, mmaScratch,
              ValueRange{arith::AddIOp::create(
                  tb, l, unitColumns, index(tb, int64_t(c) + w * partStride))});
          sum = sum ? arith::AddFOp::create(tb, l, sum, partial).getResult()
                    : partial;
        }
        columns[{p, column}] = sum;
      }
    }
    SmallVector<Value> operands =
        loadOperands(tb, phase, step, cur, e.row, e.unit.index);
    computeElement(tb, phase, mapOperands(phase, operands), columns, step, cur,
                   next, e.row, e.staged, e.unit.index, e.store);
  };
  for (int64_t i = 0; i < divCeil(mmaElementsPerLane(), depthSplit); ++i) {
    // A warp whose round m = rotation + depthSplit · i is past the tile's
    // rounds skips it (its lanes' units 2m and 2m + 1 past the warp's).
    if (depthSplit == 1 ||
        kMmaRows * unitsAtOnce >= depthSplit * (i + 1) * kLanes) {
      evaluate(tb, i);
      continue;
    }
    Value round =
        arith::AddIOp::create(tb, l, rotation, index(tb, depthSplit * i));
    Value live = arith::CmpIOp::create(
        tb, l, arith::CmpIPredicate::ult,
        arith::MulIOp::create(tb, l, round, index(tb, kLanes / kMmaRows)),
        index(tb, unitsAtOnce));
    scf::IfOp::create(tb, l, live, [&](OpBuilder &ib, Location) {
      evaluate(ib, i);
      scf::YieldOp::create(ib, l);
    });
  }
}
