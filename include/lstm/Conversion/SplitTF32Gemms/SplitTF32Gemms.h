//===- SplitTF32Gemms.h - fp32 products as TF32 products of split operands ===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_SPLITTF32GEMMS_SPLITTF32GEMMS_H
#define LSTM_CONVERSION_SPLITTF32GEMMS_SPLITTF32GEMMS_H

#include "mlir/Pass/Pass.h"

namespace mlir::lstm {

/// Discardable unit attribute of a contraction whose operands
/// lstm-split-tf32-gemms made exact TF32 values: lstm-gemm-to-cublas runs it
/// on TF32 tensor cores whatever the module's compute type.
inline constexpr llvm::StringLiteral kTF32OperandsAttr = "lstm.tf32_operands";

#define GEN_PASS_DECL_SPLITTF32GEMMSPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_SPLITTF32GEMMS_SPLITTF32GEMMS_H
