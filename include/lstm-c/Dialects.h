//===-- lstm-c/Dialects.h - C API of the lstm dialect -------------*- C -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The lstm dialect's handle, as upstream dialects have one: with it, C code
// inserts the dialect into an MlirDialectRegistry or loads it into an
// MlirContext (mlirDialectHandleInsertDialect, mlirDialectHandleLoadDialect).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_C_DIALECTS_H
#define LSTM_C_DIALECTS_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(LSTM, lstm);

#ifdef __cplusplus
}
#endif

#endif // LSTM_C_DIALECTS_H
