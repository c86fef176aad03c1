//===- LSTMDialect.h - The lstm dialect -------------------------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_DIALECT_LSTM_IR_LSTMDIALECT_H
#define LSTM_DIALECT_LSTM_IR_LSTMDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dialect.h"

#include "lstm/Dialect/LSTM/IR/LSTMOpsDialect.h.inc"

#endif // LSTM_DIALECT_LSTM_IR_LSTMDIALECT_H
