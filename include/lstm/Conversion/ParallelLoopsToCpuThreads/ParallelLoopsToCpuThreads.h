//===- ParallelLoopsToCpuThreads.h - Parallel loops on CPU threads -*- C++ -*-//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_PARALLELLOOPSTOCPUTHREADS_PARALLELLOOPSTOCPUTHREADS_H
#define LSTM_CONVERSION_PARALLELLOOPSTOCPUTHREADS_PARALLELLOOPSTOCPUTHREADS_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lstm {

/// The mark of a function that lstm-outline-parallel-loops made and
/// lstm-dispatch-parallel-bodies calls through the runtime.
inline constexpr llvm::StringLiteral kParallelBodyAttrName =
    "lstm.parallel_body";

#define GEN_PASS_DECL_OUTLINEPARALLELLOOPSPASS
#define GEN_PASS_DECL_DISPATCHPARALLELBODIESPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_PARALLELLOOPSTOCPUTHREADS_PARALLELLOOPSTOCPUTHREADS_H
