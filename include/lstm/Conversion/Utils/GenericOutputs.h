//===- GenericOutputs.h - A generic's result computed twice -----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A value that two buffers need (a saved activation that the loop also
// carries on, a gradient that is stored for the weight gradients and also
// laid out for the next product) is cheaper computed into both by the
// kernel that computes it than computed into one and copied into the other.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_GENERICOUTPUTS_H
#define LSTM_CONVERSION_UTILS_GENERICOUTPUTS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm {

/// Replaces `generic` with a generic of one more output, which computes
/// what result `index` does (through the same indexing map) into `init`;
/// returns that new result. `generic`'s results are replaced by the others.
Value addGenericOutput(RewriterBase &rewriter, linalg::GenericOp generic,
                       unsigned index, Value init);

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_UTILS_GENERICOUTPUTS_H
