//===- ReadOnlyArguments.cpp - Callers own the arguments ------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Compiled networks are called on the caller's arrays (numpy, PyTorch and
// CuPy tensors, .npy files): writing them would change the caller's data.
// One-shot bufferization takes function arguments as writable unless told
// otherwise, so this tells it.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ReadOnlyArguments/ReadOnlyArguments.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_READONLYARGUMENTSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {
struct ReadOnlyArgumentsPass
    : lstm::impl::ReadOnlyArgumentsPassBase<ReadOnlyArgumentsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (!func.isPublic() || func.isExternal())
      return;
    auto readOnly = BoolAttr::get(&getContext(), false);
    for (BlockArgument arg : func.getArguments())
      if (isa<TensorType>(arg.getType()))
        func.setArgAttr(arg.getArgNumber(),
                        bufferization::BufferizationDialect::kWritableAttrName,
                        readOnly);
  }
};
} // namespace
