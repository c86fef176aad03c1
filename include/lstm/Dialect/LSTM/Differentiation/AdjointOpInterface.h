//===- AdjointOpInterface.h - Reverse-mode derivatives of ops ---*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The AdjointOpInterface (what an op answers: the cotangents of its operands
// from those of its results) and the AdjointContext it answers to (where the
// adjoint is built: a gradient function, a step of a backward recurrence, a
// scalar region). See AdjointOpInterface.td.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_DIFFERENTIATION_ADJOINTOPINTERFACE_H
#define LSTM_DIALECT_LSTM_DIFFERENTIATION_ADJOINTOPINTERFACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir {
class DialectRegistry;

namespace lstm {
class LayerOp;

/// Where an adjoint is being built, as the rules of AdjointOpInterface see
/// it. A rule reads forward values through getPrimal, reads the cotangents
/// of its op's results, and adds cotangents to its operands; the context
/// decides how each of these is realised where it builds.
///
/// Values are tensors (`[B, N]` rows of a step, `[N]` vectors, weights) or,
/// in the scalar region of an `lstm.pointwise`, scalars; the elementwise rules
/// are written once for both.
class AdjointContext {
public:
  explicit AdjointContext(OpBuilder &builder) : builder(builder) {}
  virtual ~AdjointContext();

  /// The builder, at the point where the adjoint is being built.
  OpBuilder &getBuilder() { return builder; }

  /// Whether the forward value `v` needs a cotangent: it is a float value
  /// that depends on a differentiated argument. Rules skip the work for
  /// operands that do not.
  virtual bool isActive(Value v) = 0;

  /// The forward value `v` where the adjoint is being built: the value itself
  /// in a gradient function, a saved or recomputed value in a backward step.
  virtual FailureOr<Value> getPrimal(Value v) = 0;

  /// The cotangent of the forward value `v` (a result of the op being
  /// differentiated), or null when it has none (it is zero).
  virtual Value getCotangent(Value v) = 0;

  /// Adds `contribution` (of `v`'s type) to the cotangent of `v`.
  virtual LogicalResult addCotangent(Value v, Value contribution) = 0;

  /// Adds `contribution` to the part of `v`'s cotangent that a
  /// `tensor.extract_slice` with these offsets, sizes and strides reads (the
  /// adjoint of the slice). Contributions to disjoint slices of one value
  /// end up in one buffer.
  virtual LogicalResult addSliceCotangent(Value v, Value contribution,
                                          ArrayRef<OpFoldResult> offsets,
                                          ArrayRef<OpFoldResult> sizes,
                                          ArrayRef<OpFoldResult> strides) = 0;

  /// Adds `dz · weight` (`[B, H] · [H, K]`) to the cotangent of `operand`
  /// (`[B, K]`): the adjoint of a gate product `operand · weight^T` towards
  /// its operand.
  virtual LogicalResult addProductCotangent(Value operand, Value dz,
                                            Value weight) = 0;

  /// Adds `dz^T · operand` (`[H, B] · [B, K]`) to the cotangent of `weight`
  /// (`[H, K]`): the adjoint of a gate product towards its weight.
  virtual LogicalResult addWeightCotangent(Value weight, Value dz,
                                           Value operand) = 0;

  /// Adds the sum over the batch of `rows` (`[B, N]`) to the cotangent of the
  /// vector `v` (`[N]`), which the forward broadcast along the batch.
  virtual LogicalResult addBroadcastCotangent(Value v, Value rows) = 0;

  /// `rows ⊙ v` with the vector `v` (`[N]`) broadcast along the batch of
  /// `rows` (`[B, N]`).
  virtual FailureOr<Value> buildBroadcastProduct(Value rows, Value v) = 0;

  /// A value of the type of the forward value `like` whose every element is
  /// `c`, where the adjoint is being built.
  virtual FailureOr<Value> buildSplat(Value like, double c) = 0;

  /// Differentiates a recurrence. Only a gradient function's body holds
  /// layers; elsewhere this fails with a diagnostic.
  virtual LogicalResult differentiateLayer(LayerOp layer) = 0;

protected:
  OpBuilder &builder;
};

/// Attaches the AdjointOpInterface to the ops whose derivatives the project
/// defines: the lstm ops, the elementwise arith and math ops, and the tensor
/// ops that cells and networks slice, stack and reshape with.
void registerAdjointOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace lstm
} // namespace mlir

#include "lstm/Dialect/LSTM/Differentiation/AdjointOpInterface.h.inc"

#endif // LSTM_DIALECT_LSTM_DIFFERENTIATION_ADJOINTOPINTERFACE_H
