//===- LayerAdjoint.h - The backward cell of an lstm.layer ------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What LayerAdjoint.cpp (the backward layer, the forward values in its
// cell) and CellCotangents.cpp (the cotangents in its cell) share: the
// context that builds the backward cell. Private to lstm-differentiate.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_DIFFERENTIATION_LAYERADJOINT_H
#define LSTM_DIALECT_LSTM_DIFFERENTIATION_LAYERADJOINT_H

#include "FunctionAdjoint.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/IR/IRMapping.h"

#include <optional>

namespace mlir::lstm::detail {

/// A sequence `[T, B, N]` that exists once the backward layer is built: an
/// input of the forward layer, a tape sequence of the rebuilt forward layer,
/// or an output of the backward layer.
struct SequenceRef {
  enum Kind { ForwardInput, Tape, BackwardOutput } kind;
  unsigned index;
};

/// What a backward step contributes to a value defined outside the layer,
/// summed over all steps after the loop.
struct Deferred {
  enum Kind {
    /// target (input #index of the forward) += dz · weight.
    InputProduct,
    /// target (a weight) += dz^T · operand over all rows.
    Weight,
    /// target (a vector) += rows summed over all rows; when the rows are
    /// columns [columnOffset, + N) of another output of the backward cell
    /// (a gate's dz among the combined dG), that output's sum is sliced.
    Broadcast,
    /// target (input #index of the forward) += rows, step by step.
    InputRows,
    /// target (a value captured by the cell, `[B, N]`) += rows summed over
    /// the steps.
    Captured,
  } kind;
  Value target;
  SequenceRef rows;
  SequenceRef operand = {SequenceRef::Tape, 0};
  Value weight;
  unsigned inputIndex = 0;
  /// Broadcast: the rows in the backward cell, until resolved.
  Value rowsValue;
  std::optional<int64_t> columnOffset;
};

/// Builds the cell of the backward layer of `fwd`.
class CellAdjointContext : public AdjointContext {
public:
  CellAdjointContext(FunctionAdjointContext &outer, OpBuilder &outerBuilder,
                     LayerOp fwd, Block *cell, OpBuilder &cellBuilder)
      : AdjointContext(cellBuilder), outer(outer), outerBuilder(outerBuilder),
        fwd(fwd), cell(cell) {}

  /// Builds the cell from the cotangents of the forward results.
  LogicalResult build(ArrayRef<Value> outputCotangents);

  //===--- AdjointContext ---------------------------------------------===//

  bool isActive(Value v) override { return outer.isActive(v); }
  FailureOr<Value> getPrimal(Value v) override;
  Value getCotangent(Value v) override;
  LogicalResult addCotangent(Value v, Value c) override;
  LogicalResult addSliceCotangent(Value v, Value c,
                                  ArrayRef<OpFoldResult> offsets,
                                  ArrayRef<OpFoldResult> sizes,
                                  ArrayRef<OpFoldResult> strides) override;
  LogicalResult addProductCotangent(Value operand, Value dz,
                                    Value weight) override;
  LogicalResult addWeightCotangent(Value weight, Value dz,
                                   Value operand) override;
  LogicalResult addBroadcastCotangent(Value v, Value rows) override;
  FailureOr<Value> buildBroadcastProduct(Value rows, Value v) override;
  FailureOr<Value> buildSplat(Value like, double c) override;
  LogicalResult differentiateLayer(LayerOp layer) override {
    return layer.emitOpError("is nested in the cell of another layer, which "
                             "lstm-differentiate does not differentiate");
  }

  //===--- What the backward layer is built from ----------------------===//

  /// The sequences the backward cell reads, in the order of its block
  /// arguments (before the states).
  struct Input {
    enum Kind { ForwardInput, Tape, OutputCotangent } kind;
    unsigned index;
  };
  SmallVector<Input> inputs;
  /// The forward cell's values the training forward saves, in order.
  SmallVector<Value> tape;
  /// The backward cell's per-step outputs.
  SmallVector<Value> outputs;
  /// The work after the loop.
  SmallVector<Deferred> deferred;
  /// The new states (cotangents of the forward step's initial state).
  SmallVector<Value> nextStates;

private:
  bool isCaptured(Value v) {
    return !fwd.getBody().isAncestor(v.getParentRegion());
  }
  /// The position of `v` among the forward cell's input slices.
  std::optional<unsigned> inputSliceIndex(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &fwd.getBody().front() ||
        arg.getArgNumber() >= fwd.getInputs().size())
      return std::nullopt;
    return arg.getArgNumber();
  }
  /// A new block argument of the backward cell reading a sequence.
  BlockArgument addSequenceArgument(Input input, Type sliceType, Location loc);
  /// The backward cell's slice of forward input #i.
  Value inputSlice(unsigned i);
  /// `v` (a forward cell value) saved by the training forward.
  FailureOr<Value> saved(Value v);
  /// The batch size, in the backward cell.
  Value batch();
  /// `v` (a backward cell value `[B, N]`) as an output of the backward
  /// layer.
  FailureOr<SequenceRef> output(Value v);
  /// Where `rows` ([B, N], a backward cell value) is written whole into an
  /// output: (the output's index, the first column), through a chain of
  /// tensor.insert_slice of disjoint column ranges.
  std::optional<std::pair<unsigned, int64_t>> columnsOfOutput(Value rows);
  /// Decides how each Broadcast item leaves the loop (resolveBroadcasts is
  /// called once the rest of the cell is built).
  LogicalResult resolveBroadcasts();
  /// The sequence after the loop that holds `operand`'s value at every
  /// step.
  FailureOr<SequenceRef> sequenceOf(Value operand);
  /// `weight^T`, computed once before the backward layer.
  Value transposed(Value weight);

  FunctionAdjointContext &outer;
  OpBuilder &outerBuilder;
  LayerOp fwd;
  Block *cell;
  Value batchSize;
  /// Set when a cotangent could not be built (the diagnostic is out): rules
  /// see a null cotangent then, and the walk stops after them.
  bool materializationFailed = false;
  CotangentAccumulator cotangents;
  IRMapping primals;
  llvm::DenseMap<Value, unsigned> tapeIndex, outputIndex;
  llvm::DenseMap<Value, Value> transposes;
  /// Splats made before the loop, by type and the bits of the value.
  llvm::DenseMap<std::pair<Type, uint64_t>, Value> splats;
};

} // namespace mlir::lstm::detail

#endif // LSTM_DIALECT_LSTM_DIFFERENTIATION_LAYERADJOINT_H
