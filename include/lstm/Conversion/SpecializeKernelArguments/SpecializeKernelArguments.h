//===- SpecializeKernelArguments.h - What every launch passes ---*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_SPECIALIZEKERNELARGUMENTS_SPECIALIZEKERNELARGUMENTS_H
#define LSTM_CONVERSION_SPECIALIZEKERNELARGUMENTS_SPECIALIZEKERNELARGUMENTS_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lstm {

#define GEN_PASS_DECL_SPECIALIZEKERNELARGUMENTSPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_SPECIALIZEKERNELARGUMENTS_SPECIALIZEKERNELARGUMENTS_H
