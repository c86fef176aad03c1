//===- PersistentChains.h - The chains of layers one kernel runs -*- C++
//-*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCHAINS_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCHAINS_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm::persistent {

/// Layer `to`'s input sequence `input` is `from`'s output `output`
/// projected: collapse_shape [T·B, K], a product (an `lstm.gate identity`
/// with `weight` [M, K], or a matmul by `weight` [K, M], `transposed`, the
/// backward's dG · W), expand_shape [T, B, M] (which the kernel asserts to
/// be the output's [T, B]). `projection` holds the expansion, the product
/// and the collapse where nothing else reads it: what the kernel makes
/// dead.
struct Link {
  LayerOp from;
  unsigned output = 0;
  unsigned input = 0;
  Value weight;
  bool transposed = false;
  SmallVector<Operation *, 3> projection;
};

/// A chain of layers, each (after the first) linked to the one before.
struct Chain {
  SmallVector<LayerOp> layers;
  /// links[k] makes layers[k + 1]'s input.
  SmallVector<Link> links;
};

/// The chains of `layers` (two layers at least), each layer in one at most.
SmallVector<Chain> findChains(ArrayRef<LayerOp> layers);

/// Makes `chain` ready for its kernel, which replaces the layers by buffers
/// written at the last layer: the extents of a layer's results are read
/// from its input; the ops between the layers that read a layer's results
/// but that no later layer needs (a backward's weight and bias gradients of
/// dG) move after the last layer, and the projections get copies of what
/// they read of those (a collapse of dG that the weight gradients share).
/// Returns the ops the kernel makes dead (the projections and the pure ops
/// only they read), in block order; fails where a layer needs a value
/// computed from an earlier layer's results other than through its link,
/// having changed no more than where extents are read.
FailureOr<SmallVector<Operation *>> prepareChain(RewriterBase &rewriter,
                                                 Chain &chain);

/// Moves `chain`'s ops (its layers and `dead`, in block order) into the
/// then branch of a new `scf.if` on `condition`, built before the last
/// layer, whose results (the layers', in order) replace theirs outside it,
/// and copies them into its else branch, leaving the rewriter at the end
/// of that branch (the caller yields). Returns the copies of the layers.
SmallVector<LayerOp> branchChain(RewriterBase &rewriter, const Chain &chain,
                                 ArrayRef<Operation *> dead, Value condition);

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCHAINS_H
