//===-- lstm-c/Registration.h - Register the project from C -------*- C -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The C counterparts of lstm/Registration.h.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_C_REGISTRATION_H
#define LSTM_C_REGISTRATION_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Inserts into `registry` the lstm dialect, the upstream dialects that lstm
/// IR is written in and lowered to, and the interface models that the
/// project's pipelines need: a context created with it parses lstm IR and
/// runs lstm-to-cpu.
MLIR_CAPI_EXPORTED void lstmRegisterAllDialects(MlirDialectRegistry registry);

/// Registers the project's passes and named pipelines (lstm-to-cpu,
/// lstm-to-nvvm, convert-lstm-to-linalg, ...) with the global pass registry.
/// Calls after the first do nothing.
MLIR_CAPI_EXPORTED void lstmRegisterAllPasses(void);

/// Registers upstream's generic transformation passes (canonicalize, cse,
/// inline, ...) with the global pass registry, for pipelines given by name
/// (upstream's C API has them as mlirRegisterTransformsPasses, which Debian's
/// libMLIR.so does not export). Calls after the first do nothing.
MLIR_CAPI_EXPORTED void lstmRegisterTransformsPasses(void);

#ifdef __cplusplus
}
#endif

#endif // LSTM_C_REGISTRATION_H
