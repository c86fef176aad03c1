//===- EmptyLayers.h - Layers that statically run nothing -------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A layer whose input has a static sequence length or batch of 0 runs no
// cell: its outputs are empty and its finals are its initial states. The
// passes and the lowering replace such layers before anything else, because
// the IR they would otherwise make (slices at offset 0 of a dimension of
// extent 0, a collapse of a static 0 with a dynamic extent) is rejected by
// upstream's verifiers. A dynamic extent that is 0 at run time needs none of
// this: the loops just run no iteration.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_UTILS_EMPTYLAYERS_H
#define LSTM_DIALECT_LSTM_UTILS_EMPTYLAYERS_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {

/// Whether `layer`'s first input has a static sequence length or batch of 0.
bool isStaticallyEmpty(LayerOp layer);

/// Replaces `layer` (statically empty, with static output features) by
/// empty outputs and its initial states, after the run-time checks its
/// lowering would have made (the initial states' and the lengths' batch
/// against the input's). Fails, changing nothing, when an output has a
/// dynamic feature extent (nothing says what it would have been).
LogicalResult replaceEmptyLayer(RewriterBase &rewriter, LayerOp layer);

/// replaceEmptyLayer on every statically empty layer under `root`.
void replaceEmptyLayers(Operation *root);

/// Replaces every tensor.concat under `root` whose result has a static
/// extent of 0 by a tensor.empty of its shape: it has no element, and its
/// bufferization would insert its operands at offset 0 of an extent of 0,
/// which upstream's verifiers reject.
void replaceEmptyConcats(Operation *root);

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_UTILS_EMPTYLAYERS_H
