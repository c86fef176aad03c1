//===- GemmToBlas.h - Buffer-level GEMMs to CPU GEMM calls ------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_GEMMTOBLAS_GEMMTOBLAS_H
#define LSTM_CONVERSION_GEMMTOBLAS_GEMMTOBLAS_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;

namespace lstm {

#define GEN_PASS_DECL_CONVERTGEMMTOBLASPASS
#define GEN_PASS_DECL_PREPARELOOPGEMMSPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_GEMMTOBLAS_GEMMTOBLAS_H
