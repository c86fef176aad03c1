//===- LoweringUtils.cpp - Helpers shared by the lstm lowerings -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "LoweringUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

SmallVector<Value>
mlir::lstm::detail::dynamicSizes(OpBuilder &b, Location loc,
                                 RankedTensorType type,
                                 ArrayRef<std::pair<Value, int64_t>> from) {
  SmallVector<Value> sizes;
  for (int64_t i = 0, e = type.getRank(); i < e; ++i)
    if (type.isDynamicDim(i))
      sizes.push_back(
          tensor::DimOp::create(b, loc, from[i].first, from[i].second));
  return sizes;
}
