//===- Differentiate.h - Gradient functions of lstm networks ----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Reverse-mode differentiation of functions holding lstm.layer ops, at the
// level of the lstm dialect: the backward pass is ordinary lstm IR (a
// backward lstm.layer per layer, GEMMs and sums over all steps around it),
// which the project's passes optimise and lower like any forward network.
// `lstm-differentiate` is a thin pass around differentiateFunction().
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_DIFFERENTIATION_DIFFERENTIATE_H
#define LSTM_DIALECT_LSTM_DIFFERENTIATION_DIFFERENTIATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::lstm {

/// The functions made for a forward function `@f`.
struct GradientFunctions {
  /// `@f_grad(args..., cotangents...) -> (gradients...)`: the forward and the
  /// backward in one function. One cotangent per result of `@f`, in order;
  /// one gradient per float argument of `@f`, in order (integer arguments,
  /// such as lengths, get none); zeros where an argument does not influence
  /// a result.
  func::FuncOp grad;
  /// `@f_train(args...) -> (results..., saved...)`: the forward in training
  /// mode: `@f`'s results, then what the backward needs (the saved
  /// activations: the tape of every layer, and the layer outputs the
  /// backward reads that are not results).
  func::FuncOp train;
  /// `@f_backward(args..., results..., saved..., cotangents...) ->
  /// (gradients...)`: the backward from what `@f_train` returned, without
  /// running the recurrence forward again.
  func::FuncOp backward;
};

/// The names of the functions made for `name`.
std::string getGradFunctionName(StringRef name);
std::string getTrainFunctionName(StringRef name);
std::string getBackwardFunctionName(StringRef name);

/// Adds the gradient functions of `func` after it in its symbol table. Every
/// op on the path from the arguments to the results must implement
/// AdjointOpInterface (registerAdjointOpInterfaceExternalModels attaches it
/// to the ops the project differentiates); otherwise, or when a form of an
/// op is not differentiable, this fails with a diagnostic at the op and adds
/// nothing. `func` itself is not changed.
FailureOr<GradientFunctions> differentiateFunction(RewriterBase &rewriter,
                                                   func::FuncOp func);

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_DIFFERENTIATION_DIFFERENTIATE_H
