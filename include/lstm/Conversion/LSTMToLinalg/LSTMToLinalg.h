//===- LSTMToLinalg.h - Lower the lstm dialect to linalg --------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H
#define LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace lstm {

#define GEN_PASS_DECL_CONVERTLSTMTOLINALGPASS
#include "lstm/Conversion/Passes.h.inc"

/// Conversion patterns (for a dialect conversion with the lstm dialect
/// illegal; no type conversion) that lower `lstm.layer` to `scf.for`, and
/// `lstm.gate`, `lstm.one_minus` and `lstm.pointwise` to linalg.
void populateLSTMToLinalgPatterns(RewritePatternSet &patterns);

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H
