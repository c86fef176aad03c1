//===- OpVerification.cpp - Checks shared by the lstm ops' verifiers -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::lstm;

bool op_verification::compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

std::string op_verification::extent(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// Every tensor of an lstm op has a size in bytes that fits in 63 bits (as
/// far as its static extents tell): the lowerings compute the offsets and
/// strides of its buffer in 64-bit integers, which would wrap around.
static LogicalResult verifySize(Operation *op, Value v, const Twine &what) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return success();
  unsigned bits = type.getElementType().isIntOrIndexOrFloat()
                      ? type.getElementType().getIntOrFloatBitWidth()
                      : 8;
  int64_t bytes = std::max<int64_t>(1, llvm::divideCeil(bits, 8));
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d) && llvm::MulOverflow(bytes, d, bytes))
      return op->emitOpError()
             << what << " of type " << type
             << " is larger than 2^63 bytes, more than any buffer can be";
  return success();
}

LogicalResult op_verification::verifyFeatures(Operation *op, Value v,
                                              ArrayRef<int64_t> dims,
                                              const Twine &what) {
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d : dims)
    if (d < type.getRank() && type.getDimSize(d) == 0)
      return op->emitOpError()
             << what << " of type " << type << " has no features: its extent "
             << d
             << " is 0 (only the sequence length, the batch and the group "
                "extent may be 0)";
  return success();
}

LogicalResult op_verification::verifySizes(Operation *op) {
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (failed(verifySize(op, v, "operand #" + Twine(i))))
      return failure();
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    if (failed(verifySize(op, v, "result #" + Twine(i))))
      return failure();
  return success();
}
