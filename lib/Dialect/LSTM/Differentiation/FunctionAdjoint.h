//===- FunctionAdjoint.h - The adjoint of a function body -------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Private to lib/Dialect/LSTM/Differentiation: which values need cotangents
// (ActivityAnalysis) and the context in which the body of a gradient
// function is differentiated (FunctionAdjointContext). Its layers are
// differentiated in LayerAdjoint.cpp (what their training forward saves in
// LayerTape.cpp), the rest in FunctionAdjoint.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_LSTM_DIFFERENTIATION_FUNCTIONADJOINT_H
#define LIB_DIALECT_LSTM_DIFFERENTIATION_FUNCTIONADJOINT_H

#include "AdjointUtils.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::lstm::detail {

/// Whether `type` is a float scalar or a shaped type of floats: the values
/// that have cotangents.
bool isFloatLike(Type type);

/// The values of a function that depend on its float arguments, through its
/// ops and into and out of the cells of its layers (a recurrent state is
/// active when its initial value or its update is). Only these get
/// cotangents; constants and integer values (lengths, sizes) never do.
class ActivityAnalysis {
public:
  explicit ActivityAnalysis(func::FuncOp func);
  bool isActive(Value v) const { return active.contains(v); }

private:
  void visitBlock(Block &block);
  void visitLayer(LayerOp layer);
  /// Marks the float results of `op` when an operand, or a value its regions
  /// use from above, is active.
  void visitOp(Operation *op);

  llvm::DenseSet<Value> active;
};

/// Builds the adjoint of a function body at the builder's point (before the
/// gradient function's return), in reverse order of the forward ops. Forward
/// values are used as they are: they are in the same function.
class FunctionAdjointContext : public AdjointContext {
public:
  FunctionAdjointContext(OpBuilder &builder, const ActivityAnalysis &activity)
      : AdjointContext(builder), activity(activity) {}

  bool isActive(Value v) override { return activity.isActive(v); }
  FailureOr<Value> getPrimal(Value v) override { return v; }
  Value getCotangent(Value v) override;
  LogicalResult addCotangent(Value v, Value c) override;
  LogicalResult addSliceCotangent(Value v, Value c,
                                  ArrayRef<OpFoldResult> offsets,
                                  ArrayRef<OpFoldResult> sizes,
                                  ArrayRef<OpFoldResult> strides) override;
  LogicalResult addProductCotangent(Value operand, Value dz,
                                    Value weight) override;
  LogicalResult addWeightCotangent(Value weight, Value dz,
                                   Value operand) override;
  LogicalResult addBroadcastCotangent(Value v, Value rows) override;
  FailureOr<Value> buildBroadcastProduct(Value rows, Value v) override;
  FailureOr<Value> buildSplat(Value like, double c) override;
  /// LayerAdjoint.cpp.
  LogicalResult differentiateLayer(LayerOp layer) override;

  /// Whether some use of `v` has contributed to its cotangent.
  bool hasCotangent(Value v) const { return cotangents.has(v); }

private:
  const ActivityAnalysis &activity;
  CotangentAccumulator cotangents;
};

/// Rebuilds `fwd` so that it also returns the sequence of every value of
/// `tape` (values of its cell that the backward step reads); `tapeSequences`
/// receives them, in order. A value the cell already yields as an output
/// (the hidden state of most cells) is that output: saved once. The state a
/// step started from, when the cell also yields its new value as an output,
/// is built by `b` from that output and the initial state rather than saved
/// (LayerTape.cpp).
LayerOp addTapeOutputs(OpBuilder &b, LayerOp fwd, ArrayRef<Value> tape,
                       SmallVectorImpl<Value> &tapeSequences);

} // namespace mlir::lstm::detail

#endif // LIB_DIALECT_LSTM_DIFFERENTIATION_FUNCTIONADJOINT_H
