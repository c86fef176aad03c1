//===- LSTMToLinalg.h - Lower the lstm dialect to linalg --------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H
#define LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H

#include "mlir/Pass/Pass.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir {
class RewritePatternSet;

namespace lstm {
class LayerOp;

#define GEN_PASS_DECL_CONVERTLSTMTOLINALGPASS
#include "lstm/Conversion/Passes.h.inc"

/// Conversion patterns (for a dialect conversion with the lstm dialect
/// illegal; no type conversion) that lower `lstm.layer` to `scf.for`, and
/// `lstm.gate`, `lstm.one_minus` and `lstm.pointwise` to linalg.
void populateLSTMToLinalgPatterns(RewritePatternSet &patterns);

/// Per output sequence of `layer`: whether the per-step lowering makes it a
/// view into the `[T + 1]` stack of a state rather than a buffer of its own
/// (one `bufferization.alloc_tensor` each). A state that the step also emits
/// as an output (its new value, as `h`, or its old one, a training forward's
/// tape) lives in such a stack, and those outputs are views of it, with an
/// offset. (The finals are views of a stack's last row, or the loop's
/// carried values, whose buffers one-shot bufferization may give any
/// layout.)
SmallVector<bool> perStepOutputsInStateStacks(LayerOp layer);

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H
