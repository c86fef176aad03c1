//===- OperandSplits.h - Operands split into TF32 parts ---------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The operands of lstm-split-tf32-gemms's products: each split into its
// TF32 parts along its reduction dimension, hoisted out of the loops where
// it is a weight, and sliced into the parts of a deep reduction.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_CONVERSION_SPLITTF32GEMMS_OPERANDSPLITS_H
#define LSTM_LIB_CONVERSION_SPLITTF32GEMMS_OPERANDSPLITS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <tuple>

namespace mlir::lstm::tf32 {

/// The three parts of an operand along its reduction dimension: which of
/// them is the low part (the others are the high part).
/// [A_lo | A_hi | A_hi] and [B_hi ; B_lo ; B_hi] pair as lo·hi, hi·lo and
/// hi·hi: the small terms first, then the large ones, which tensor cores
/// add with less error to an accumulator that is still small (norm-relative
/// errors 4x smaller on the H200 than hi·hi first: docs/benchmarks.md,
/// "3xTF32 GEMMs").
constexpr int64_t kLowPartOfFirst = 0;
constexpr int64_t kLowPartOfSecond = 1;

/// `value` with dimension `dim` (extent K) three times as long: parts
/// [0, K), [K, 2K) and [2K, 3K) hold the high part, but part `lowPart` the
/// low one. One linalg.generic writes the parts as a dimension of extent 3
/// before `dim`, which a collapse_shape (a view once bufferized) merges
/// into it.
Value splitOperand(OpBuilder &builder, Location loc, Value value, int64_t dim,
                   int64_t lowPart);

/// The i1 that says whether a split hoisted out of the loops is used,
/// defined before it (at the function's start); a null Value: always.
using HoistGuard = Value;

/// An uninitialised tensor of the type of `value`'s split along `dim`.
Value emptySplit(OpBuilder &b, Location loc, Value value, int64_t dim);

/// Splits each operand once where it can. An operand defined outside the
/// innermost loop around its product (a weight, before the time loop) is
/// split right after its definition, once for every product that reads it
/// and every iteration; any other right before the product, and a later
/// product of the same block that reads it (products are split in program
/// order) reads that split. A hoisted split that a guard says the product
/// may not use (a batch below min-rows) is made behind an scf.if on it,
/// the other branch an uninitialised buffer, and is the product's own.
class Splitter {
public:
  /// `value`'s split along `dim` (low part `lowPart`) for `product`; a
  /// hoisted one behind `guard` where it is not null.
  Value split(OpBuilder &builder, Operation *product, Value value, int64_t dim,
              int64_t lowPart, HoistGuard guard = Value());

private:
  /// The type of `value`'s split along `dim`.
  static Type splitType(Value value, int64_t dim);

  /// By operand, dimension, low part and the block of the products that
  /// share it (none for a hoisted split).
  llvm::DenseMap<std::tuple<Value, int64_t, int64_t, Block *>, Value> splits;
};

/// The terms [offset, offset + size) of `value` along dimension `dim`.
Value sliceAlong(OpBuilder &b, Location loc, Value value, int64_t dim,
                 OpFoldResult offset, OpFoldResult size);

/// The terms [at, at + size) of `value`, an operand of `op`, along
/// dimension `dim`: right after the operand's definition where that is
/// outside the loop around `op` (a weight), else at `b`'s insertion point.
Value sliceBeforeLoops(OpBuilder &b, linalg::LinalgOp op, Value value,
                       int64_t dim, int64_t at, int64_t size);

} // namespace mlir::lstm::tf32

#endif // LSTM_LIB_CONVERSION_SPLITTF32GEMMS_OPERANDSPLITS_H
