//===- Transforms.h - The lstm rewrites as functions ------------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The transformations behind the lstm passes, callable on their own (from
// another compiler's passes, patterns or a transform-dialect extension).
// Each makes its changes through the RewriterBase it is given, so listeners
// see them, and leaves the IR untouched where it fails.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_TRANSFORMS_TRANSFORMS_H
#define LSTM_DIALECT_LSTM_TRANSFORMS_TRANSFORMS_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {

//===----------------------------------------------------------------------===//
// Layer-time wavefront (lstm-wavefront)
//===----------------------------------------------------------------------===//

/// The maximal chains of at least two layers under `root` in which each
/// layer's only output is the next layer's only input (and used nowhere
/// else), in order, the first layer of a chain first.
SmallVector<SmallVector<LayerOp>> findLayerChains(Operation *root);

/// Runs the stacked `layers` (a chain as findLayerChains returns one) as one
/// `scf.for` over their L + T - 1 diagonals, each running all layers' cells
/// as one batched cell (see the lstm-wavefront pass), and erases them.
/// Fails, leaving the IR as it was, when the cells cannot be batched (they
/// differ in structure, a layer has lengths, ...; the reason is printed
/// under -debug-only=lstm-wavefront). Returns the loop.
FailureOr<scf::ForOp> wavefrontLayers(RewriterBase &rewriter,
                                      ArrayRef<LayerOp> layers);

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_TRANSFORMS_H
