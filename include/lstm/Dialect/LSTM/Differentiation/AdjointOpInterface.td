//===- AdjointOpInterface.td - Reverse-mode derivatives of ops -*- tablegen -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The interface through which `lstm-differentiate` asks an op for its
// derivative. The rules of upstream ops (arith, math, tensor) are attached as
// external models, like upstream's bufferization interfaces, so that every op
// a cell may hold answers the same question the same way.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_DIFFERENTIATION_ADJOINTOPINTERFACE_TD
#define LSTM_DIALECT_LSTM_DIFFERENTIATION_ADJOINTOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def LSTM_AdjointOpInterface : OpInterface<"AdjointOpInterface"> {
  let cppNamespace = "::mlir::lstm";
  let description = [{
    An op that knows its reverse-mode derivative (its adjoint, or
    vector-Jacobian product): given the cotangents of its results, it adds
    the cotangents of its operands.

    The op does not build the whole backward pass: it talks to an
    `AdjointContext`, which knows where the adjoint is being built (the body
    of a gradient function, one step of the backward recurrence of a layer,
    or the scalar region of a fused `lstm.pointwise`) and therefore how a
    forward value is obtained there (as it is, saved by the training forward,
    or recomputed), how contributions to the same cotangent are summed, and
    how products with weights defined outside a recurrence are deferred to
    one GEMM over all steps. A rule only states the local derivative.
  }];

  let methods = [
    InterfaceMethod<[{
        Adds to `context` the cotangents of this op's operands that need one
        (`context.isActive`), from the cotangents of its results
        (`context.getCotangent`, null where a result has none). Ops are
        visited in reverse order, so all uses of the results have already
        contributed. Fails, with a diagnostic at the op, where the
        derivative is not defined for this form of the op.
      }],
      "::llvm::LogicalResult", "buildAdjoint",
      (ins "::mlir::lstm::AdjointContext &":$context)
    >,
  ];
}

#endif // LSTM_DIALECT_LSTM_DIFFERENTIATION_ADJOINTOPINTERFACE_TD
