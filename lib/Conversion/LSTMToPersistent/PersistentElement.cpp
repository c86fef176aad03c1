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
    // An op narrower than N reads its operands' columns below its width
    // (the units past it evaluate the last one and store nothing).
    Value opUnit = unit;
    if (op.width < plan.width)
      opUnit = arith::MinUIOp::create(b, loc, unit, index(b, op.width - 1));
    for (int64_t j = 0; j < op.pieces; ++j) {
      for (const OperandSource &source : op.operands) {
        // The operand's column for the unit's piece j.
        int64_t offset = source.column + j * plan.width;
        auto column = [&]() -> Value {
          if (offset == 0)
            return opUnit;
          return arith::AddIOp::create(b, loc, opUnit, index(b, offset));
        };
        switch (source.kind) {
        case Kind::Product:
          if (carriedInto(phase, source.index))
            operands.push_back(
                memref::LoadOp::create(b, loc, carriedFor(source.index, offset),
                                       ValueRange{cur, row, unit}));
          break;
        case Kind::Computed:
          if (plan.pointwise[source.computed.op].phase != phase)
            operands.push_back(
                memref::LoadOp::create(b, loc, scratchFor(source.computed),
                                       ValueRange{cur, row, column()}));
          break;
        case Kind::Concat: {
          const Computed &piece = concatPiece(source, offset);
          if (plan.pointwise[piece.op].phase != phase)
            operands.push_back(memref::LoadOp::create(
                b, loc, scratchFor(piece), ValueRange{cur, row, unit}));
          break;
        }
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
                memref::LoadOp::create(b, loc, buffer, ValueRange{column()}));
          else
            operands.push_back(memref::LoadOp::create(
                b, loc, buffer, ValueRange{row, column()}));
          break;
        }
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
    for (int64_t j = 0; j < op.pieces; ++j) {
      IRMapping &mapping = mappings.emplace_back();
      for (auto [source, arg] :
           llvm::zip(op.operands, pointwiseArguments(op))) {
        if ((source.kind == Kind::Product &&
             !carriedInto(phase, source.index)) ||
            (source.kind == Kind::Computed &&
             plan.pointwise[source.computed.op].phase == phase) ||
            (source.kind == Kind::Concat &&
             plan.pointwise[concatPiece(source, source.column + j * plan.width)
                                .op]
                     .phase == phase))
          continue;
        mapping.map(arg, *next++);
      }
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
  // The phase's results, by value and piece.
  SmallVector<std::tuple<Computed, int64_t, Value>> results;
  auto resultOf = [&](const Computed &value, int64_t piece = 0) -> Value {
    for (auto &[v, j, r] : results)
      if (v == value && j == piece)
        return r;
    return Value();
  };
  unsigned m = 0;
  for (auto [i, op] : llvm::enumerate(plan.pointwise)) {
    if (op.phase != phase)
      continue;
    for (int64_t j = 0; j < op.pieces; ++j) {
      IRMapping &mapping = mappings[m++];
      for (auto [source, arg] :
           llvm::zip(op.operands, pointwiseArguments(op))) {
        int64_t offset = source.column + j * plan.width;
        if (source.kind == Kind::Product && !carriedInto(phase, source.index))
          mapping.map(arg, columns.lookup({source.index, offset}));
        else if (source.kind == Kind::Computed &&
                 plan.pointwise[source.computed.op].phase == phase)
          mapping.map(arg, resultOf(source.computed, offset / plan.width));
        else if (source.kind == Kind::Concat) {
          const Computed &piece = concatPiece(source, offset);
          if (plan.pointwise[piece.op].phase == phase)
            mapping.map(arg, resultOf(piece));
        }
      }
      auto pointwise = dyn_cast<PointwiseOp>(op.op);
      if (!pointwise) {
        // A lone elementwise op: its scalar form.
        SmallVector<Value> scalars;
        for (Value operand : op.op->getOperands())
          scalars.push_back(mapping.lookup(operand));
        Type element = cast<RankedTensorType>(op.op->getResult(0).getType())
                           .getElementType();
        Operation *scalar =
            b.create(op.op->getLoc(), op.op->getName().getIdentifier(), scalars,
                     {element}, op.op->getAttrs());
        results.push_back({Computed{unsigned(i), 0}, j, scalar->getResult(0)});
        continue;
      }
      Block &region = pointwise.getBody().front();
      for (Operation &inner : region.without_terminator())
        b.clone(inner, mapping);
      auto yield = cast<PointwiseYieldOp>(region.getTerminator());
      for (auto [r, value] : llvm::enumerate(yield.getValues()))
        results.push_back({Computed{unsigned(i), unsigned(r)}, j,
                           mapping.lookupOrDefault(value)});
    }
  }
  using YieldKind = PersistentPlan::YieldSource::Kind;
  scf::IfOp::create(b, loc, store, [&](OpBuilder &sb, Location l) {
    // Packed sequences: a step at or past row b's length keeps its states
    // and writes zeros to its outputs (the per-step lowering's masks).
    Value live;
    if (lengths) {
      Value length = memref::LoadOp::create(sb, l, lengths, ValueRange{row});
      Value stepAsLength =
          arith::IndexCastOp::create(sb, l, length.getType(), step);
      live = arith::CmpIOp::create(sb, l, arith::CmpIPredicate::slt,
                                   stepAsLength, length);
    }
    // `value` where the row is live, else `inactive` (zero where null).
    auto masked = [&](OpBuilder &ib, Value value,
                      function_ref<Value(OpBuilder &)> inactive) -> Value {
      if (!live)
        return value;
      Value other = inactive ? inactive(ib)
                             : arith::ConstantOp::create(
                                   ib, l, ib.getZeroAttr(value.getType()))
                                   .getResult();
      return arith::SelectOp::create(ib, l, live, value, other);
    };
    // Stores what `value` builds at (lead, row, column) of `buffer`; a
    // buffer narrower than N (a state that a product makes, an LSTMP's
    // projected h, or its sequence) only for the units it has, its value
    // built under the same condition (the loads it may take would be out
    // of its rows).
    auto storeTo = [&](Value buffer, Value lead, Value column,
                       function_ref<Value(OpBuilder &)> value) {
      int64_t width = cast<MemRefType>(buffer.getType()).getDimSize(2);
      auto build = [&](OpBuilder &ib) {
        memref::StoreOp::create(ib, l, value(ib), buffer,
                                ValueRange{lead, row, column});
      };
      if (width >= plan.width) {
        build(sb);
        return;
      }
      Value within = arith::CmpIOp::create(sb, l, arith::CmpIPredicate::ult,
                                           column, index(sb, width));
      scf::IfOp::create(sb, l, within, [&](OpBuilder &ib, Location) {
        build(ib);
        scf::YieldOp::create(ib, l);
      });
    };
    // Whether the phase makes what `source` yields: a state argument (the
    // state at the start of the step) is written in the first phase, a
    // product in its own.
    auto madeHere = [&](const PersistentPlan::YieldSource &source) {
      switch (source.kind) {
      case YieldKind::Computed:
        return bool(resultOf(source.computed));
      case YieldKind::StateArg:
        return phase == 0;
      case YieldKind::Product:
        return plan.products[source.index].phase == phase;
      case YieldKind::Concat:
        break;
      }
      return false;
    };
    auto yielded = [&](OpBuilder &ib,
                       const PersistentPlan::YieldSource &source) -> Value {
      switch (source.kind) {
      case YieldKind::Computed:
        return resultOf(source.computed);
      case YieldKind::StateArg: {
        // A training forward saves h_{t-1}: where the phase staged it,
        // from shared memory (from global memory, the store waited for
        // the load's round trip: 15% of the kernel's time in ncu).
        TermInput state{TermInput::Kind::State, source.index, {}};
        if (llvm::is_contained(stagedInputs[phase], state)) {
          Value at = arith::AddIOp::create(
              ib, l,
              arith::MulIOp::create(ib, l, stagedRow,
                                    index(ib, stagedStride(state))),
              unit);
          return memref::LoadOp::create(ib, l, stagedFor(state),
                                        ValueRange{at});
        }
        return memref::LoadOp::create(ib, l, stateBuffers[source.index],
                                      ValueRange{cur, row, unit});
      }
      case YieldKind::Product:
        return columns.lookup({source.index, 0});
      case YieldKind::Concat:
        break;
      }
      llvm_unreachable("a concatenation is stored piece by piece");
    };
    // Column unit + j · N, the unit's piece j.
    auto pieceColumn = [&](int64_t j) -> Value {
      if (j == 0)
        return unit;
      return arith::AddIOp::create(sb, l, unit, index(sb, j * plan.width));
    };
    for (auto [o, r] : llvm::enumerate(plan.outputResults)) {
      switch (r.kind) {
      case YieldKind::Concat:
        // Each piece at its columns, in the phase that makes it.
        for (auto [j, piece] : llvm::enumerate(plan.concats[r.index].pieces))
          if (Value v = resultOf(piece))
            storeTo(outputs[o], step, pieceColumn(int64_t(j)),
                    [&](OpBuilder &ib) { return masked(ib, v, nullptr); });
        break;
      case YieldKind::Product:
        // Each N-wide piece of its columns (one where it has N or fewer).
        if (madeHere(r))
          for (int64_t j = 0; j < productPieces(r.index); ++j) {
            Value v = columns.lookup({r.index, j * plan.width});
            storeTo(outputs[o], step, pieceColumn(j),
                    [&](OpBuilder &ib) { return masked(ib, v, nullptr); });
          }
        break;
      case YieldKind::Computed:
        for (int64_t j = 0; j < plan.pointwise[r.computed.op].pieces; ++j)
          if (Value v = resultOf(r.computed, j))
            storeTo(outputs[o], step, pieceColumn(j),
                    [&](OpBuilder &ib) { return masked(ib, v, nullptr); });
        break;
      case YieldKind::StateArg:
        if (madeHere(r))
          storeTo(outputs[o], step, unit, [&](OpBuilder &ib) {
            return masked(ib, yielded(ib, r), nullptr);
          });
        break;
      }
    }
    for (auto [s, r] : llvm::enumerate(plan.stateResults)) {
      if (!madeHere(r))
        continue;
      Value buffer = stateBuffers[s];
      storeTo(buffer, next, unit, [&](OpBuilder &ib) {
        return masked(ib, yielded(ib, r), [&](OpBuilder &ob) -> Value {
          return memref::LoadOp::create(ob, l, buffer,
                                        ValueRange{cur, row, unit});
        });
      });
    }
    for (auto [value, buffer] : llvm::zip(scratchValues, scratch))
      for (int64_t j = 0; j < plan.pointwise[value.op].pieces; ++j)
        if (Value v = resultOf(value, j))
          storeTo(buffer, cur, pieceColumn(j), [&](OpBuilder &) { return v; });
    for (auto [column, buffer] : llvm::zip(carriedColumns, carried))
      if (plan.products[column.first].phase == phase)
        memref::StoreOp::create(sb, l, columns.lookup(column), buffer,
                                ValueRange{cur, row, unit});
    scf::YieldOp::create(sb, l);
  });
}
