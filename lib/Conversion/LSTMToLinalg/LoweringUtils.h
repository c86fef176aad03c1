//===- LoweringUtils.h - Helpers shared by the lstm lowerings ---*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Private to lib/Conversion/LSTMToLinalg: the pieces that the patterns of
// the different files of the lowering share.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_LSTMTOLINALG_LOWERINGUTILS_H
#define LIB_CONVERSION_LSTMTOLINALG_LOWERINGUTILS_H

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::lstm::detail {

/// The dynamic extents of `type`, read from `source` dimension `sourceDims[i]`
/// for result dimension `i` (only where `type` is dynamic).
SmallVector<Value> dynamicSizes(OpBuilder &b, Location loc,
                                RankedTensorType type,
                                ArrayRef<std::pair<Value, int64_t>> from);

} // namespace mlir::lstm::detail

namespace mlir::lstm {
/// The conversion patterns of the lowering, by file: `lstm.layer` to an
/// `scf.for` over time (LayerToLinalg.cpp); `lstm.gate` and `lstm.one_minus`
/// to linalg (GateToLinalg.cpp); `lstm.pointwise` to one `linalg.generic`
/// (PointwiseToLinalg.cpp).
void populateLayerToLinalgPatterns(RewritePatternSet &patterns);
void populateGateToLinalgPatterns(RewritePatternSet &patterns);
void populatePointwiseToLinalgPatterns(RewritePatternSet &patterns);
} // namespace mlir::lstm

#endif // LIB_CONVERSION_LSTMTOLINALG_LOWERINGUTILS_H
