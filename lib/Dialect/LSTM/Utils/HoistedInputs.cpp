//===- HoistedInputs.cpp - Hoisted input projections, found again ---------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Utils/HoistedInputs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::lstm;

/// [T, B, K] <-> [T·B, K].
static bool isStepRowsReassociation(ArrayRef<ReassociationIndices> r) {
  return r.size() == 2 && r[0] == ReassociationIndices{0, 1} &&
         r[1] == ReassociationIndices{2};
}

std::optional<HoistedInput> mlir::lstm::matchHoistedInput(Value input) {
  auto expand = input.getDefiningOp<tensor::ExpandShapeOp>();
  if (!expand || !isStepRowsReassociation(expand.getReassociationIndices()))
    return std::nullopt;
  auto gate = expand.getSrc().getDefiningOp<GateOp>();
  if (!gate)
    return std::nullopt;
  // The operands indexed by row (a row is a step's batch row): each must be
  // the collapsed sequence.
  SmallVector<Value> rowOperands(gate.getInputs());
  llvm::append_range(rowOperands, gate.getAddends());
  if (gate.getPeepholeState())
    rowOperands.push_back(gate.getPeepholeState());
  Value sequence;
  for (Value operand : rowOperands) {
    auto collapse = operand.getDefiningOp<tensor::CollapseShapeOp>();
    if (!collapse ||
        !isStepRowsReassociation(collapse.getReassociationIndices()) ||
        (sequence && collapse.getSrc() != sequence))
      return std::nullopt;
    sequence = collapse.getSrc();
  }
  if (!sequence)
    return std::nullopt;
  return HoistedInput{expand, gate, sequence};
}

LogicalResult mlir::lstm::requireThreadsFunction(Operation *op, StringRef name,
                                                 StringRef pass) {
  if (!name.empty())
    return success();
  return op->emitError(pass)
         << ": threads-function must name the function () -> i32 that gives "
            "the number of threads at run time";
}

FailureOr<func::FuncOp> mlir::lstm::declareThreadsFunction(OpBuilder &builder,
                                                           Operation *op,
                                                           StringRef name,
                                                           StringRef pass) {
  Operation *table = SymbolTable::getNearestSymbolTable(op);
  if (!table)
    return op->emitError(pass)
           << ": threads-function needs a symbol table (a module) to "
              "declare it in";
  FunctionType type = builder.getFunctionType({}, {builder.getI32Type()});
  Operation *symbol =
      SymbolTable::lookupSymbolIn(table, builder.getStringAttr(name));
  if (!symbol) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&table->getRegion(0).front());
    auto callee = func::FuncOp::create(builder, op->getLoc(), name, type);
    callee.setPrivate();
    return callee;
  }
  auto callee = dyn_cast<func::FuncOp>(symbol);
  if (!callee || callee.getFunctionType() != type)
    return symbol->emitError(pass) << ": threads-function '" << name
                                   << "' must be a function () -> i32";
  return callee;
}

Value mlir::lstm::buildThreadCount(OpBuilder &builder, Location loc,
                                   func::FuncOp callee) {
  Value threads = func::CallOp::create(builder, loc, callee).getResult(0);
  threads =
      arith::IndexCastOp::create(builder, loc, builder.getIndexType(), threads);
  return arith::MaxSIOp::create(
      builder, loc, threads, arith::ConstantIndexOp::create(builder, loc, 1));
}
