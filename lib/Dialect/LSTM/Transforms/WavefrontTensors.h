//===- WavefrontTensors.h - Tensors of the wavefront loop -------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The tensor manipulation lstm-wavefront builds its loop from: stacking
// per-layer values [L, ...], taking rows, a step of a sequence, the input
// projection of a whole sequence, keeping inactive layers' state, the
// stores of outputs read outside the chain.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTTENSORS_H
#define LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTTENSORS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace mlir::lstm::wavefront {

/// `type` with a leading extent `n`.
RankedTensorType prependExtent(Type type, int64_t n);

/// `[n, ...]` from n values of one type: value i becomes row i. The rows
/// take the first value's extents: where they are dynamic, the others are
/// checked against them at run time (`what` names the values).
Value stackValues(OpBuilder &b, Location loc, ValueRange values,
                  const Twine &what);

/// Rows [begin, begin + count) of a `[L, ...]` tensor, of type `type`
/// (rank-reduced when `type` has no leading extent).
Value takeRows(OpBuilder &b, Location loc, Value source, int64_t begin,
               int64_t count, RankedTensorType type);

/// `[head; tail]` along the leading extent: `head` is one row (without the
/// leading extent), `tail` is `[n, ...]`.
Value prependRow(OpBuilder &b, Location loc, Value head, Value tail);

/// Keeps the state of the layers that are inactive at diagonal `d`:
/// `result[l] = 0 <= d - l < T ? next[l] : previous[l]`. Only the first and
/// last L - 1 diagonals have inactive layers: on the others (all of them but
/// 2(L-1)), `next` is the result as it is, without a kernel to copy it.
Value keepInactive(OpBuilder &b, Location loc, Value d, Value seqLen,
                   int64_t numLayers, Value next, Value previous);

/// Step `t` of a sequence `[T, B, N]`, as `type` (`[B, N]`).
Value extractStep(OpBuilder &b, Location loc, Value seq, Value t,
                  RankedTensorType type);

/// `value` `[L, B, N]` written at step `step` of `store` `[L, S, B, N]`:
/// each row's own step, one insert.
Value insertStep(OpBuilder &b, Location loc, Value value, Value store,
                 OpFoldResult step);

/// `value` `[B, N]` written at step `step` of row `row` of `store`
/// `[L, S, B, N]`.
Value insertLayerStep(OpBuilder &b, Location loc, Value value, Value store,
                      int64_t row, int64_t step);

/// Step `step` of every row of `store` `[L, S, B, N]`, as `type`
/// (`[L, B, N]`): the converse of insertStep.
Value extractStoreStep(OpBuilder &b, Location loc, Value store,
                       OpFoldResult step, RankedTensorType type);

/// Steps `first .. first + count - 1` of row `row` of `store`
/// `[L, S, B, N]`, as `type` (`[count, B, N]`): a contiguous view.
Value rowSteps(OpBuilder &b, Location loc, Value store, int64_t row,
               int64_t first, OpFoldResult count, RankedTensorType type);

/// `seq · wᵀ` for every step at once: `[T, B, K]` against `w` `[N, K]`,
/// as one product over the T·B rows, `[T, B, N]`.
Value projectSequence(OpBuilder &b, Location loc, Value seq, Value w);

} // namespace mlir::lstm::wavefront

#endif // LIB_DIALECT_LSTM_TRANSFORMS_WAVEFRONTTENSORS_H
