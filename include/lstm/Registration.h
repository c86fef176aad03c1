//===- Registration.h - Entry points to register the project ----*- C++ -*-===//
//
// What another MLIR tool calls from its main() to take the lstm dialect, its
// passes and its pipelines on board.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_REGISTRATION_H
#define LSTM_REGISTRATION_H

// registerLSTMPipelines() registers the named pipelines.
#include "lstm/Pipelines/Pipelines.h"

namespace mlir {
class DialectRegistry;

namespace lstm {

/// Adds the lstm dialect (and the dialects it produces) to `registry`.
void registerLSTMDialect(DialectRegistry &registry);

/// Registers the project's passes with the global pass registry.
void registerLSTMPasses();

/// All of the above.
void registerAllLSTM(DialectRegistry &registry);

} // namespace lstm
} // namespace mlir

#endif // LSTM_REGISTRATION_H
