//===- SplitOperands.h - The slices of a split product's operands -*- C++
//-*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// How lstm-split-batched-gemms lays out the operands of a product split in
// its depth, `[L, R, K]` as the `[L·S, R, K/S]` slices of one batch: by a
// transposition (a weight's once, after its definition), by the generics
// that compute the operand's pieces (a backward cell's gate gradients), or
// by a slicing generic that the operand's own generic takes in.
// SplitBatchedGemms.cpp decides which and builds the product. Private to
// the pass.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_SPLITBATCHEDGEMMS_SPLITOPERANDS_H
#define LSTM_CONVERSION_SPLITBATCHEDGEMMS_SPLITOPERANDS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

#include <optional>

namespace mlir::lstm::split_gemms {

/// `[L, R, K]` as `[L·S, R, K/S]`: slice s of matrix l is matrix l·S + s.
/// A weight's is made once, after its definition, and shared between the
/// products that read it.
class SliceTransposer {
public:
  /// `value`'s slices, right after its definition where `afterDefinition`
  /// (made once per value and number of slices), else where the rewriter
  /// stands.
  Value transpose(RewriterBase &rewriter, Value value, int64_t splits,
                  bool afterDefinition);

private:
  llvm::DenseMap<std::pair<Value, int64_t>, Value> cache;
};

/// Where each of `x`'s pieces is computed: a result of a linalg.generic.
using PieceResults = SmallVector<std::pair<linalg::GenericOp, unsigned>>;

/// The generics of one block that compute all of `x`'s columns in pieces
/// of equal width (a backward cell's gate gradients assembled into dG),
/// each piece's generic and result number in column order, if there are
/// such; `x` is `[L, R, K]`.
std::optional<PieceResults> piecesOfGenerics(Value x, int64_t maxPieces);

/// `[L, R, K]` as `[L·S, R, K/S]` without a transposition: the generics
/// that compute its S pieces also compute each into the slices l·S + s of a
/// tensor of its own (a second output each), made before the first of
/// them.
Value slicesFromPieces(RewriterBase &rewriter, Value x, PieceResults pieces);

/// The generic that computes `x` elementwise (every loop parallel, `x`'s
/// map a permutation, no linalg.index): one that can also write it in a
/// split's slices (fused with slicingGeneric), with its other results and
/// readers as before.
linalg::GenericOp elementwiseProducer(Value x);

/// `[L, R, K]` as `[L·S, R, K/S]` by a generic that reads element
/// `(l, r, s·K/S + j)` for `(l, s, r, j)`, right after the generic that
/// computes `x`: a transposition that generic can take in
/// (fuseIntoNeighbours), unlike SliceTransposer's reshapes; there, before
/// the other readers of its results.
linalg::GenericOp slicingGeneric(RewriterBase &rewriter, Value x,
                                 int64_t splits);

} // namespace mlir::lstm::split_gemms

#endif // LSTM_CONVERSION_SPLITBATCHEDGEMMS_SPLITOPERANDS_H
