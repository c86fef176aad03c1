//===- GemmOperandsToBF16.h - bf16 operands of contractions -----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//-*-===//

#ifndef LSTM_CONVERSION_GEMMOPERANDSTOBF16_GEMMOPERANDSTOBF16_H
#define LSTM_CONVERSION_GEMMOPERANDSTOBF16_GEMMOPERANDSTOBF16_H

#include "mlir/Pass/Pass.h"

namespace mlir::lstm {

#define GEN_PASS_DECL_GEMMOPERANDSTOBF16PASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_GEMMOPERANDSTOBF16_GEMMOPERANDSTOBF16_H
