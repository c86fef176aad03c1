//===- Matmul.cpp - Recognising a plain matrix product --------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Utils/Matmul.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

std::optional<std::pair<Value, Value>>
mlir::lstm::matchZeroFilledMatmul(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInputs() != 2 ||
      linalgOp.getNumDpsInits() != 1 || !linalgOp.hasPureTensorSemantics() ||
      !linalg::isaContractionOpInterface(linalgOp))
    return std::nullopt;
  MLIRContext *ctx = op->getContext();
  AffineExpr m, n, k;
  bindDims(ctx, m, n, k);
  SmallVector<AffineMap> expected = {AffineMap::get(3, 0, {m, k}, ctx),
                                     AffineMap::get(3, 0, {k, n}, ctx),
                                     AffineMap::get(3, 0, {m, n}, ctx)};
  if (linalgOp.getIndexingMapsArray() != expected ||
      linalgOp.getIteratorTypesArray() !=
          SmallVector<utils::IteratorType>{utils::IteratorType::parallel,
                                           utils::IteratorType::parallel,
                                           utils::IteratorType::reduction})
    return std::nullopt;
  if (!getZeroFill(linalgOp.getDpsInits().front()))
    return std::nullopt;
  return std::make_pair(linalgOp.getDpsInputs()[0], linalgOp.getDpsInputs()[1]);
}

linalg::FillOp mlir::lstm::getZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill || !matchPattern(fill.getInputs().front(), m_AnyZeroFloat()))
    return nullptr;
  return fill;
}
