//===- PersistentPlan.h - What a persistent kernel reads and writes -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The analysis half of lstm-to-persistent: whether a layer's cell has the
// form the persistent kernel runs, and for each operand of its pointwise op
// where a thread finds element (b, n) of it.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTPLAN_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTPLAN_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

namespace mlir::lstm::persistent {

/// A recurrent product of the cell: `sum_k states[k] · weights[k]^T`, an
/// `lstm.gate identity` of state arguments with weights defined above the
/// layer.
struct Product {
  GateOp gate;
  /// Per term: the index of the state it reads, and its weight [M, K].
  SmallVector<std::pair<unsigned, Value>> terms;
};

/// Where element (b, n) of a pointwise operand is read.
struct OperandSource {
  enum class Kind {
    /// Column `column + n` of product `index`, computed by the thread.
    Product,
    /// `ins[index][t, b, column + n]`, the step's input slice.
    Input,
    /// `state[index][b, column + n]`, the state at the start of the step.
    State,
    /// A value defined above the layer: `value[n]` (rank 1, broadcast over
    /// the batch) or `value[b, n]` (rank 2).
    Above,
  };
  Kind kind;
  unsigned index = 0;
  int64_t column = 0;
  Value above;
};

/// A layer the persistent kernel can run.
struct PersistentPlan {
  LayerOp layer;
  PointwiseOp pointwise;
  SmallVector<Product> products;
  /// One per operand of the pointwise op.
  SmallVector<OperandSource> operands;
  /// The pointwise result that each output and each new state is.
  SmallVector<unsigned> outputResults, stateResults;
  /// N: the width of every state, output and pointwise result.
  int64_t width = 0;
};

/// The plan of `layer`, or failure when its cell is not of the form
/// lstm-to-persistent handles; the reason goes to `whyNot` where given, and
/// is printed under -debug-only=lstm-to-persistent.
FailureOr<PersistentPlan> planPersistentLayer(LayerOp layer,
                                              std::string *whyNot = nullptr);

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTPLAN_H
