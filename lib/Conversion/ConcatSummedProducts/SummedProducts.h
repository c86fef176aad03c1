//===- SummedProducts.h - Products that a generic adds ----------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What lstm-concat-summed-products combines: the pairs of zero-filled
// contractions whose results an elementwise generic only adds, and the
// extents that decide how (ConcatSummedProducts.cpp rewrites them).
// Private to the pass.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_CONCATSUMMEDPRODUCTS_SUMMEDPRODUCTS_H
#define LSTM_CONVERSION_CONCATSUMMEDPRODUCTS_SUMMEDPRODUCTS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/MapVector.h"

#include <optional>

namespace mlir::lstm::summed_products {

/// Where a contraction's inputs are reduced: the position, in each input's
/// indexing map, of its only reduction dimension.
struct ReductionDims {
  int64_t lhs, rhs;
};

/// The positions of the reduction dimension in the inputs of `op` if it is
/// a product this pass combines: a contraction on tensors of two inputs into
/// a zero-filled init, with one reduction dimension that both inputs index
/// directly (and the result not).
std::optional<ReductionDims> summableProduct(linalg::LinalgOp op);

/// Where a contraction's output columns are: the position, in the result
/// and in the right-hand input, of its only dimension that the right-hand
/// input and the result index and the left-hand input does not (`n` of
/// `[m, k] · [n, k]ᵀ`).
struct ColumnDims {
  int64_t result, rhs;
};

std::optional<ColumnDims> columnDims(linalg::LinalgOp op);

/// The static number of columns of `op`'s result, if it has one.
std::optional<int64_t> columnCount(linalg::LinalgOp op);

/// Where a contraction's matrices are batched: the position, in each input
/// and in the result, of its only loop dimension that all three index (`l`
/// of `[l, m, k] · [l, n, k]ᵀ`).
struct BatchDims {
  int64_t lhs, rhs, result;
};

std::optional<BatchDims> batchDims(linalg::LinalgOp op);

/// Whether two products that compute alike (computeAlike) can run as one
/// batch of both's matrices: batched, with static batch extents, and
/// operands and results of equal extents but for the batch's (the rows'
/// may be dynamic: the generic that adds the results makes them equal) and,
/// with `padded`, for the weights' and the results' columns.
bool stackable(linalg::LinalgOp a, linalg::LinalgOp b, bool padded);

/// A generic's operand that reads a product: the product itself or a slice
/// of it (whose only use is the operand).
struct ProductRead {
  OpOperand *operand;
  linalg::LinalgOp product;
  tensor::ExtractSliceOp slice;
};

/// Two reads of one generic that its body only adds together.
struct SummedPair {
  ProductRead first, second;
  arith::AddFOp sum;
};

/// The products a generic sums pairwise: for each pair of products, the
/// additions of their reads.
using PairsByProducts = llvm::MapVector<std::pair<Operation *, Operation *>,
                                        SmallVector<SummedPair>>;

PairsByProducts findSummedPairs(linalg::GenericOp generic, bool padColumns);

/// The other reads of the product with more columns, if the pairs read
/// everything else the two products are read for: every use of either is a
/// read in `pairs` or a tensor.dim, or a slice of the wider product's
/// columns that the narrower has none of (where the combined product adds
/// zeros to them), in `point`'s block and read only after `point`. None
/// otherwise.
std::optional<SmallVector<tensor::ExtractSliceOp>>
otherReads(linalg::LinalgOp first, linalg::LinalgOp second,
           ArrayRef<SummedPair> pairs, Operation *point);

/// Whether `slice`, a read of `product`'s columns from `offset` to its
/// last, takes all of them and all of its other extents (the type of a
/// product of those columns alone), and the one generic that reads it only
/// adds it to a whole product (no slice) that computes alike with as many
/// columns: a third product that the columns a split leaves over pair with
/// (Cho's GRU's input product of the third gate, `W_n x`, and its recurrent
/// product of `r ⊙ h`).
bool addedToWholeProduct(tensor::ExtractSliceOp slice, linalg::LinalgOp product,
                         int64_t offset);

/// Right after `v` is defined (at its block's start for an argument).
OpBuilder::InsertPoint after(Value v);

/// `zero` filled into a new tensor at the builder's insertion point, of the
/// extents of `shape` (a product's zero-filled init; its tensor.empty's
/// extents where it is one) but along `dim`, which has `size`.
Value zerosLike(OpBuilder &b, Location loc, Value shape, int64_t dim,
                int64_t size, Value zero);

/// Splits the wider of each two products of different widths that a
/// generic adds where the columns the narrower has none of are added to a
/// third product (addedToWholeProduct): the two products of the split then
/// each pair with a product of as many columns, which the pass combines
/// without zero weights (split-columns; SplitColumns.cpp).
void splitWiderProducts(Operation *root);

} // namespace mlir::lstm::summed_products

#endif // LSTM_CONVERSION_CONCATSUMMEDPRODUCTS_SUMMEDPRODUCTS_H
