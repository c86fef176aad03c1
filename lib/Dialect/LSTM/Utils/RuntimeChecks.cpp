//===- RuntimeChecks.cpp - Run-time checks that generated code makes ------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Location.h"

using namespace mlir;

std::string mlir::lstm::describeLocation(Location loc) {
  std::string s;
  llvm::raw_string_ostream os(s);
  FileLineColLoc file;
  NameLoc name;
  loc->walk([&](Location inner) {
    if (auto n = dyn_cast<NameLoc>(inner); n && !name)
      name = n;
    if (auto f = dyn_cast<FileLineColLoc>(inner)) {
      file = f;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (file)
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  // A front end's name for where the op came from (lstmc: "layer 0
  // (forward) of forward at train.py:12"), as it wrote it.
  else if (name)
    os << name.getName().getValue();
  else
    os << loc;
  return s;
}

void mlir::lstm::assertSameExtent(OpBuilder &b, Location loc, Value x,
                                  int64_t dx, Value y, int64_t dy,
                                  const Twine &what, bool withLocation) {
  auto tx = cast<RankedTensorType>(x.getType());
  auto ty = cast<RankedTensorType>(y.getType());
  if ((!tx.isDynamicDim(dx) && !ty.isDynamicDim(dy)) || (x == y && dx == dy))
    return;
  Value ex = tensor::DimOp::create(b, loc, x, dx);
  Value ey = tensor::DimOp::create(b, loc, y, dy);
  Value same = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, ex, ey);
  cf::AssertOp::create(
      b, loc, same,
      withLocation ? (what + " (at " + describeLocation(loc) + ")").str()
                   : what.str());
}

void mlir::lstm::assertLayerExtents(OpBuilder &b, LayerOp layer) {
  Location loc = layer.getLoc();
  Value seq0 = layer.getInputs().front();
  for (auto [i, seq] : llvm::enumerate(layer.getInputs())) {
    assertSameExtent(b, loc, seq, 0, seq0, 0,
                     "lstm.layer: input #" + Twine(i) +
                         " has a different sequence length than input #0");
    assertSameExtent(b, loc, seq, 1, seq0, 1,
                     "lstm.layer: input #" + Twine(i) +
                         " has a different batch size than input #0");
  }
  for (auto [i, init] : llvm::enumerate(layer.getInits()))
    assertSameExtent(b, loc, init, 0, seq0, 1,
                     "lstm.layer: initial state #" + Twine(i) +
                         " has a different batch size than the input");
  if (Value lengths = layer.getLengths())
    assertSameExtent(b, loc, lengths, 0, seq0, 1,
                     "lstm.layer: lengths has a different size than the "
                     "batch");
}
