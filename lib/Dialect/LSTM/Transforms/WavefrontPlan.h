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
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::lstm {

/// An operand of the reference cell: (op position in the cell, operand
/// number). The terminator is the last position.
using WavefrontSlot = std::pair<unsigned, unsigned>;

/// A link through a product: the next layer reads
/// `expand(collapse(output) · weight)`, all steps of the output at once
/// against a weight `[G, I]` (the backward of a stack, where layer l's input
/// gradient `dG_l · W_l` is the output gradient of the layer below). The
/// wavefront computes it a diagonal at a time.
struct ProjectedLink {
  tensor::CollapseShapeOp rows;
  /// A zero-filled matmul (matchZeroFilledMatmul).
  linalg::LinalgOp product;
  tensor::ExpandShapeOp expand;
  Value weight() { return product.getDpsInputs()[1]; }
};

/// How a layer's output reaches the next layer's first input: directly or
/// through a product.
struct ChainLink {
  unsigned output;
  std::optional<ProjectedLink> projection;
};

/// The link from `layer` to `next`, if `next`'s first input is an output of
/// `layer`, directly or through a product (ProjectedLink).
std::optional<ChainLink> linkBetween(LayerOp layer, LayerOp next);

/// A chain of stacked layers that lstm-wavefront can rewrite, and what the
/// rewrite needs to know about it.
struct WavefrontPlan {
  SmallVector<LayerOp> layers;
  /// The output of each layer that the next layer reads as its first input
  /// (the same position in every layer).
  unsigned linkOutput = 0;
  /// Where the links are products, each layer's but the last (the same
  /// weight type for all); empty where they are direct.
  SmallVector<ProjectedLink> projections;
  /// Layers read sequences of their own besides the link (the saved
  /// activations of a backward stack): each diagonal reads every layer's
  /// step of them. Their number, the same for every layer.
  unsigned numInputs = 1;
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
  /// The type of one step of the link as the next layer reads it.
  RankedTensorType linkType() const;
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
/// `(T + L - 1)·(P + P_link) < L·T·(P - P_in)` for `P` products in a cell,
/// `P_in` of them on its input, `P_link` 1 where the links are products
/// (`P + P_link < L·(P - P_in)` for a dynamic T). Two layers of an LSTM do
/// not (2(T + 1) against 2T), nor two of its backward; three do, and two of
/// Cho's GRU (its second recurrent product depends on the first).
bool wavefrontRunsFewerProducts(const WavefrontPlan &plan);

/// Moves the ops between the first and the last layer of the chain `layers`
/// that the chain does not read (directly or through other ops) below its
/// last layer, in their order; changes nothing if one of them has memory
/// effects. A backward stack computes layer l's weight gradients between
/// layer l and layer l-1: lstm-wavefront's loop, at the last layer, needs
/// them after it.
void sinkIndependentOpsBelowChain(RewriterBase &rewriter,
                                  ArrayRef<LayerOp> layers);

/// Whether operand `j` of `op` is one of the weights of a gate product whose
/// operand is `inputArg`.
bool isInputWeight(Operation *op, unsigned j, Value inputArg);

} // namespace mlir::lstm

#endif // LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTPLAN_H
