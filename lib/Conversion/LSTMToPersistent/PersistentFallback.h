//===- PersistentFallback.h - The per-step branch beside a kernel ---------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTFALLBACK_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTFALLBACK_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm::persistent {

/// `values` with each ranked tensor copied into a buffer of its own, with
/// the identity layout of a `memref.alloc` (other values as they are: a
/// branch may also yield an index computed among the layers). Where `copy`
/// is given, only the values it marks are copied (the others are buffers of
/// their own already). See perStepFallbackResults.
SmallVector<Value> copiesInNewBuffers(RewriterBase &rewriter, Location loc,
                                      ValueRange values,
                                      ArrayRef<bool> copy = {});

/// What the else branch of a kernel's `scf.if` yields for `perStep`, a
/// layer left to the per-step lowering (kPerStepFallbackAttr): its results,
/// those that lowering makes views of a state's [T + 1] stack (strided)
/// copied into buffers of their own, as the kernel's results are. A branch
/// that yielded the views would give the `scf.if` a strided result type,
/// which a function returns or a later op reads only through a copy, taken
/// whichever branch ran (charrnn's training forward: four copies of
/// [T, B, H], 13 µs each on the H100). The other sequences (a training
/// forward's gates, a backward's dG) are buffers of their own there too: a
/// copy of them would cost a read and a write of every saved activation
/// where the batch is above the kernel's (appleyard's training step: 0.8
/// ms). The finals, [B, N] each, always.
///
/// Without `fallback` (lstm-to-persistent{per-step-fallback=false}), where
/// `perStep`'s result extents are known from its operands, the per-step
/// lowering is not compiled: `perStep` is erased and the branch calls
/// lstmRuntimeMissingPerStepFallback (the run fails with a message saying
/// so, and what follows is skipped) and yields empty tensors of its results'
/// extents. What computed only `perStep`'s operands is left to the
/// canonicalizer.
SmallVector<Value> perStepFallbackResults(RewriterBase &rewriter, Location loc,
                                          LayerOp perStep, bool fallback);

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTFALLBACK_H
