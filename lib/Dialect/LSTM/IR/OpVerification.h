//===- OpVerification.h - Checks shared by the lstm ops' verifiers -*- C++
//-*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The extents and sizes that every lstm op's verifier checks alike
// (LSTMOps.cpp's layer, GateOps.cpp, PointwiseOps.cpp). Private to the
// dialect's IR library.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_DIALECT_LSTM_IR_OPVERIFICATION_H
#define LSTM_DIALECT_LSTM_IR_OPVERIFICATION_H

#include "mlir/IR/Operation.h"

#include <string>

namespace mlir::lstm::op_verification {

/// Two extents agree when they are equal or when either is dynamic.
bool compatible(int64_t a, int64_t b);

/// Prints an extent the way it appears in a tensor type.
std::string extent(int64_t d);

/// Feature extents (the K of an input, the H of a weight, the N of an
/// output) are at least 1: only the sequence length, the batch and the
/// group extent may be 0. A layer of zero features computes nothing, and
/// the slices that the passes take of its features (at offset 0 of an
/// empty dimension) are IR that upstream's verifiers reject.
LogicalResult verifyFeatures(Operation *op, Value v, ArrayRef<int64_t> dims,
                             const Twine &what);

/// Every tensor of an lstm op has a size in bytes that fits in 63 bits (as
/// far as its static extents tell): the lowerings compute the offsets and
/// strides of its buffer in 64-bit integers, which would wrap around.
/// Checked for every operand and result of `op`.
LogicalResult verifySizes(Operation *op);

} // namespace mlir::lstm::op_verification

#endif // LSTM_DIALECT_LSTM_IR_OPVERIFICATION_H
