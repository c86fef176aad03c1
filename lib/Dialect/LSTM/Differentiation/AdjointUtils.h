//===- AdjointUtils.h - Pieces shared by the adjoint builders ---*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Private to lib/Dialect/LSTM/Differentiation: the accumulation of
// cotangents, the tensor-level building blocks of the backward pass (GEMMs
// over all steps, row sums, splats), and the registration of each file's
// external models.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_LSTM_DIFFERENTIATION_ADJOINTUTILS_H
#define LIB_DIALECT_LSTM_DIFFERENTIATION_ADJOINTUTILS_H

#include "lstm/Dialect/LSTM/Differentiation/AdjointOpInterface.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"

#include <functional>

namespace mlir::lstm::detail {

/// The contributions to the cotangents of forward values, summed when a
/// cotangent is asked for. Contributions to slices of a value (the adjoints
/// of `tensor.extract_slice`) are kept apart: when they are disjoint they are
/// inserted into one buffer instead of being added as zero-padded tensors,
/// which is what turns the per-gate cotangents of a combined GEMM back into
/// one `[B, G·H]` operand.
class CotangentAccumulator {
public:
  struct Slice {
    Value value;
    /// Offsets, sizes and strides as the forward slice has them (forward
    /// values; the caller maps them when building).
    SmallVector<OpFoldResult> offsets, sizes, strides;
  };

  void add(Value v, Value contribution) {
    entries[v].dense.push_back(contribution);
  }
  void addSlice(Value v, Slice slice) {
    entries[v].slices.push_back(std::move(slice));
  }
  bool has(Value v) const { return entries.count(v); }

  /// How materialize() obtains what it builds with: forward values as they
  /// are where the adjoint is built, and a buffer of `v`'s type, zeroed or
  /// with undefined contents (when the slices cover it).
  struct Builders {
    std::function<FailureOr<Value>(Value)> primal;
    std::function<FailureOr<Value>(Value v, bool zeroed)> buffer;
  };

  /// The sum of the contributions to `v` built with `b` (null when there are
  /// none); the sum replaces them, so that asking again builds nothing.
  FailureOr<Value> materialize(OpBuilder &b, Location loc, Value v,
                               const Builders &builders);

private:
  struct Entry {
    SmallVector<Value> dense;
    SmallVector<Slice> slices;
  };
  llvm::MapVector<Value, Entry> entries;
};

/// `lhs · rhs` as one `linalg.generic` contraction over 2-D tensors (a GEMM
/// that lstm-gemm-to-cublas recognises), reading `lhs` transposed
/// (`[K, M]`) or `rhs` transposed (`[N, K]`) through the indexing maps.
Value buildMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                  bool transposeLhs, bool transposeRhs);

/// The sum over dimension 0 of a tensor (`[R, ...] -> [...]`).
Value buildSumOverLeadingDim(OpBuilder &b, Location loc, Value x);

/// The column sums of a matrix (`[R, N] -> [N]`) as the GEMM `1ᵀ · x`
/// (`[1, R] · [R, N]`), for sums over many rows (a bias gradient over all
/// T·B rows): cuBLAS reads the rows at memory speed where a generated
/// kernel has one thread per column, each adding R values in sequence.
Value buildColumnSums(OpBuilder &b, Location loc, Value x);

/// `rows ⊙ v` for `rows` of rank r and `v` of rank r - 1, broadcast along
/// dimension r - 2 of `rows` (the batch).
Value buildBroadcastMul(OpBuilder &b, Location loc, Value rows, Value v);

/// A tensor of `type` filled with `c` (dynamic extents from `dynamicSizes`),
/// or a scalar constant for a scalar `type`.
Value buildSplatValue(OpBuilder &b, Location loc, Type type,
                      ValueRange dynamicSizes, double c);

/// `[T, B, N] -> [T·B, N]`.
Value collapseLeadingDims(OpBuilder &b, Location loc, Value seq);

/// `[T·B, N] -> [T, B, N]` with the extents of `like` (`[T, B, ...]`).
Value expandLeadingDim(OpBuilder &b, Location loc, Value rows, Value like);

/// `1 - x` for a float tensor or scalar.
Value buildOneMinus(OpBuilder &b, Location loc, Value x);

/// The registration of the external models, one per file.
void registerElementwiseAdjoints(DialectRegistry &registry);
void registerTensorAdjoints(DialectRegistry &registry);
void registerLSTMOpAdjoints(DialectRegistry &registry);

} // namespace mlir::lstm::detail

#endif // LIB_DIALECT_LSTM_DIFFERENTIATION_ADJOINTUTILS_H
