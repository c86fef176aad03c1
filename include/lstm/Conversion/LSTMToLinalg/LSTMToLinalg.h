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

/// Patterns that lower `lstm.layer` to `scf.for`, and `lstm.gate` and
/// `lstm.one_minus` to `linalg.generic`.
void populateLSTMToLinalgPatterns(RewritePatternSet &patterns);

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H
