//===- PersistentMmaOperands.h - Operands of the tensor-core products -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTMMAOPERANDS_H
#define LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTMMAOPERANDS_H

#include "mlir/IR/Builders.h"

#include <utility>

namespace mlir::lstm::persistent {

/// `low` and `high` (f32) rounded to bf16 (to nearest, ties to even) as one
/// i32, `low` in its lower half: an mma.sync bf16 operand.
Value roundToBF16Pair(OpBuilder &b, Location loc, Value low, Value high);

/// `bits` (an fp32 value's, as i32) split into two TF32 operands, big +
/// small (3xTF32), big being `bits` and `mask` (opaqueTF32Mask).
std::pair<Value, Value> splitTF32Bits(OpBuilder &b, Location loc, Value bits,
                                      Value mask);

/// The mask of the bits TF32 keeps, from an instruction LLVM may not hoist.
Value opaqueTF32Mask(OpBuilder &b, Location loc);

} // namespace mlir::lstm::persistent

#endif // LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTMMAOPERANDS_H
