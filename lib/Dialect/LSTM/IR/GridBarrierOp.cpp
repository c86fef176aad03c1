//===- GridBarrierOp.cpp - The grid-wide barrier of persistent kernels ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::lstm;

LogicalResult GridBarrierOp::verify() {
  // Outside a kernel there is no grid to wait for.
  if (!(*this)->getParentOfType<gpu::LaunchOp>() &&
      !(*this)->getParentOfType<gpu::GPUFuncOp>())
    return emitOpError("must be inside a GPU kernel (gpu.launch or "
                       "gpu.func)");
  auto type = cast<MemRefType>(getCounter().getType());
  if (type.getRank() != 1 || type.getDimSize(0) != 1)
    return emitOpError("counter must be memref<1xi32>, got ") << type;
  return success();
}
