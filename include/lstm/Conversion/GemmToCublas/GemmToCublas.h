//===- GemmToCublas.h - Buffer-level GEMMs to cuBLAS calls ------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_GEMMTOCUBLAS_GEMMTOCUBLAS_H
#define LSTM_CONVERSION_GEMMTOCUBLAS_GEMMTOCUBLAS_H

#include "lstm/Conversion/Utils/GpuTargetOptions.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class ModuleOp;

namespace lstm {

#define GEN_PASS_DECL_CONVERTGEMMTOCUBLASPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_GEMMTOCUBLAS_GEMMTOCUBLAS_H
