//===- SplitColumns.cpp - A product split where its columns pair apart ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// lstm-concat-summed-products' split-columns: where the wider of two
// products that a generic adds has its other columns added to a third
// product (Cho's GRU's input product, whose reset and update gates' columns
// pair with the recurrent product and whose third gate's pair with the
// product of r ⊙ h), the wider product becomes two, each of which the pass
// then combines with its partner without zero weights.
//
//===----------------------------------------------------------------------===//

#include "SummedProducts.h"

#include "lstm/Dialect/LSTM/Utils/Matmul.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::lstm::summed_products;

namespace {

/// Splits `wide` at column `narrow` into two products of its kind, of its
/// first `narrow` columns and of the others, each over the rows of the
/// weights that make them (sliced right after the weights are defined:
/// before a loop that does not change them). Every read of `wide` but the
/// extents is a slice: `rest`, of all its columns from `narrow` on, becomes
/// the second product; the others, of columns before `narrow`, read the
/// first.
void splitAtColumn(RewriterBase &rewriter, linalg::LinalgOp wide,
                   int64_t narrow, tensor::ExtractSliceOp rest) {
  ColumnDims columns = *columnDims(wide);
  int64_t width = *columnCount(wide);
  Location loc = wide.getLoc();
  Value weights = wide.getDpsInputs()[1];
  auto weightRows = [&](int64_t offset, int64_t size) -> Value {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.restoreInsertionPoint(after(weights));
    int64_t rank = cast<RankedTensorType>(weights.getType()).getRank();
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    SmallVector<OpFoldResult> sizes =
        tensor::getMixedSizes(rewriter, loc, weights);
    offsets[columns.rhs] = rewriter.getIndexAttr(offset);
    sizes[columns.rhs] = rewriter.getIndexAttr(size);
    return tensor::ExtractSliceOp::create(rewriter, loc, weights, offsets,
                                          sizes, strides);
  };
  linalg::FillOp fill = lstm::getZeroFill(wide.getDpsInits()[0]);
  Value shape = fill.getOutputs()[0];
  // A product of `size` columns from `offset`, its zeros filled right
  // before it (where the GEMM call-outs look for them).
  auto product = [&](int64_t offset, int64_t size) -> Value {
    Value rows = weightRows(offset, size);
    rewriter.setInsertionPoint(wide);
    Value zeros = zerosLike(rewriter, loc, shape, columns.result, size,
                            fill.getInputs()[0]);
    return clone(rewriter, wide.getOperation(), {zeros.getType()},
                 {wide.getDpsInputs()[0], rows, zeros})
        ->getResult(0);
  };
  Value first = product(0, narrow);
  Value second = product(narrow, width - narrow);
  rewriter.replaceOp(rest, second);
  for (OpOperand &use :
       llvm::make_early_inc_range(wide->getResult(0).getUses())) {
    Operation *user = use.getOwner();
    rewriter.setInsertionPoint(user);
    if (auto dim = dyn_cast<tensor::DimOp>(user)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (index && *index == columns.result)
        rewriter.replaceOpWithNewOp<arith::ConstantIndexOp>(dim, width);
      else
        rewriter.modifyOpInPlace(dim, [&] { use.set(first); });
      continue;
    }
    // A slice of columns before `narrow` (otherReads checked).
    auto slice = cast<tensor::ExtractSliceOp>(user);
    rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
        slice, slice.getType(), first, slice.getMixedOffsets(),
        slice.getMixedSizes(), slice.getMixedStrides());
  }
  rewriter.eraseOp(wide);
  if (fill->use_empty()) {
    rewriter.eraseOp(fill);
    if (Operation *empty = shape.getDefiningOp<tensor::EmptyOp>();
        empty && empty->use_empty())
      rewriter.eraseOp(empty);
  }
}

} // namespace

void lstm::summed_products::splitWiderProducts(Operation *root) {
  PairsByProducts summed;
  root->walk([&](linalg::GenericOp generic) {
    for (auto &[products, pairs] :
         findSummedPairs(generic, /*padColumns=*/true))
      summed[products].append(pairs.begin(), pairs.end());
  });
  IRRewriter rewriter(root->getContext());
  llvm::SmallPtrSet<Operation *, 8> split;
  for (auto &[products, pairs] : summed) {
    auto first = cast<linalg::LinalgOp>(products.first);
    auto second = cast<linalg::LinalgOp>(products.second);
    if (first->getResultTypes() == second->getResultTypes() ||
        first->getBlock() != second->getBlock() || split.contains(first) ||
        split.contains(second))
      continue;
    linalg::LinalgOp later = first->isBeforeInBlock(second) ? second : first;
    std::optional<SmallVector<tensor::ExtractSliceOp>> others =
        otherReads(first, second, pairs, later);
    int64_t a = *columnCount(first), b = *columnCount(second);
    linalg::LinalgOp wide = a > b ? first : second;
    int64_t narrow = std::min(a, b);
    if (!others || others->size() != 1 ||
        !addedToWholeProduct(others->front(), wide, narrow))
      continue;
    splitAtColumn(rewriter, wide, narrow, others->front());
    split.insert(wide);
  }
}
