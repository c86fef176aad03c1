//===- GenerateRuntimeChecks.cpp - Check dynamic extents at run time ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Verifiers compare static extents; dynamic ones (the batch size above all)
// only meet when the function is called. A function that slices per-layer
// states out of `%c0` with the batch of `%h0`, say, reads past the end of
// `%c0` when the caller passes a smaller one: a wrong answer, silently. This
// pass makes the generated code check, before each tensor op, what the op
// needs of its dynamic extents. It runs first in the lowering pipelines, so
// it sees the IR that every earlier pass (lstm-optimize) left.
//
// Upstream's RuntimeVerifiableOpInterface supplies the checks of the tensor
// and linalg ops that have one; this pass adds elementwise ops, concat and
// expand_shape, and words every message for the user: the op, its source
// location and the function argument it reads. Upstream's own pass
// (generate-runtime-verification) is not used: it prints the op in generic
// form with SSA names (%arg2) the user never wrote, and, placed later in the
// pipeline, would check every memref access of every loop.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/RuntimeChecks/RuntimeChecks.h"

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/RuntimeVerifiableOpInterface.h"
#include "llvm/Support/MathExtras.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_GENERATERUNTIMECHECKSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// "run-time check failed: OP at LOC: WHAT (operand #k is argument #i of
/// @f, declared at LOC; ...)".
static std::string message(func::FuncOp func, Operation *op,
                           const Twine &what) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "run-time check failed: " << op->getName() << " at "
     << lstm::describeLocation(op->getLoc()) << ": " << what;
  Block *entry = func.isExternal() ? nullptr : &func.getBody().front();
  StringRef separator = " (";
  for (auto [k, operand] : llvm::enumerate(op->getOperands())) {
    auto arg = dyn_cast<BlockArgument>(operand);
    if (!arg || arg.getOwner() != entry)
      continue;
    os << separator << "operand #" << k << " is argument #"
       << arg.getArgNumber() << " of @" << func.getSymName() << ", declared at "
       << lstm::describeLocation(arg.getLoc());
    separator = "; ";
  }
  if (separator == "; ")
    os << ")";
  return s;
}

/// Every tensor operand and result of an elementwise op has the extents of
/// the first (ElementwiseMappable: scalars may be mixed in).
static void checkElementwise(OpBuilder &b, func::FuncOp func, Operation *op) {
  SmallVector<std::pair<Value, std::string>> tensors;
  for (auto [k, v] : llvm::enumerate(op->getOperands()))
    if (isa<RankedTensorType>(v.getType()))
      tensors.push_back({v, "operand #" + std::to_string(k)});
  for (auto [k, v] : llvm::enumerate(op->getResults()))
    if (isa<RankedTensorType>(v.getType()))
      tensors.push_back({v, "result #" + std::to_string(k)});
  if (tensors.size() < 2)
    return;
  auto [first, firstName] = tensors.front();
  int64_t rank = cast<RankedTensorType>(first.getType()).getRank();
  for (auto &[v, name] : llvm::drop_begin(tensors)) {
    if (cast<RankedTensorType>(v.getType()).getRank() != rank)
      continue; // The verifier reports it.
    // A result's extents come from the operands; only operands can differ.
    if (isa<OpResult>(v) && v.getDefiningOp() == op)
      continue;
    for (int64_t d = 0; d < rank; ++d)
      lstm::assertSameExtent(
          b, op->getLoc(), v, d, first, d,
          message(func, op,
                  name + " has a different extent in dimension " + Twine(d) +
                      " than " + firstName),
          /*withLocation=*/false);
  }
}

/// The operands of a concat agree in every dimension but the concatenated
/// one.
static void checkConcat(OpBuilder &b, func::FuncOp func,
                        tensor::ConcatOp concat) {
  Value first = concat.getInputs().front();
  int64_t rank = concat.getRank();
  for (auto [k, v] : llvm::enumerate(concat.getInputs()))
    for (int64_t d = 0; d < rank; ++d)
      if (d != static_cast<int64_t>(concat.getDim()) && k != 0)
        lstm::assertSameExtent(b, concat.getLoc(), v, d, first, d,
                               message(func, concat,
                                       "operand #" + Twine(k) +
                                           " has a different extent in "
                                           "dimension " +
                                           Twine(d) + " than operand #0"));
}

