//===- RuntimeChecks.h - Run-time checks of the generated code --*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_RUNTIMECHECKS_RUNTIMECHECKS_H
#define LSTM_CONVERSION_RUNTIMECHECKS_RUNTIMECHECKS_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace func {
class FuncOp;
} // namespace func

namespace lstm {

#define GEN_PASS_DECL_CHECKALLOCATIONSPASS
#define GEN_PASS_DECL_GENERATERUNTIMECHECKSPASS
#define GEN_PASS_DECL_HOISTRUNTIMECHECKSPASS
#define GEN_PASS_DECL_REPORTFAILEDCHECKSPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_RUNTIMECHECKS_RUNTIMECHECKS_H
