//===- SpecializeKernelArguments.cpp - What every launch passes -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A kernel outlined before bufferization takes its buffers with the fully
// dynamic layouts that `bufferization.to_buffer` gave them, and as
// arguments the host values that canonicalization had not folded yet. Left
// inline until after bufferization, the canonicalizer would have folded
// the buffers' casts and the constants into the kernel's body: static
// strides and extents, vector loads, constant trip counts. This pass does
// the same across the launch: it gives each argument the type that every
// launch casts its buffer from, moves into the kernel each constant that
// every launch passes, and makes one argument of two that every launch
// passes the same value (outlining makes one of a value the body uses
// twice; before bufferization two views of one buffer are two values).
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/SpecializeKernelArguments/SpecializeKernelArguments.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_SPECIALIZEKERNELARGUMENTSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The scalar constant that every operand of `operands` is, or null.
static arith::ConstantOp sameConstant(ArrayRef<Value> operands) {
  auto first = operands.front().getDefiningOp<arith::ConstantOp>();
  if (!first || !first.getType().isIntOrIndexOrFloat())
    return {};
  for (Value operand : operands.drop_front()) {
    auto constant = operand.getDefiningOp<arith::ConstantOp>();
    if (!constant || constant.getValue() != first.getValue())
      return {};
  }
  return first;
}

/// The type that every operand of `operands` is cast from (memref.cast
/// from a ranked memref), or null.
static MemRefType sameCastSource(ArrayRef<Value> operands) {
  MemRefType source;
  for (Value operand : operands) {
    auto cast = operand.getDefiningOp<memref::CastOp>();
    auto type =
        cast ? dyn_cast<MemRefType>(cast.getSource().getType()) : MemRefType();
    if (!type || (source && type != source))
      return {};
    source = type;
  }
  return source;
}

/// Specializes `kernel`'s arguments to what all of `launches` pass.
static void specialize(gpu::GPUFuncOp kernel,
                       ArrayRef<gpu::LaunchFuncOp> launches) {
  Block &entry = kernel.getBody().front();
  OpBuilder b = OpBuilder::atBlockBegin(&entry);
  unsigned count = kernel.getNumArguments();
  llvm::BitVector dropped(count);
  for (unsigned i = 0; i < count; ++i) {
    SmallVector<Value> operands = llvm::map_to_vector(
        launches, [&](gpu::LaunchFuncOp l) { return l.getKernelOperand(i); });
    BlockArgument arg = entry.getArgument(i);
    if (arith::ConstantOp constant = sameConstant(operands)) {
      arg.replaceAllUsesWith(b.clone(*constant)->getResult(0));
      dropped.set(i);
      continue;
    }
    MemRefType source = sameCastSource(operands);
    if (!source || source == arg.getType())
      continue;
    // The body keeps the type it was written for, through a cast that the
    // canonicalizer folds into the accesses.
    Type written = arg.getType();
    arg.setType(source);
    auto cast = memref::CastOp::create(b, kernel.getLoc(), written, arg);
    arg.replaceAllUsesExcept(cast, cast);
    for (gpu::LaunchFuncOp launch : launches)
      launch.getKernelOperandsMutable()[i].set(
          launch.getKernelOperand(i)
              .getDefiningOp<memref::CastOp>()
              .getSource());
  }
  // A value that every launch passes for two arguments (two views of one
  // buffer that bufferization made one): one argument, so that the kernel
  // knows them for the same memory.
  for (unsigned j = 0; j < count; ++j) {
    if (dropped.test(j))
      continue;
    for (unsigned i = 0; i < j; ++i) {
      if (dropped.test(i) ||
          entry.getArgument(i).getType() != entry.getArgument(j).getType())
        continue;
      if (llvm::any_of(launches, [&](gpu::LaunchFuncOp l) {
            return l.getKernelOperand(i) != l.getKernelOperand(j);
          }))
        continue;
      entry.getArgument(j).replaceAllUsesWith(entry.getArgument(i));
      dropped.set(j);
      break;
    }
  }
  for (int i = count - 1; i >= 0; --i)
    if (dropped.test(i))
      for (gpu::LaunchFuncOp launch : launches)
        launch.getKernelOperandsMutable().erase(i);
  if (failed(kernel.eraseArguments(dropped)))
    llvm_unreachable("gpu.func's arguments can be erased");
  // The entry block's arguments after the kernel's are its workgroup and
  // private attributions.
  kernel.setFunctionTypeAttr(TypeAttr::get(FunctionType::get(
      kernel.getContext(),
      TypeRange(entry.getArguments().take_front(kernel.getNumArguments())),
      TypeRange())));
}

struct SpecializeKernelArgumentsPass
    : lstm::impl::SpecializeKernelArgumentsPassBase<
          SpecializeKernelArgumentsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTableCollection symbols;
    llvm::MapVector<Operation *, SmallVector<gpu::LaunchFuncOp>> launches;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto kernel = symbols.lookupNearestSymbolFrom<gpu::GPUFuncOp>(
          launch, launch.getKernel());
      if (kernel && kernel.isKernel())
        launches[kernel].push_back(launch);
    });
    for (auto &[kernel, uses] : launches)
      specialize(cast<gpu::GPUFuncOp>(kernel), uses);
  }
};

} // namespace