/// The output shape of each group multiplies to the source's extent.
static void checkExpandShape(OpBuilder &b, func::FuncOp func,
                             tensor::ExpandShapeOp expand) {
  Location loc = expand.getLoc();
  RankedTensorType resultType = expand.getResultType();
  SmallVector<OpFoldResult> shape = expand.getMixedOutputShape();
  for (auto [d, group] : llvm::enumerate(expand.getReassociationIndices())) {
    if (llvm::none_of(group,
                      [&](int64_t i) { return resultType.isDynamicDim(i); }))
      continue; // Static: the verifier has compared them.
    Value product = arith::ConstantIndexOp::create(b, loc, 1);
    for (int64_t i : group)
      product = arith::MulIOp::create(
          b, loc, product, getValueOrCreateConstantIndexOp(b, loc, shape[i]));
    Value extent = tensor::DimOp::create(b, loc, expand.getSrc(), d);
    Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       product, extent);
    cf::AssertOp::create(
        b, loc, same,
        message(func, expand,
                "the output shape of group #" + Twine(d) +
                    " does not multiply to the source's extent"));
  }
}

/// The size in bytes of a tensor.empty with dynamic extents fits in 63 bits:
/// the buffer it becomes would otherwise be allocated with a size that
/// wrapped around (a small buffer that the code writes far past).
static void checkEmpty(OpBuilder &b, func::FuncOp func, tensor::EmptyOp empty) {
  if (empty.getDynamicSizes().empty())
    return;
  RankedTensorType type = empty.getType();
  int64_t bytes =
      std::max<int64_t>(1, llvm::divideCeil(type.getElementTypeBitWidth(), 8));
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d) && llvm::MulOverflow(bytes, d, bytes))
      return; // Statically too large: the verifiers of the ops report it.
  Location loc = empty.getLoc();
  Value total = arith::ConstantIndexOp::create(b, loc, bytes);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value ok = arith::ConstantIntOp::create(b, loc, 1, 1);
  for (Value size : empty.getDynamicSizes()) {
    auto product = arith::MulUIExtendedOp::create(b, loc, total, size);
    total = product.getLow();
    // No carry into the high word, and the low word a non-negative int64.
    Value noCarry = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          product.getHigh(), zero);
    Value fits =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, total, zero);
    ok = arith::AndIOp::create(b, loc, ok,
                               arith::AndIOp::create(b, loc, noCarry, fits));
  }
  cf::AssertOp::create(b, loc, ok,
                       message(func, empty,
                               "the tensor's size in bytes does not fit in "
                               "63 bits"));
}

/// A static offset of a slice that no tensor of the sliced type can hold:
/// the byte offset of its first element alone (the offset times the static
/// extents inside it) does not fit in 63 bits. The run-time check would stop
/// such a call, but the lowering computes that offset first, and it
/// overflows (a negative offset that upstream's verifiers reject): a
/// compile-time error naming the op instead.
static LogicalResult checkStaticOffsets(Operation *op,
                                        ArrayRef<int64_t> offsets,
                                        RankedTensorType whole) {
  int64_t inner =
      std::max<int64_t>(1, llvm::divideCeil(whole.getElementTypeBitWidth(), 8));
  for (int64_t d = whole.getRank() - 1; d >= 0; --d) {
    int64_t offset = offsets[d], bytes = 0;
    if (!ShapedType::isDynamic(offset) && offset > 0 &&
        llvm::MulOverflow(offset, inner, bytes))
      return op->emitOpError("offset ")
             << offset << " in dimension " << d << " is out of bounds of any "
             << whole << ": its byte offset does not fit in 63 bits";
    if (!whole.isDynamicDim(d) &&
        llvm::MulOverflow(inner, whole.getDimSize(d), inner))
      return success(); // The type itself is too large: its verifier says so.
  }
  return success();
}

struct GenerateRuntimeChecksPass
    : lstm::impl::GenerateRuntimeChecksPassBase<GenerateRuntimeChecksPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<Operation *> ops;
    func.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (op == func.getOperation())
        return WalkResult::advance();
      ops.push_back(op);
      // A kernel's accesses are the business of the pass that built it
      // (lstm-to-persistent); a check there would be a branch and a call
      // to the device's assertion handler at every access.
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      return WalkResult::advance();
    });
    OpBuilder b(&getContext());
    for (Operation *op : ops) {
      LogicalResult offsets = success();
      if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op))
        offsets = checkStaticOffsets(op, extract.getStaticOffsets(),
                                     extract.getSourceType());
      else if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
        offsets = checkStaticOffsets(op, insert.getStaticOffsets(),
                                     insert.getDestType());
      if (failed(offsets))
        return signalPassFailure();
      b.setInsertionPoint(op);
      if (auto verifiable = dyn_cast<RuntimeVerifiableOpInterface>(op))
        verifiable.generateRuntimeVerification(
            b, op->getLoc(), [&](Operation *o, StringRef what) {
              return message(func, o, what);
            });
      if (op->hasTrait<OpTrait::Elementwise>())
        checkElementwise(b, func, op);
      else if (auto concat = dyn_cast<tensor::ConcatOp>(op))
        checkConcat(b, func, concat);
      else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
        checkExpandShape(b, func, expand);
      else if (auto empty = dyn_cast<tensor::EmptyOp>(op))
        checkEmpty(b, func, empty);
    }
  }
};

} // namespace
