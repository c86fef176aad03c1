//===- Passes.h - Rewrites of the lstm dialect ------------------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_H
#define LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_H

#include "lstm/Conversion/Utils/GpuTargetOptions.h"
#include "mlir/Pass/Pass.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::lstm {

/// Attributes `lstm-wavefront` puts on the loop over diagonals it emits: the
/// number of layers it runs (i64) and their direction ("forward" or
/// "reverse"). `lstm-schedule-report` reads them.
inline constexpr llvm::StringLiteral kWavefrontLayersAttr =
    "lstm.wavefront_layers";
inline constexpr llvm::StringLiteral kWavefrontDirectionAttr =
    "lstm.wavefront_direction";

#define GEN_PASS_DECL
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"

} // namespace mlir::lstm

#endif // LSTM_DIALECT_LSTM_TRANSFORMS_PASSES_H
