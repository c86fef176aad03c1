//===- PipelineStages.h - Stages the pipelines share -------------*- C++
//-*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The canonicalizer as the pipelines run it and the stages the CPU and GPU
// lowerings share (the tensor level, bufferization, host code to LLVM).
// Private to lib/Pipelines.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_PIPELINES_PIPELINESTAGES_H
#define LSTM_PIPELINES_PIPELINESTAGES_H

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <memory>

namespace mlir::lstm::pipelines {

/// The canonicalizer as the pipelines run it: the worklist filled bottom-up
/// (post-order, GreedyRewriteConfig's own default), where the pass's default
/// fills it top-down. Both drive the same patterns to the same fixpoint (the
/// latency stack's IR after lstm-to-persistent came out identical), but the
/// top-down fill took three times as long over a persistent kernel's
/// unrolled products: 0.22-0.31 s against 0.08-0.09 s on that stack's
/// 3xTF32 kernel (docs/benchmarks.md, "Compile time").
std::unique_ptr<Pass> createCanonicalizer();

/// A nested pipeline for op-agnostic passes that work within a function
/// (the canonicalizer, CSE, rewrites of one op into others): it runs on each
/// function and kernel module of the module on its own, and the pass manager
/// runs those in parallel, where a pass on the module would walk them one
/// after another on one thread (a training library's forward and backward
/// functions hold most of the code, side by side on the 2-core machine).
OpPassManager &perSymbol(OpPassManager &pm);

/// The tensor level both targets share: the run-time checks of the tensor
/// ops as the passes before left them, the dialect to linalg/scf, pointwise
/// arith/math to linalg, then fuse the pointwise generics of each step.
void buildTensorPipeline(OpPassManager &pm, bool runtimeChecks);

/// The tensor level to buffers, for both targets.
void buildBufferizationPipeline(OpPassManager &pm);

/// Host code (and, on the GPU path, what is left of it) to the LLVM dialect.
/// `cpuRuntime`: buffers through the CPU runtime's allocation functions
/// (lstm/Runtime/CpuRuntime.h), which reuse large blocks, and failed checks
/// reported through it (a guarded call returns from them).
void buildHostToLLVMPipeline(OpPassManager &pm, bool cpuRuntime);

} // namespace mlir::lstm::pipelines

#endif // LSTM_PIPELINES_PIPELINESTAGES_H
