//===- TF32.cpp - Rounding fp32 values to TF32 ----------------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/Utils/TF32.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;

Value lstm::roundToTF32(OpBuilder &b, Location loc, Value value) {
  Value bits = arith::BitcastOp::create(b, loc, b.getI32Type(), value);
  Value half = arith::ConstantIntOp::create(b, loc, 1 << 12, 32);
  Value kept =
      arith::ConstantIntOp::create(b, loc, ~int64_t((1 << 13) - 1), 32);
  return arith::AndIOp::create(b, loc,
                               arith::AddIOp::create(b, loc, bits, half), kept);
}
