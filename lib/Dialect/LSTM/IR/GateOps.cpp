//===- GateOps.cpp - The lstm.gate op's verifier -------------------------===//
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
// GateOp
//===----------------------------------------------------------------------===//

namespace {
/// The extents of a gate's result that its operands must agree with. The
/// batched form puts a group extent L in front of every operand; `lead` is
/// the number of such leading extents (0 or 1), so that the per-gate extents
/// are read at the same positions in both forms.
struct GateExtents {
  RankedTensorType result;
  int64_t lead, groups, batch, hidden;

  explicit GateExtents(GateOp op)
      : result(cast<RankedTensorType>(op.getResult().getType())),
        lead(result.getRank() - 2), groups(lead ? result.getDimSize(0) : 1),
        batch(result.getDimSize(lead)), hidden(result.getDimSize(lead + 1)) {}
};
} // namespace

/// `type` as a diagnostic prints a type argument: in single quotes.
static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream(s) << "'" << type << "'";
  return s;
}

/// Checks extent `lead + i` of `type` against `expected[i]` (a dynamic
/// expected extent accepts any); on a mismatch, emits "`what` of type
/// `type` `requirement`" at `op`.
static LogicalResult verifyExtents(GateOp op, int64_t lead, const Twine &what,
                                   Type type, ArrayRef<int64_t> expected,
                                   const Twine &requirement) {
  auto t = cast<RankedTensorType>(type);
  for (auto [i, e] : llvm::enumerate(expected))
    if (!compatible(t.getDimSize(lead + i), e))
      return op.emitOpError() << what << " of type " << t << " " << requirement;
  return success();
}

/// The operand lists, element types and ranks of `op`: every operand is of
/// the result's form, [L, ...] operands with a batched result, plain ones
/// otherwise, with L compatible with the result's.
static LogicalResult verifyGateOperands(GateOp op, const GateExtents &ext) {
  if (op.getInputs().empty() && op.getAddends().empty() && !op.getPeephole())
    return op.emitOpError(
        "needs at least one (input, weight) pair, addend or peephole");
  if (op.getInputs().size() != op.getWeights().size())
    return op.emitOpError("has ") << op.getInputs().size() << " inputs but "
                                  << op.getWeights().size() << " weights";
  if (static_cast<bool>(op.getPeephole()) !=
      static_cast<bool>(op.getPeepholeState()))
    return op.emitOpError(
        "needs both a peephole weight and the state it reads");
  if (failed(verifySizes(op)))
    return failure();

  Type elementType = ext.result.getElementType();
  for (Value v : op->getOperands())
    if (getElementTypeOrSelf(v.getType()) != elementType)
      return op.emitOpError("operand of type ")
             << v.getType() << " does not have the result's element type "
             << elementType;

  auto isVector = [&](Value v) {
    return llvm::is_contained(op.getBiases(), v) || v == op.getPeephole();
  };
  for (Value v : op->getOperands()) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t expected = isVector(v) ? ext.lead + 1 : ext.lead + 2;
    if (t.getRank() != expected)
      return op.emitOpError("operand of type ")
             << t << " must have rank " << expected << " like the "
             << (ext.lead ? "batched" : "unbatched") << " result "
             << ext.result;
    if (ext.lead && !compatible(t.getDimSize(0), ext.groups))
      return op.emitOpError("operand of type ")
             << t << " must have " << extent(ext.groups)
             << " groups (the result's leading extent)";
  }
  return success();
}

/// The feature extents of `op`'s result and operands (verifyFeatures), once
/// their ranks are known right.
static LogicalResult verifyGateFeatures(GateOp op, const GateExtents &ext) {
  auto features = [&](Value v, ArrayRef<int64_t> dims, const Twine &what) {
    SmallVector<int64_t> shifted;
    for (int64_t d : dims)
      shifted.push_back(d + ext.lead);
    return verifyFeatures(op, v, shifted, what);
  };
  if (failed(features(op.getResult(), {1}, "the result")))
    return failure();
  for (auto [k, v] : llvm::enumerate(op.getInputs()))
    if (failed(features(v, {1}, "input #" + Twine(k))))
      return failure();
  for (auto [k, v] : llvm::enumerate(op.getWeights()))
    if (failed(features(v, {0, 1}, "weight #" + Twine(k))))
      return failure();
  for (auto [a, v] : llvm::enumerate(op.getAddends()))
    if (failed(features(v, {1}, "addend #" + Twine(a))))
      return failure();
  for (auto [j, v] : llvm::enumerate(op.getBiases()))
    if (failed(features(v, {0}, "bias #" + Twine(j))))
      return failure();
  if (Value p = op.getPeephole())
    if (failed(features(p, {0}, "the peephole weight")) ||
        failed(features(op.getPeepholeState(), {1}, "the peephole state")))
      return failure();
  return success();
}

/// The extents of `op`'s operands against the result's batch and hidden
/// size, and each weight's columns against its input's features.
static LogicalResult verifyGateExtents(GateOp op, const GateExtents &ext) {
  int64_t lead = ext.lead, batch = ext.batch, hidden = ext.hidden;
  std::string resultShape =
      "must have the result's shape " + typeString(ext.result);
  for (auto [k, pair] : llvm::enumerate(
           llvm::zip(op.getInputs().getTypes(), op.getWeights().getTypes()))) {
    auto [in, w] = pair;
    int64_t columns = cast<RankedTensorType>(in).getDimSize(lead + 1);
    std::string input = ("input #" + Twine(k)).str();
    std::string weight = ("weight #" + Twine(k)).str();
    if (failed(verifyExtents(op, lead, input, in, {batch},
                             "does not have the result's batch size " +
                                 extent(batch))) ||
        failed(verifyExtents(op, lead, weight, w, {hidden},
                             "must have " + extent(hidden) +
                                 " rows (the result's hidden size)")) ||
        failed(verifyExtents(
            op, lead, weight, w, {ShapedType::kDynamic, columns},
            "must have " + extent(columns) + " columns to multiply " + input +
                " of type " + typeString(in))))
      return failure();
  }
  for (auto [a, type] : llvm::enumerate(op.getAddends().getTypes()))
    if (failed(verifyExtents(op, lead, "addend #" + Twine(a), type,
                             {batch, hidden}, resultShape)))
      return failure();
  for (auto [j, type] : llvm::enumerate(op.getBiases().getTypes()))
    if (failed(verifyExtents(op, lead, "bias #" + Twine(j), type, {hidden},
                             "must have " + extent(hidden) + " elements")))
      return failure();
  if (Value p = op.getPeephole())
    if (failed(verifyExtents(op, lead, "peephole weight", p.getType(), {hidden},
                             "must have " + extent(hidden) + " elements")) ||
        failed(verifyExtents(op, lead, "peephole state",
                             op.getPeepholeState().getType(), {batch, hidden},
                             resultShape)))
      return failure();
  return success();
}

LogicalResult GateOp::verify() {
  GateExtents ext(*this);
  if (failed(verifyGateOperands(*this, ext)) ||
      failed(verifyGateFeatures(*this, ext)))
    return failure();
  return verifyGateExtents(*this, ext);
}
