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
#include "llvm/ADT/DenseMap.h"

namespace mlir::lstm::persistent {

/// A value the step computes: result `result` of pointwise op `op` (an
/// index into PersistentPlan::pointwise).
struct Computed {
  unsigned op = 0, result = 0;
  bool operator==(const Computed &other) const {
    return op == other.op && result == other.result;
  }
};

/// A [B, W] value the step assembles from whole pointwise results with
/// tensor.insert_slice into a tensor.empty (a backward step's dG): the
/// results cover its columns in N-wide pieces, `pieces[j]` at column
/// `j · N`.
struct Concat {
  int64_t width = 0;
  SmallVector<Computed> pieces;
};

/// What a product term multiplies by its weight: a state (at the start of
/// the step), a value the step computes, a concatenation of such values, or
/// the step's slice of an input sequence that another layer of the same
/// kernel writes (a stack's input projection made part of the step:
/// projectInputInStep).
struct TermInput {
  enum class Kind { State, Computed, Concat, Input };
  Kind kind = Kind::State;
  /// The state, the index of the concatenation in PersistentPlan, or the
  /// input sequence.
  unsigned index = 0;
  Computed computed;
  bool operator==(const TermInput &other) const {
    if (kind != other.kind)
      return false;
    return kind == Kind::Computed ? computed == other.computed
                                  : index == other.index;
  }
};

/// A product of the cell: `sum_k inputs[k] · weights[k]^T`, an
/// `lstm.gate identity` with weights defined above the layer, or an input
/// projection made part of the step (no gate).
struct Product {
  GateOp gate;
  /// Per term: its input and its weight [M, K] (K: the input's width).
  SmallVector<std::pair<TermInput, Value>> terms;
  /// The phase of the step it is computed in: 0 for products of states,
  /// else one more than the phase of the values it reads.
  unsigned phase = 0;
  /// Whether the weights are stored transposed, [K, M] (a projection of
  /// the backward, `dG · W`, whose W is the forward's [4N, K]).
  bool transposed = false;
};

/// Where element (b, n) of a pointwise operand is read; for piece j of an
/// op of several N-wide pieces (PointwiseStep::pieces), the column is
/// `column + j · N` (a computed value's piece column / N + j).
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
    /// `computed[b, column + n]`, a result of an earlier pointwise op.
    Computed,
    /// Column `column + n` of concatenation `index` of N-wide pointwise
    /// results (a piece of it, by column / N).
    Concat,
  };
  Kind kind;
  unsigned index = 0;
  int64_t column = 0;
  Value above;
  Computed computed;
};

/// One lstm.pointwise op of the cell, or a lone elementwise arith or math
/// op on [B, W] f32 tensors that lstm-fuse-elementwise left as it is (a
/// group of one: a backward's sum of two products' columns).
struct PointwiseStep {
  Operation *op = nullptr;
  /// One per operand.
  SmallVector<OperandSource> operands;
  /// The phase of the step it runs in: 0, or one more than the phase of
  /// the ops whose results its products read (those must be complete, for
  /// every unit, before the products can be computed: a grid barrier
  /// separates the phases).
  unsigned phase = 0;
  /// Its width in N-wide pieces: an op of [B, k · N] results (a layer
  /// normalisation's over the 4N gate pre-activations) evaluates k
  /// elements for each (row, unit), piece j at column unit + j · N.
  int64_t pieces = 1;
  /// The width of its results: k · N, or less than N (an LSTMP backward's
  /// dh + dy, P wide), evaluated by the units below it.
  int64_t width = 0;
};

/// A layer the persistent kernel can run.
struct PersistentPlan {
  LayerOp layer;
  /// The cell's pointwise ops, in program order.
  SmallVector<PointwiseStep> pointwise;
  SmallVector<Product> products;
  /// What each output and each new state is: a pointwise result, a state
  /// at the start of the step (a training forward saves h_{t-1}), a
  /// concatenation (an output: a backward step's dG), or column n of a
  /// [B, M] product, M <= N (a backward step's dh, an LSTMP's projected h).
  struct YieldSource {
    enum class Kind { Computed, StateArg, Concat, Product };
    Kind kind = Kind::Computed;
    /// The state, the concatenation or the product.
    unsigned index = 0;
    Computed computed;
  };
  SmallVector<YieldSource> outputResults, stateResults;
  SmallVector<Concat> concats;
  /// N: the width of the widest state and of every pointwise result: the
  /// units of the kernel's tiles.
  int64_t width = 0;
  /// Each state's width: N, or less for a state that a product makes in
  /// its own phase (an LSTMP's projected h: [B, P], P < N), which no
  /// pointwise op reads and whose elements only units below its width
  /// store.
  SmallVector<int64_t> stateWidths;
  /// How many phases a step has (1 + the largest phase).
  unsigned numPhases = 1;
  /// The input sequences whose projections the step computes
  /// (projectInputInStep), with the width K of the sequence it reads.
  DenseMap<unsigned, int64_t> inStepInputs;
};

/// The operands of a step's op, and the values its element work maps them
/// to: the region's arguments of an lstm.pointwise, the operands
/// themselves of a lone elementwise op.
ValueRange pointwiseInputs(const PointwiseStep &step);
SmallVector<Value> pointwiseArguments(const PointwiseStep &step);

/// The plan of `layer`, or failure when its cell is not of the form
/// lstm-to-persistent handles; the reason goes to `whyNot` where given, and
/// is printed under -debug-only=lstm-to-persistent.
FailureOr<PersistentPlan> planPersistentLayer(LayerOp layer,
                                              std::string *whyNot = nullptr);

/// Makes the step compute input sequence `input` of `plan`'s layer, which
/// is `seq · weight^T` for a sequence `seq` [T, B, K] of another layer
/// (weight [M, K], or `seq · weight` with `transposed`, weight [K, M]), as a
/// product of the step (TermInput::Kind::Input) with the cell's reads of
/// the input now reads of its columns: the layer then reads `seq` instead
/// of its projection.
void projectInputInStep(PersistentPlan &plan, unsigned input, Value weight,
                        bool transposed);

/// The phase of the step in which output `output` of the plan's layer is
/// complete.
unsigned outputPhase(const PersistentPlan &plan, unsigned output);

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTPLAN_H
