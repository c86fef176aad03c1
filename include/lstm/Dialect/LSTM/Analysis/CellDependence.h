//===- CellDependence.h - Gate dependences inside an lstm cell --*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Which values of one step of an `lstm.layer` cell depend on which gates.
// Passes that reorder, merge or fuse the work of a step (combining gate GEMMs,
// elementwise fusion) must not make a gate's input wait for that gate, or for
// a gate that is itself computed later; this analysis answers those questions
// from the SSA graph of the cell, not from the name of the cell.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_ANALYSIS_CELLDEPENDENCE_H
#define LSTM_DIALECT_LSTM_ANALYSIS_CELLDEPENDENCE_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace mlir::lstm {

/// One matrix product of a gate: `inputs[index] · weights[index]^T`.
struct GateProduct {
  GateOp gate;
  unsigned index;

  // Op wrappers are handles: a copy gives access to the non-const accessors.
  Value getOperand() const { return GateOp(gate).getInputs()[index]; }
  Value getWeight() const { return GateOp(gate).getWeights()[index]; }
};

/// Removes `products` (input and weight) from their gates, for the passes
/// that move products elsewhere; indices are handled so that removing one
/// does not shift the others. Each gate is modified through `rewriter`.
void eraseGateProducts(RewriterBase &rewriter,
                       SmallVectorImpl<GateProduct> &products);

/// The gate dependences of one step of a layer's cell.
///
/// A value depends on a gate when it is computed, within the same step, from
/// the gate's result through the ops of the cell. Block arguments (the step's
/// input slices and the recurrent state) and values defined above the layer
/// depend on no gate: the previous step's gate results reach the cell only as
/// state. The analysis is a snapshot: rebuild it after changing the cell.
class CellDependence {
public:
  explicit CellDependence(LayerOp layer);

  LayerOp getLayer() const { return layer; }

  /// The gates of the cell (the `lstm.gate` ops directly in its block), in
  /// block order.
  ArrayRef<GateOp> getGates() const { return gates; }

  /// The position of `gate` in getGates(), or -1 when it is not a gate of
  /// this cell.
  int getGateIndex(GateOp gate) const;

  /// Every matrix product of every gate, gate by gate in block order.
  SmallVector<GateProduct> getProducts() const;

  /// The gates `value` depends on, as a bit set indexed like getGates().
  /// Values that are not computed in the cell depend on no gate.
  llvm::BitVector getGateDependences(Value value) const;

  /// Whether `value` depends, within one step, on the result of `gate`. A
  /// gate's result depends on the gate itself.
  bool dependsOn(Value value, GateOp gate) const;

  /// Whether `value` depends on the result of any gate of the cell.
  bool dependsOnAnyGate(Value value) const;

  /// Whether the products can be computed by one GEMM against their stacked
  /// weights: they multiply the same SSA operand, their weights have the same
  /// static shape `[H_k, K]` up to the row count, with static row counts, and
  /// no product's operand depends on a gate of the group (the combined GEMM
  /// runs before all of the group's gates, so such an operand would make a
  /// gate wait for itself).
  bool canCombine(ArrayRef<GateProduct> products) const;

  /// The products of the cell grouped by operand, each group combinable and
  /// spanning at least `minGates` distinct gates; groups and their products
  /// are in block order.
  SmallVector<SmallVector<GateProduct>>
  getCombinableGroups(unsigned minGates = 2) const;

  /// The position in the layer's `ins` of the sequence whose per-step slice
  /// is `value`, or std::nullopt when `value` is anything else (recurrent
  /// state, a value computed in the cell, a value defined above the layer).
  std::optional<unsigned> getInputSliceIndex(Value value) const;

  /// Whether `value` is defined above the layer, and so is the same value at
  /// every step.
  bool isDefinedAbove(Value value) const;

  /// Whether `product` is an input projection: its operand is the step's
  /// slice x_t of an `ins` sequence and its weight is defined above the
  /// layer. Its value at step t then depends on nothing the recurrence
  /// computes, so the products of all steps can be computed before the layer.
  bool isInputProjection(const GateProduct &product) const;

  /// The input projections of the cell, grouped so that each group can be
  /// one GEMM over all steps: the products of a group multiply the same
  /// input slice, and when there are several, their weights have static
  /// shapes with one column count and element type (they are stacked).
  /// A projection whose weight has a dynamic shape is a group of its own.
  /// Groups and their products are in block order.
  SmallVector<SmallVector<GateProduct>> getInputProjectionGroups() const;

private:
  LayerOp layer;
  SmallVector<GateOp> gates;
  /// The gate dependences of every value computed in the cell.
  llvm::DenseMap<Value, llvm::BitVector> dependences;
};

/// The pointwise work of one step of a cell, grouped into the fewest regions
/// that can each run as one fused kernel.
///
/// Pointwise work is every op of the cell that computes each element of its
/// `[B, N]` result from the same element of its operands: `lstm.gate`
/// without matrix products, the epilogue (addends, biases, peephole,
/// activation) of a gate with products, `lstm.one_minus`, and elementwise
/// `arith`/`math` ops on rank-2 tensors (rank 3, `[L, B, N]`, in the batched
/// cell of a wavefront). Everything else (the GEMMs of gates, slices, ops on
/// other ranks) is a barrier.
///
/// Each piece of work gets a stage: the number of barriers that must run
/// after some pointwise work and before it, on the longest path through the
/// cell. Work of one stage (and one shape) forms a group. A group reads only
/// values of earlier groups or of barriers that do not read the group, so
/// contracting each group into one op keeps the cell acyclic: Cho's GRU has
/// two groups, because the GEMM of `R_n (r ⊙ h)` reads `r ⊙ h` from the
/// first and feeds the second. The grouping is a snapshot of the cell, like
/// CellDependence.
class PointwiseGroups {
public:
  /// Groups the work of `cell`: the body of an `lstm.layer`, or of the loop
  /// that `lstm-wavefront` makes of a chain of layers.
  explicit PointwiseGroups(Block &cell);

  /// Whether `op` has pointwise work: see the class comment. For a gate with
  /// matrix products, that is whether it has an epilogue; its products stay a
  /// barrier.
  static bool isPointwise(Operation *op);

  /// Whether `gate` does anything beyond the sum of its matrix products.
  static bool hasEpilogue(GateOp gate);

  /// The operands of `gate` that its epilogue reads elementwise: addends,
  /// biases, then the peephole weight and state.
  static SmallVector<Value> getPointwiseOperands(GateOp gate);

  /// The groups, each a list of ops of the cell in block order; groups are
  /// ordered by stage. A gate with products stands for its epilogue.
  ArrayRef<SmallVector<Operation *>> getGroups() const { return groups; }

  /// The stage of every group, indexed like getGroups().
  ArrayRef<unsigned> getStages() const { return stages; }

private:
  SmallVector<SmallVector<Operation *>> groups;
  SmallVector<unsigned> stages;
};

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_ANALYSIS_CELLDEPENDENCE_H
