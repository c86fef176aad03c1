//===- PersistentMmaOperands.cpp - Operands of the tensor-core products ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The conversions of fp32 values into the operands of the persistent
// kernels' mma.sync instructions: TF32 rounded to nearest, pairs of bf16,
// and 3xTF32's split of a value into big and small TF32 parts.
//
//===----------------------------------------------------------------------===//

#include "PersistentMmaOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <string>

using namespace mlir;
using namespace mlir::lstm;

/// The low 13 bits of an fp32 value's bits: what TF32 does not keep.
static constexpr int64_t kTF32DroppedBits = (1 << 13) - 1;

/// `bits` (an fp32 value's, as i32) split in two TF32 operands, big + small
/// (3xTF32): big its bits truncated to TF32, small the rest, exact in fp32
/// (the dropped bits), whose own low 13 bits the instruction drops or
/// rounds, an error of at most 2^-11 of small, 2^-22 of the value. Two
/// instructions a register, where a rounding to nearest of each would take
/// five.
std::pair<Value, Value> persistent::splitTF32Bits(OpBuilder &b, Location loc,
                                                  Value bits, Value mask) {
  Type f32 = b.getF32Type();
  Value big = arith::AndIOp::create(b, loc, bits, mask);
  Value small =
      arith::SubFOp::create(b, loc, arith::BitcastOp::create(b, loc, f32, bits),
                            arith::BitcastOp::create(b, loc, f32, big));
  return {big, arith::BitcastOp::create(b, loc, b.getI32Type(), small)};
}

/// The mask of TF32's bits, made where it is used by an instruction that
/// has side effects as far as LLVM knows (a PTX `mov` of the constant), so
/// that LLVM does not hoist the weights' splits, which depend on it, out
/// of the time loop: that would keep both halves of every weight in
/// registers for the whole sequence (deepbench's layer, H = 1024: 316
/// bytes of spills, ptxas -v) where the split at each use keeps one.
Value persistent::opaqueTF32Mask(OpBuilder &b, Location loc) {
  return LLVM::InlineAsmOp::create(
             b, loc, b.getI32Type(), ValueRange(),
             "mov.b32 $0, " + std::to_string(~kTF32DroppedBits) + ";", "=r",
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             /*asm_dialect=*/LLVM::AsmDialectAttr(),
             /*operand_attrs=*/ArrayAttr())
      .getResult(0);
}

/// `low` and `high` rounded to bf16 (to nearest, ties to even) as one i32,
/// `low` in its lower half: an mma.sync bf16 operand.
Value persistent::roundToBF16Pair(OpBuilder &b, Location loc, Value low,
                                  Value high) {
  Value pair = vector::FromElementsOp::create(
      b, loc, VectorType::get({2}, b.getF32Type()), ValueRange{low, high});
  Value rounded = arith::TruncFOp::create(
      b, loc, VectorType::get({2}, b.getBF16Type()), pair);
  Value word = vector::BitCastOp::create(
      b, loc, VectorType::get({1}, b.getI32Type()), rounded);
  return vector::ExtractOp::create(b, loc, word, 0);
}
