//===- LSTMDialect.td - The lstm dialect -------------------*- tablegen -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The `lstm` dialect: recurrent layers whose cell is a region, and the gate op
// that the optimisation passes reason about.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_IR_LSTMDIALECT_TD
#define LSTM_DIALECT_LSTM_IR_LSTMDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def LSTM_Dialect : Dialect {
  let name = "lstm";
  let cppNamespace = "::mlir::lstm";
  let summary = "Recurrent layers of the LSTM family, at tensor level";
  let description = [{
    The `lstm` dialect describes recurrent networks of the LSTM/GRU family at
    tensor level. A `lstm.layer` runs a recurrence over a `[T, B, I]` sequence;
    its region is the cell, written with `lstm.gate` (an activation of a sum of
    matrix products plus biases and an optional peephole) and upstream
    `arith`/`math` ops on tensors for the remaining pointwise math.

    Keeping the matrix products of each gate explicit is what lets the
    optimisation passes combine gate GEMMs, hoist input projections out of the
    time loop and fuse the pointwise work of a step.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect"
  ];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def LSTM_Activation : I32EnumAttr<"Activation",
    "activation function of a gate", [
      I32EnumAttrCase<"sigmoid", 0>,
      I32EnumAttrCase<"tanh", 1>,
      I32EnumAttrCase<"relu", 2>,
      I32EnumAttrCase<"identity", 3>,
    ]> {
  let cppNamespace = "::mlir::lstm";
}

def LSTM_Direction : I32EnumAttr<"Direction",
    "direction in which a layer walks its sequence", [
      I32EnumAttrCase<"forward", 0>,
      I32EnumAttrCase<"reverse", 1>,
    ]> {
  let cppNamespace = "::mlir::lstm";
}

#endif // LSTM_DIALECT_LSTM_IR_LSTMDIALECT_TD
