//===- UndefinedRoots.cpp - Where a tensor was built from nothing ---------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/Utils/UndefinedRoots.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

bool lstm::isUndefinedTensor(Value v) {
  if (v.getDefiningOp<tensor::EmptyOp>())
    return true;
  auto alloc = v.getDefiningOp<bufferization::AllocTensorOp>();
  return alloc && !alloc.getCopy() && !alloc.getMemorySpace();
}

OpOperand *lstm::getUndefinedRoot(Value v, bool singleUse) {
  OpOperand *root = nullptr;
  while (!isUndefinedTensor(v)) {
    auto result = dyn_cast<OpResult>(v);
    if (!result || (singleUse && root && !v.hasOneUse()))
      return nullptr;
    Operation *op = result.getOwner();
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      root = &insert.getDestMutable();
    } else if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      OpOperand *init = linalgOp.getDpsInitOperand(result.getResultNumber());
      if (linalgOp.payloadUsesValueFromOperand(init))
        return nullptr;
      root = init;
    } else {
      return nullptr;
    }
    v = root->get();
  }
  return root;
}
