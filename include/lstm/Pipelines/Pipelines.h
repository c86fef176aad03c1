//===- Pipelines.h - Named pass pipelines of the project --------*- C++ -*-===//

#ifndef LSTM_PIPELINES_PIPELINES_H
#define LSTM_PIPELINES_PIPELINES_H

namespace mlir {
class OpPassManager;

namespace lstm {

/// Lowers a module of `lstm` (and upstream tensor-level) IR through linalg,
/// one-shot bufferization and loops to the LLVM dialect, ready for the JIT or
/// for translation to LLVM IR.
void buildLSTMToCPUPipeline(OpPassManager &pm);

/// Registers the named pipelines (`lstm-to-cpu`) with the pass registry.
void registerLSTMPipelines();

} // namespace lstm
} // namespace mlir

#endif // LSTM_PIPELINES_PIPELINES_H
