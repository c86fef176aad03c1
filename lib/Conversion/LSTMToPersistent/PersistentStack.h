//===- PersistentStack.h - A stack's layers in one persistent kernel ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSTACK_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSTACK_H

#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"

namespace mlir::lstm::persistent {

/// Runs the chains of `layers` (a layer whose input sequence is the
/// projection of the layer before's output: `lstm-hoist-input-projection`'s
/// form of a stack) as one kernel each, the layers' steps as a wavefront
/// (see PersistentStack.cpp). With `options.costModel`, behind an `scf.if`
/// on the kernel's run-time conditions whose else branch holds the layers
/// as they were, marked for the per-step lowering. Returns the layers left
/// to convert one by one: those of no chain or of a chain the kernel does
/// not run.
SmallVector<LayerOp>
convertStackKernels(RewriterBase &rewriter, ArrayRef<LayerOp> layers,
                    function_ref<std::string()> nextKernelName,
                    const PersistentOptions &options);

/// Where `layers` (the then branch of lstm-wavefront{persistent=true}'s
/// `scf.if`) are one chain with a kernel: replaces them by it, with no
/// branch of its own, and sets `condition` to its run-time conditions at
/// `batch` (true without the cost model), built before `before`. Fails
/// otherwise, having changed no more than where the layers' extents are
/// read.
LogicalResult convertWholeStack(RewriterBase &rewriter,
                                ArrayRef<LayerOp> layers, Operation *before,
                                Value batch, Value &condition,
                                function_ref<std::string()> nextKernelName,
                                const PersistentOptions &options);

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSTACK_H
