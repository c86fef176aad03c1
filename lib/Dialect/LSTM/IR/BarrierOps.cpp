//===- BarrierOps.cpp - The GPU ops of persistent kernels -----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Matchers.h"

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

LogicalResult WarpBarrierOp::verify() { return verifyInsideKernel(*this); }

LogicalResult WarpsBarrierOp::verify() {
  if (failed(verifyInsideKernel(*this)))
    return failure();
  // Barrier 0 is the whole block's; PTX has 16.
  APInt id;
  if (matchPattern(getId(), m_ConstantInt(&id)) &&
      (id.getSExtValue() < 1 || id.getSExtValue() > 15))
    return emitOpError("id must be 1 to 15 (0 is the block's barrier), got ")
           << id.getSExtValue();
  return success();
}

LogicalResult WarpMmaOp::verify() {
  if (failed(verifyInsideKernel(*this)))
    return failure();
  if (getA().size() != 4 || getB().size() != 2 || getC().size() != 4)
    return emitOpError("takes 4 registers of A, 2 of B and 4 accumulators, "
                       "got ")
           << getA().size() << ", " << getB().size() << " and "
           << getC().size();
  return success();
}
