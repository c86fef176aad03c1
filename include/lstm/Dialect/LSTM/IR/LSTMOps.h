//===- LSTMOps.h - Operations of the lstm dialect ---------------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_DIALECT_LSTM_IR_LSTMOPS_H
#define LSTM_DIALECT_LSTM_IR_LSTMOPS_H

#include "lstm/Dialect/LSTM/IR/LSTMDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "lstm/Dialect/LSTM/IR/LSTMOpsEnums.h.inc"

namespace mlir::lstm {
/// The trait of lstm.layer that verifies its cell against the layer (the
/// cell's arguments and yielded values against the layer's inputs, states
/// and outputs), ahead of the op's other verifiers.
template <typename ConcreteType>
class CellMatchesLayer
    : public OpTrait::TraitBase<ConcreteType, CellMatchesLayer> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return cast<ConcreteType>(op).verifyCell();
  }
};
} // namespace mlir::lstm

#define GET_OP_CLASSES
#include "lstm/Dialect/LSTM/IR/LSTMOps.h.inc"

namespace mlir {
class OpBuilder;

namespace lstm {

/// Builds `act(x)` for a scalar float `x` with arith/math ops: the one
/// definition of the activations, shared by the lowering of `lstm.gate` and
/// by the passes that expand gates into scalar code (sigmoid is
/// `1 / (1 + exp(-x))`, relu is `max(x, 0)`).
Value buildActivation(OpBuilder &b, Location loc, Activation act, Value x);

} // namespace lstm
} // namespace mlir

#endif // LSTM_DIALECT_LSTM_IR_LSTMOPS_H
