//===- HoistedInputs.h - Hoisted input projections, found again -*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// `lstm-hoist-input-projection` leaves a layer's input products as one GEMM
// over all T·B rows before the layer: the layer reads `expand_shape` of an
// `lstm.gate` whose row operands collapse one `[T, B, K]` sequence. The CPU
// lowering's passes rearrange such projections (a chunk of steps at a time,
// or back in the steps where few threads run them); this is how they find
// them, and how they ask the runtime for its thread count.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_UTILS_HOISTEDINPUTS_H
#define LSTM_DIALECT_LSTM_UTILS_HOISTEDINPUTS_H

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <optional>

namespace mlir::lstm {

/// A layer's hoisted input: `expand` of `gate`, whose row operands (inputs,
/// addends, peephole state) all collapse `sequence` ([T, B, K] ->
/// [T·B, K]); its weights, biases and peephole vector are the same for
/// every row.
struct HoistedInput {
  tensor::ExpandShapeOp expand;
  GateOp gate;
  Value sequence;
};

/// The hoisted projection `input` (a layer's `ins` sequence) is, if it is
/// one.
std::optional<HoistedInput> matchHoistedInput(Value input);

/// Fails with an error naming `pass` on `op` where `name`, a pass's
/// threads-function option, is empty.
LogicalResult requireThreadsFunction(Operation *op, StringRef name,
                                     StringRef pass);

/// `name`, a function `() -> i32` giving the number of threads at run time,
/// declared (private) in the symbol table nearest to `op` where it is not
/// yet. Fails with an error naming `pass` where there is no symbol table or
/// `name` is another symbol than such a function.
FailureOr<func::FuncOp> declareThreadsFunction(OpBuilder &builder,
                                               Operation *op, StringRef name,
                                               StringRef pass);

/// The number of threads at run time, an index of at least 1: a call of
/// `callee` (see declareThreadsFunction) at the builder's insertion point.
Value buildThreadCount(OpBuilder &builder, Location loc, func::FuncOp callee);

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_UTILS_HOISTEDINPUTS_H
