//===-- lstm-c/Pipelines.h - Run the project's pipelines from C ---*- C -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Runs a pass pipeline given by name on a module, without the C code having
// to build a pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_C_PIPELINES_H
#define LSTM_C_PIPELINES_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Runs `pipeline` on `module` in place. `pipeline` is a textual pass
/// pipeline on builtin.module: a registered pipeline or pass name such as
/// "lstm-to-cpu", or a list such as "convert-lstm-to-linalg,canonicalize"
/// (names must be registered: lstmRegisterAllPasses() for the project's).
/// On failure (an unknown name, a pass that fails, IR that does not verify)
/// returns failure and reports why as error diagnostics on the module's
/// context; the module may then be partly transformed.
MLIR_CAPI_EXPORTED MlirLogicalResult lstmRunPipeline(MlirModule module,
                                                     MlirStringRef pipeline);

#ifdef __cplusplus
}
#endif

#endif // LSTM_C_PIPELINES_H
