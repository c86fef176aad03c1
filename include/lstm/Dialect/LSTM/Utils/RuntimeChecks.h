//===- RuntimeChecks.h - Run-time checks of generated code -----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Extents that are dynamic (the batch size, the sequence length) only meet
// when the function is called. Where two of them must agree, the passes and
// lowerings emit a check that stops the run with a message naming the op and
// its source location, instead of reading out of bounds.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_UTILS_RUNTIMECHECKS_H
#define LSTM_DIALECT_LSTM_UTILS_RUNTIMECHECKS_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/IR/Builders.h"

#include <string>

namespace mlir::lstm {

/// `loc` as a user reads it: "file:line:col" of the first file location in
/// it (a fused location's first, say), else the first name location's name
/// (a front end's description, such as lstmc's "layer 0 (forward) of
/// forward at train.py:12"), else as MLIR prints it.
std::string describeLocation(Location loc);

/// Emits a run-time check that `x`'s extent `dx` equals `y`'s extent `dy`,
/// unless both are static (then the verifier has already compared them) or
/// they are the same extent of the same value. The check fails with
/// "`what` (at `loc`)", or `what` alone without `withLocation`.
void assertSameExtent(OpBuilder &b, Location loc, Value x, int64_t dx, Value y,
                      int64_t dy, const Twine &what, bool withLocation = true);

/// The checks of an `lstm.layer` that need no step: every input sequence
/// has the first one's length and batch, every initial state and the
/// lengths have its batch.
void assertLayerExtents(OpBuilder &b, LayerOp layer);

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_UTILS_RUNTIMECHECKS_H
