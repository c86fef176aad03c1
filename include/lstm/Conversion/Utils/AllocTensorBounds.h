//===- AllocTensorBounds.h - Extents of alloc_tensor ------------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Upstream's value-bounds analysis knows the extents of tensor.empty but
// not those of bufferization.alloc_tensor, which the layer lowering starts
// its sequences from; passes that compare a sequence's extents with the
// sizes it is sliced with (lstm-write-part-stacks-in-place) need them.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_ALLOCTENSORBOUNDS_H
#define LSTM_CONVERSION_UTILS_ALLOCTENSORBOUNDS_H

namespace mlir {
class DialectRegistry;

namespace lstm {

/// Attaches the ValueBoundsOpInterface to bufferization.alloc_tensor: each
/// extent is its size operand (or static extent), or the copied tensor's.
void registerAllocTensorValueBoundsExternalModel(DialectRegistry &registry);

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_UTILS_ALLOCTENSORBOUNDS_H
