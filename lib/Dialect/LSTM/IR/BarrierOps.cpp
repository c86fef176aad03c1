//===- BarrierOps.cpp - The barriers of persistent kernels ----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;
using namespace mlir::lstm;

/// Outside a kernel there is no grid or block to wait for.
static LogicalResult verifyInsideKernel(Operation *op) {
  if (!op->getParentOfType<gpu::LaunchOp>() &&
      !op->getParentOfType<gpu::GPUFuncOp>())
    return op->emitOpError("must be inside a GPU kernel (gpu.launch or "
                           "gpu.func)");
  return success();
}

LogicalResult BlockBarrierOp::verify() { return verifyInsideKernel(*this); }

LogicalResult GridBarrierOp::verify() {
  if (failed(verifyInsideKernel(*this)))
    return failure();
  auto type = cast<MemRefType>(getCounter().getType());
  if (type.getRank() != 1 || type.getDimSize(0) != 1)
    return emitOpError("counter must be memref<1xi32>, got ") << type;
  return success();
}
