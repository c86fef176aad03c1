//===- NarrowKernelIndices.h - Kernels with 32-bit indices ------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_NARROWKERNELINDICES_NARROWKERNELINDICES_H
#define LSTM_CONVERSION_NARROWKERNELINDICES_NARROWKERNELINDICES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lstm {

#define GEN_PASS_DECL_NARROWKERNELINDICESPASS
#include "lstm/Conversion/Passes.h.inc"

/// A kernel with 32-bit indices takes memrefs of fewer elements than this,
/// and indices strictly between its negation and it: half of the i32
/// range, which leaves room for an address computed a row or a step past
/// the last one (before a bounds test, or for the next iteration).
inline constexpr int64_t kNarrowIndexLimit = int64_t{1} << 30;

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_NARROWKERNELINDICES_NARROWKERNELINDICES_H
