//===- Registration.h - Entry points to register the project ----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What another MLIR tool calls from its main() to take the lstm dialect, its
// passes and its pipelines on board. registerAllLSTM() alone is enough for a
// tool that registers nothing else (see examples/embed); in a tool that
// registers everything upstream too, the parts it adds again are no-ops.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_REGISTRATION_H
#define LSTM_REGISTRATION_H

// registerLSTMPipelines() registers the named pipelines.
#include "lstm/Pipelines/Pipelines.h"

namespace mlir {
class DialectRegistry;

namespace lstm {

/// Adds the lstm dialect, the upstream dialects that lstm IR is written in
/// (func, arith, math, tensor) and those it is lowered to by
/// convert-lstm-to-linalg (linalg, scf) to `registry`.
void registerLSTMDialect(DialectRegistry &registry);

/// Adds the upstream external interface models that the project's pipelines
/// rely on (bufferization and buffer deallocation of the upstream ops, ...).
/// registerAllDialects() adds them too; a tool without it needs this.
void registerLSTMExtensions(DialectRegistry &registry);

/// Registers the project's passes with the global pass registry.
void registerLSTMPasses();

/// All of the above, and registerLSTMPipelines(): enough to parse lstm IR
/// and run lstm-to-cpu. (lstm-to-nvvm also needs the LLVM IR translations,
/// registerAllToLLVMIRTranslations().) Registers the passes and pipelines
/// globally: call it once per process.
void registerAllLSTM(DialectRegistry &registry);

} // namespace lstm
} // namespace mlir

#endif // LSTM_REGISTRATION_H
