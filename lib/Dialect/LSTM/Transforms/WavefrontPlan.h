//===- WavefrontPlan.h - Which stacks lstm-wavefront can run ----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The analysis half of lstm-wavefront: whether a chain of stacked layers can
// run as one batched cell per diagonal, and what the rewrite needs to know
// about it (which values each layer's cell captures, whether layer 0's
// input products are computed apart).
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTPLAN_H
#define LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTPLAN_H

#include "lstm/Dialect/LSTM/Analysis/CellDependence.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::lstm {

/// An operand of the reference cell: (op position in the cell, operand
/// number). The terminator is the last position.
using WavefrontSlot = std::pair<unsigned, unsigned>;

/// A chain of stacked layers that lstm-wavefront can rewrite, and what the
/// rewrite needs to know about it.
struct WavefrontPlan {
  SmallVector<LayerOp> layers;
  /// The output of each layer that the next layer reads as its input (the
  /// same position in every layer).
  unsigned linkOutput = 0;
  /// The outputs, by position, that some layer's results are read at
  /// outside the chain (other than the last layer's link output, which the
  /// loop writes as a sequence of its own): the loop stores them for every
  /// layer, a diagonal at a time (the training forward's saved values).
  SmallVector<unsigned> sideOutputs;
  /// Layer 0's input slice has another type than the other layers': its
  /// gate products are computed apart from the batched ones.
  bool separateInput = false;
  /// The values that each layer's cell captures from above, per operand of
  /// the reference cell (the last layer's) that reads one. Layer 0's entry
  /// of an input weight (separateInput) may have another type.
  llvm::MapVector<WavefrontSlot, SmallVector<Value>> captured;
  /// The input products of the reference cell (separateInput only): the
  /// products whose operand is the input slice.
  SmallVector<GateProduct> inputProducts;

  LayerOp reference() const { return layers.back(); }
  Block &cell(unsigned l) const { return LayerOp(layers[l]).getBody().front(); }
  BlockArgument inputArg(unsigned l) const {
    return LayerOp(layers[l]).getInputSlices().front();
  }
};

/// Checks that `layers` (a chain, in order) can be run as a wavefront and
/// collects what the rewrite needs. Failures are reported under
/// -debug-only=lstm-wavefront.
FailureOr<WavefrontPlan> planWavefront(ArrayRef<LayerOp> layers);

/// Whether the wavefront of `plan` runs fewer products one after the other
/// than its layers would with their input products hoisted:
/// `(T + L - 1)·P < L·T·(P - P_in)` for `P` products in a cell, `P_in` of
/// them on its input (`P < L·(P - P_in)` for a dynamic T). Two layers of an
/// LSTM do not (2(T + 1) against 2T); three do, and two of Cho's GRU (its
/// second recurrent product depends on the first).
bool wavefrontRunsFewerProducts(const WavefrontPlan &plan);

/// Whether operand `j` of `op` is one of the weights of a gate product whose
/// operand is `inputArg`.
bool isInputWeight(Operation *op, unsigned j, Value inputArg);

} // namespace mlir::lstm

#endif // LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTPLAN_H
