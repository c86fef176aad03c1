//===- PersistentElement.cpp - One element of a kernel's step -------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The work of one element (row, unit) of a step once its product columns
// are summed (PersistentWarp.cpp): the operands the phase does not compute
// (the step's inputs, the states at its start, values defined above the
// layer, earlier phases' results and product columns from their scratch
// buffers), loaded before the staging; the cloned pointwise region; the
// stores of the outputs, new states and scratch values. Also the elementwise
// loops of a block over the elements of its tile (forOwnElements).
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
/// thread owns: the tile is rows [rowBegin, rowEnd) of `unitsPerBlock`
/// units, its elements dealt out to the threads in turn (consecutive
/// threads, consecutive units).
void PersistentKernelBuilder::forOwnElements(
    OpBuilder &b, Value threadId,
    function_ref<void(OpBuilder &, Value, Value)> body) {
  Value units = index(b, unitsPerBlock);
  Value first = arith::MulIOp::create(b, loc, unitTile, units);
  Value count = arith::MulIOp::create(
      b, loc, arith::SubIOp::create(b, loc, rowEnd, rowBegin), units);
  scf::ForOp::create(
      b, loc, threadId, count, index(b, blockSize), ValueRange(),
      [&](OpBuilder &nb, Location l, Value item, ValueRange) {
        Value row = arith::AddIOp::create(
            nb, l, rowBegin, arith::DivUIOp::create(nb, l, item, units));
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
/// its start, the values defined above the layer, and the results and
/// product columns of earlier phases (from their scratch buffers); for each op
/// of the phase in program order, for each such operand in order. They do not
/// depend on the staged values, so that they can be loaded before the staging.
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
        if (carriedInto(phase, source.index))
          operands.push_back(memref::LoadOp::create(
              b, loc, carriedFor(source.index, source.column),
              ValueRange{cur, row, unit}));
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
      if ((source.kind == Kind::Product && !carriedInto(phase, source.index)) ||
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
      if (source.kind == Kind::Product && !carriedInto(phase, source.index))
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
    for (auto [column, buffer] : llvm::zip(carriedColumns, carried))
      if (plan.products[column.first].phase == phase)
        memref::StoreOp::create(ib, l, columns.lookup(column), buffer,
                                ValueRange{cur, row, unit});
    scf::YieldOp::create(ib, l);
  });
}
