//===- AccumulateIntoProducts.h - Sums into their products ------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_ACCUMULATEINTOPRODUCTS_ACCUMULATEINTOPRODUCTS_H
#define LSTM_CONVERSION_ACCUMULATEINTOPRODUCTS_ACCUMULATEINTOPRODUCTS_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lstm {

#define GEN_PASS_DECL_ACCUMULATEINTOPRODUCTSPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_ACCUMULATEINTOPRODUCTS_ACCUMULATEINTOPRODUCTS_H
