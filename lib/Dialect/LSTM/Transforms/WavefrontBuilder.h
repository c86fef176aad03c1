//===- WavefrontBuilder.h - The loop of lstm-wavefront ----------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The rewrite half of lstm-wavefront: the diagonal loop of a planned chain
// (WavefrontPlan.h). WavefrontBuilder.cpp builds the loop and its batched
// cell; WavefrontLinks.cpp what a backward stack adds to it (links through
// products, the saved sequences its layers read).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTBUILDER_H
#define LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTBUILDER_H

#include "WavefrontPlan.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm::wavefront {

/// The diagonal loop of one planned chain, built in named steps: what is
/// computed once before the loop (stacked captures, layer 0's input
/// projections, the loop-carried values), one diagonal's batched cell, and
/// the replacement of the layers' results.
class WavefrontBuilder {
public:
  WavefrontBuilder(RewriterBase &rewriter, const WavefrontPlan &plan);

  /// Builds the loop where the last layer is, replaces the layers' results
  /// with its and erases the layers.
  scf::ForOp build();

private:
  /// What one diagonal's body works with.
  struct Diagonal {
    Value d;
    /// The step of the `[L, L + T - 1, ...]` stores it reads and writes
    /// (storeStep).
    Value row;
    /// The step (in time) that layer 0 runs.
    Value time0;
    /// The previous diagonal's outputs of layers 0 .. L-2, `[L-1, B, N]`.
    Value prevBelow;
    /// This diagonal's link products (combinedLinkProduct), `[L, B, I]`.
    Value linkProducts;
    /// The output sequence with the previous diagonal's last-layer output
    /// in (storesOutputLate).
    Value sequence;
    /// Reference-cell values to their batched counterparts.
    IRMapping map;
  };

  void stackCaptured();
  void projectLayer0Inputs();
  void stackLinkWeights();
  /// The position of the cell's gate that only multiplies the link output,
  /// or whole columns of it, by a captured weight (a backward cell's dG·Rᵀ),
  /// if it has one.
  std::optional<unsigned> findLinkOutputProduct();
  Operation *batchCombinedGate(Diagonal &diag, GateOp gate, unsigned position);
  void storeOtherSequences();
  /// The step of a `[L, L + T - 1, ...]` store that diagonal `d` reads and
  /// writes for all layers: layer l's step t is at l + t (forward) or
  /// L - 1 - l + t (reverse, the diagonals counted from the last).
  Value storeStep(Value d);
  /// Where layer l's steps begin in such a store.
  int64_t storeFirstStep(unsigned l) const {
    return reverse ? numLayers - 1 - l : l;
  }
  SmallVector<Value> buildIterInits();
  Value buildDiagonalCount();
  void buildDiagonal(Value d, ValueRange iterArgs);
  /// The batched value of operand `j` of the reference op at `position`.
  Value operandOf(Diagonal &diag, Operation *refOp, unsigned position,
                  unsigned j);
  /// Batches a gate; returns null after mapping a gate that only forwards
  /// the input products to their stack.
  Operation *batchGate(Diagonal &diag, GateOp gate, unsigned position);
  Operation *batchSlice(Diagonal &diag, tensor::ExtractSliceOp slice,
                        unsigned position);
  Operation *batchInsert(Diagonal &diag, tensor::InsertSliceOp insert,
                         unsigned position);
  Operation *batchEmpty(Diagonal &diag, tensor::EmptyOp empty,
                        unsigned position);
  /// Offsets, sizes or strides of a slice of the reference cell, mapped,
  /// with `first` in front for the layers' extent.
  SmallVector<OpFoldResult> prependMixed(Diagonal &diag,
                                         SmallVector<OpFoldResult> values,
                                         OpFoldResult first);
  Operation *batchOp(Diagonal &diag, Operation *refOp, unsigned position);
  SmallVector<Value> buildNextIterArgs(Diagonal &diag, ValueRange iterArgs);
  /// The output sequence with the last layer's output of diagonal `d`
  /// (in `outs`, `[L, B, N]`) in.
  Value insertLastOutput(Value d, Value outs, Value sequence);
  /// Whether each diagonal writes the last layer's output of the diagonal
  /// before into the output sequence, from the loop-carried outputs, and
  /// the loop's end the last one's.
  bool storesOutputLate() const;
  /// The position among the loop's results of the side output store that
  /// also holds the link output, if it is one: the last layer's output
  /// sequence is then a view of it rather than a sequence of its own.
  std::optional<unsigned> linkOutputStore() const;
  /// The state that side output `k` is, if it is one that the loop stores
  /// a row ahead.
  std::optional<unsigned> storedState(unsigned k) const;
  /// Whether a diagonal reads the previous diagonal's link outputs from
  /// their store, a row behind, rather than from a loop-carried copy.
  bool linkFromStore() const;
  /// Whether the loop carries the layers' inputs of the next diagonal,
  /// gathered at the end of each diagonal, rather than the link outputs
  /// they are gathered from at its start.
  bool gathersAhead() const;
  /// The layers' inputs of the diagonal whose layer 0 runs step `time0`:
  /// x at that step, then `below` (`[L-1, ...]`, the link outputs or
  /// products of layers 0 .. L-2 at the diagonal before).
  Value gatherInputs(Value time0, Value below);
  /// The step (in time) that layer 0 runs at diagonal `d`.
  Value layer0Time(Value d);
  /// One layer's row of what the loop carries from a diagonal to the next:
  /// its link products where they are combined with the cell's product,
  /// else its output.
  RankedTensorType carriedRowType() const {
    return combinedPosition ? plan.linkType() : outType;
  }
  Value sideOutputView(Value store, unsigned l, RankedTensorType type);
  void replaceLayers(scf::ForOp loop);
  void eraseLinkProduct(ProjectedLink link);

  RewriterBase &rewriter;
  const WavefrontPlan &plan;
  LayerOp ref;
  SmallVector<Operation *> refOps;
  Value refInput;
  Location loc;
  int64_t numLayers;
  unsigned numStates;
  bool reverse;
  RankedTensorType outType;
  Value x, seqLen, batch, c0, c1, lastStep;
  /// The last layer's output sequence, complete (after the loop).
  Value finalSequence;
  /// Stacked captures, per operand slot of the reference cell.
  DenseMap<WavefrontSlot, Value> stackedSlots;
  /// Layer 0's input products over all steps (separateInput), per weight
  /// operand slot of the reference cell.
  DenseMap<WavefrontSlot, Value> inputProjections;
  /// The links' weights (where they are products), transposed as
  /// lstm.gate takes them and stacked, `[L-1, I, G]`.
  Value linkWeights;
  /// Where the cell multiplies its link output by a weight of its own
  /// (`[L, N, G]` stacked), that gate's position and the weights with the
  /// links' appended, `[L, N + I, G]` (layer L-1's link weight zeros): the
  /// two products of a diagonal on the same operand as one.
  std::optional<unsigned> combinedPosition;
  Value combinedWeights;
  /// The column of the link output where that gate's input begins: its
  /// weights get zero columns for the others, `[L, N, G]` from `[L, N, K]`.
  int64_t combinedColumn = 0;
  /// The layers' other sequences (inputs 1 ..), each `[L, L + T - 1, ...]`.
  SmallVector<Value> otherSequences;
};

} // namespace mlir::lstm::wavefront

#endif // LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTBUILDER_H
