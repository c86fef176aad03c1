//===- Dialects.cpp - C API of the lstm dialect ---------------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm-c/Dialects.h"

#include "lstm/Dialect/LSTM/IR/LSTMDialect.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LSTM, lstm, mlir::lstm::LSTMDialect)
