//===- LSTMDialect.cpp - The lstm dialect ---------------------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/IR/LSTMDialect.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

using namespace mlir;
using namespace mlir::lstm;

#include "lstm/Dialect/LSTM/IR/LSTMOpsDialect.cpp.inc"

void LSTMDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "lstm/Dialect/LSTM/IR/LSTMOps.cpp.inc"
      >();
}
