//===- PointwiseOps.cpp - The lstm.pointwise op's verifiers --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "OpVerification.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::op_verification;

//===----------------------------------------------------------------------===//
// PointwiseOp
//===----------------------------------------------------------------------===//

PointwiseYieldOp PointwiseOp::getYield() {
  return cast<PointwiseYieldOp>(getBody().front().getTerminator());
}

/// Whether `type` is a scalar that a pointwise region can compute with.
static bool isScalar(Type type) {
  return isa<IntegerType, FloatType, IndexType>(type);
}

/// Prints a shape as "[2, ?, 8]".
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + extent(d);
  return s + "]";
}

LogicalResult PointwiseOp::verify() {
  if (getResults().empty())
    return emitOpError("needs at least one result");
  if (failed(verifySizes(*this)))
    return failure();
  // The iteration space is [B, N], or [L, B, N] for the batched cell of a
  // wavefront; operands without the batch extent are broadcast along it.
  int64_t rank = cast<RankedTensorType>(getResult(0).getType()).getRank();
  int64_t batchDim = rank - 2;
  // The common shape, refined by every static extent seen so far.
  SmallVector<int64_t> common(rank, ShapedType::kDynamic);
  bool hasFull = false;
  auto check = [&](RankedTensorType type, StringRef what,
                   unsigned index) -> LogicalResult {
    if (!isScalar(type.getElementType()))
      return emitOpError() << what << " #" << index << " of type " << type
                           << " must have an integer, index or float element "
                              "type";
    // The positions in the common shape of the type's dimensions.
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (type.getRank() == rank || d != batchDim)
        dims.push_back(d);
    if (type.getRank() != static_cast<int64_t>(dims.size()))
      return emitOpError() << what << " #" << index << " of type " << type
                           << " must have rank " << rank << " or " << rank - 1
                           << " (the results' rank " << rank
                           << ", without the batch extent)";
    for (auto [i, d] : llvm::enumerate(dims)) {
      if (compatible(type.getDimSize(i), common[d]))
        continue;
      if (type.getRank() == rank)
        return emitOpError()
               << what << " #" << index << " of type " << type
               << " does not match the common shape " << shapeString(common);
      return emitOpError() << what << " #" << index << " of type " << type
                           << " must have the common shape "
                           << shapeString(common)
                           << " without its batch extent";
    }
    for (auto [i, d] : llvm::enumerate(dims))
      if (ShapedType::isDynamic(common[d]))
        common[d] = type.getDimSize(i);
    return success();
  };
  // Full-rank values first, so that a broadcast operand is compared with
  // the established extents.
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() == rank) {
      hasFull = true;
      if (failed(check(type, "operand", i)))
        return failure();
    }
  }
  for (auto [i, v] : llvm::enumerate(getResults()))
    if (failed(check(cast<RankedTensorType>(v.getType()), "result", i)))
      return failure();
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() != rank && failed(check(type, "operand", i)))
      return failure();
  }
  if (!hasFull)
    return emitOpError("needs at least one operand of the results' rank (the "
                       "batch extent comes from it)");
  for (Value v : llvm::concat<Value>(getInputs(), getResults())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (failed(verifyFeatures(*this, v, {type.getRank() - 1},
                              "a value of the region's iteration space")))
      return failure();
  }
  return success();
}

LogicalResult PointwiseOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("region takes ")
           << body.getNumArguments() << " arguments, expected one per operand ("
           << getInputs().size() << ")";
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(body.getArgumentTypes(), getInputs().getTypes()))) {
    Type expected = getElementTypeOrSelf(std::get<1>(pair));
    if (std::get<0>(pair) != expected)
      return emitOpError("region argument #")
             << i << " has type " << std::get<0>(pair) << ", expected "
             << expected << " (the element type of operand #" << i << ")";
  }
  auto yield = dyn_cast<PointwiseYieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("region must end with lstm.pointwise_yield");
  if (yield.getValues().size() != getResults().size())
    return yield.emitOpError("yields ")
           << yield.getValues().size() << " values but the op has "
           << getResults().size() << " results";
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(yield.getValues().getTypes(), getResults().getTypes()))) {
    Type expected = getElementTypeOrSelf(std::get<1>(pair));
    if (std::get<0>(pair) != expected)
      return yield.emitOpError("value #")
             << i << " has type " << std::get<0>(pair) << ", expected "
             << expected << " (the element type of result #" << i << ")";
  }
  for (Operation &op : body.without_terminator()) {
    // The region runs once per element, in any order and possibly in
    // parallel: only pure scalar computations are meaningful there.
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return op.emitOpError("is not allowed in an lstm.pointwise region: "
                            "only side-effect-free scalar ops are");
    for (Type type :
         llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()))
      if (!isScalar(type))
        return op.emitOpError("computes on ")
               << type
               << " in an lstm.pointwise region, which takes only "
                  "scalars";
  }
  return success();
}
