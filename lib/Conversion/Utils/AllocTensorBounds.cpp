//===- AllocTensorBounds.cpp - Extents of bufferization.alloc_tensor ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/Utils/AllocTensorBounds.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"

using namespace mlir;

namespace {

struct AllocTensorOpBounds
    : public ValueBoundsOpInterface::ExternalModel<
          AllocTensorOpBounds, bufferization::AllocTensorOp> {
  void populateBoundsForShapedValueDim(Operation *op, Value value, int64_t dim,
                                       ValueBoundsConstraintSet &cstr) const {
    auto alloc = cast<bufferization::AllocTensorOp>(op);
    if (Value copy = alloc.getCopy()) {
      cstr.bound(value)[dim] == cstr.getExpr(copy, dim);
      return;
    }
    RankedTensorType type = alloc.getType();
    if (!type.isDynamicDim(dim)) {
      cstr.bound(value)[dim] == type.getDimSize(dim);
      return;
    }
    cstr.bound(value)[dim] ==
        alloc.getDynamicSizes()[type.getDynamicDimIndex(dim)];
  }
};

} // namespace

void lstm::registerAllocTensorValueBoundsExternalModel(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx,
                            bufferization::BufferizationDialect *) {
    bufferization::AllocTensorOp::attachInterface<AllocTensorOpBounds>(*ctx);
  });
}
