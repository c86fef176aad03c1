//===- ProductBounds.h - Which products are worth splitting -----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The contractions lstm-split-tf32-gemms takes, and the test of their
// extents that decides, where they are dynamic at run time, whether the
// split version runs.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_CONVERSION_SPLITTF32GEMMS_PRODUCTBOUNDS_H
#define LSTM_LIB_CONVERSION_SPLITTF32GEMMS_PRODUCTBOUNDS_H

#include "lstm/Conversion/Utils/ProductExtents.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include <array>
#include <optional>
#include <variant>

namespace mlir::lstm::tf32 {

using lstm::Contraction;

/// A contraction on tensors of f32 operands into an f32 accumulator with one
/// row, column and reduction dimension (and any batch); nothing if `op` is
/// not one or was split already.
std::optional<Contraction> matchContraction(linalg::LinalgOp op);

/// What a product must have to be split.
struct Bounds {
  /// Rows, columns and terms, each.
  int64_t minRows;
  /// Multiply-adds, its batch included (a product in a loop), or 1.
  int64_t minWork;
  /// Multiply-adds for each element of the operands split at each call:
  /// rows·cols/(rows + cols) where both are, cols where only the first
  /// (the rows') is, rows where only the second is.
  int64_t minIntensity;
  /// Whether the first and the second operand are split at each call (not
  /// before the loops around the product).
  bool splitsFirst, splitsSecond;
  /// The most terms of one part, and the fewest outputs (rows × columns,
  /// the batch's included) of a product deeper than that, whose parts run
  /// one after another; 1: no such bound.
  int64_t maxDepth = 1, minPartOutputs = 1;
};

/// Whether `op` passes `bounds`: true or false where the extents that
/// decide are static; else an i1 built at `b`'s insertion point from the
/// dynamic extents that `extent` gives there; a null Value where it gives
/// none for one of them.
std::variant<bool, Value> enoughWork(OpBuilder &b, linalg::LinalgOp op,
                                     const Contraction &c, const Bounds &bounds,
                                     function_ref<Value(unsigned)> extent);

} // namespace mlir::lstm::tf32

#endif // LSTM_LIB_CONVERSION_SPLITTF32GEMMS_PRODUCTBOUNDS_H
