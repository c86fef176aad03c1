//===- DispatchParallelBodies.cpp - Parallel bodies through the runtime ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The second half of lstm-outline-parallel-loops: its calls of a loop body
// on a whole range become calls of the CPU runtime's parallel-for, which
// calls back a task function on parts of the range from its threads. The
// task takes (context, lo, hi); the context is the body's other arguments,
// stored by the caller in a stack slot of its own: at this level a buffer
// is its descriptor's fields, which can be stored like any value.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ParallelLoopsToCpuThreads/ParallelLoopsToCpuThreads.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_DISPATCHPARALLELBODIESPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The runtime's entry (lstm/Runtime/CpuRuntime.h).
constexpr StringLiteral kParallelForName = "lstmRuntimeCpuParallelFor";

/// The number of leading arguments of a body that are not passed through
/// the context: the range.
constexpr unsigned kRangeArgs = 2;

/// `value` as an i64 (index lowers to the target's pointer width).
Value toI64(OpBuilder &b, Location loc, Value value) {
  auto type = cast<IntegerType>(value.getType());
  Type i64 = b.getI64Type();
  if (type.getWidth() == 64)
    return value;
  if (type.getWidth() < 64)
    return LLVM::SExtOp::create(b, loc, i64, value);
  return LLVM::TruncOp::create(b, loc, i64, value);
}

/// `value` (an i64) as `type`.
Value fromI64(OpBuilder &b, Location loc, Value value, Type type) {
  unsigned width = cast<IntegerType>(type).getWidth();
  if (width == 64)
    return value;
  if (width < 64)
    return LLVM::TruncOp::create(b, loc, type, value);
  return LLVM::SExtOp::create(b, loc, type, value);
}

struct DispatchParallelBodiesPass
    : lstm::impl::DispatchParallelBodiesPassBase<DispatchParallelBodiesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<LLVM::LLVMFuncOp> bodies;
    for (auto fn : module.getOps<LLVM::LLVMFuncOp>())
      if (fn->hasAttr(lstm::kParallelBodyAttrName))
        bodies.push_back(fn);
    if (bodies.empty())
      return;

    // Every call of a body, by body.
    DenseMap<StringAttr, SmallVector<LLVM::CallOp>> calls;
    module.walk([&](LLVM::CallOp call) {
      if (FlatSymbolRefAttr callee = call.getCalleeAttr())
        calls[callee.getAttr()].push_back(call);
    });

    SymbolTable symbols(module);
    for (LLVM::LLVMFuncOp body : bodies) {
      body->removeAttr(lstm::kParallelBodyAttrName);
      LLVM::LLVMFunctionType type = body.getFunctionType();
      if (type.getNumParams() < kRangeArgs + 1 ||
          !llvm::all_of(type.getParams().take_front(kRangeArgs + 1),
                        llvm::IsaPred<IntegerType>) ||
          !isa<LLVM::LLVMVoidType>(type.getReturnType())) {
        body.emitError() << "lstm-dispatch-parallel-bodies: a parallel body "
                            "takes (lo, hi, work, ...) integers and returns "
                            "nothing, got "
                         << type;
        return signalPassFailure();
      }
      auto bodyCalls = calls.lookup(body.getSymNameAttr());
      if (bodyCalls.empty())
        continue;
      // The context: the arguments after the range, in order.
      auto context = LLVM::LLVMStructType::getLiteral(
          &getContext(), type.getParams().drop_front(kRangeArgs));
      LLVM::LLVMFuncOp task = buildTask(body, context, symbols);
      for (LLVM::CallOp call : bodyCalls)
        dispatch(call, task, context, parallelFor(module));
    }
  }

  /// The declaration of the runtime's parallel-for, made once.
  LLVM::LLVMFuncOp parallelFor(ModuleOp module) {
    if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(kParallelForName))
      return fn;
    MLIRContext *ctx = &getContext();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            {ptr, ptr, i64, i64, i64});
    OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
    return LLVM::LLVMFuncOp::create(b, module.getLoc(), kParallelForName, type);
  }

  /// @<body>_task(%context, %lo, %hi): reads the body's other arguments
  /// from the context and calls it on [lo, hi).
  LLVM::LLVMFuncOp buildTask(LLVM::LLVMFuncOp body,
                             LLVM::LLVMStructType context,
                             SymbolTable &symbols) {
    MLIRContext *ctx = &getContext();
    Location loc = body.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = IntegerType::get(ctx, 64);
    auto type = LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(ctx),
                                            {ptr, i64, i64});
    OpBuilder b(ctx);
    auto task =
        LLVM::LLVMFuncOp::create(b, loc, (body.getName() + "_task").str(), type,
                                 LLVM::Linkage::Internal);
    symbols.insert(task, std::next(Block::iterator(body)));
    Block *entry = task.addEntryBlock(b);
    b.setInsertionPointToStart(entry);
    ArrayRef<Type> params = body.getFunctionType().getParams();
    SmallVector<Value> args = {
        fromI64(b, loc, entry->getArgument(1), params[0]),
        fromI64(b, loc, entry->getArgument(2), params[1])};
    for (auto [k, fieldType] : llvm::enumerate(context.getBody())) {
      Value field = LLVM::GEPOp::create(
          b, loc, ptr, context, entry->getArgument(0),
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(k)});
      args.push_back(LLVM::LoadOp::create(b, loc, fieldType, field));
    }
    LLVM::CallOp::create(b, loc, body, args);
    LLVM::ReturnOp::create(b, loc, ValueRange());
    return task;
  }

  /// Replaces `call` (of a body, on [lo, hi)) with the runtime's
  /// parallel-for of `task`.
  void dispatch(LLVM::CallOp call, LLVM::LLVMFuncOp task,
                LLVM::LLVMStructType context, LLVM::LLVMFuncOp parallelFor) {
    MLIRContext *ctx = &getContext();
    Location loc = call.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    // The slot in the caller's entry block: a call in a loop reuses it.
    auto caller = call->getParentOfType<LLVM::LLVMFuncOp>();
    OpBuilder b = OpBuilder::atBlockBegin(&caller.getBody().front());
    Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(),
                                         b.getI64IntegerAttr(1));
    Value slot = LLVM::AllocaOp::create(b, loc, ptr, context, one);

    b.setInsertionPoint(call);
    ValueRange operands = call.getArgOperands();
    for (auto [k, value] : llvm::enumerate(operands.drop_front(kRangeArgs))) {
      Value field = LLVM::GEPOp::create(
          b, loc, ptr, context, slot,
          ArrayRef<LLVM::GEPArg>{0, static_cast<int32_t>(k)});
      LLVM::StoreOp::create(b, loc, value, field);
    }
    Value taskAddress = LLVM::AddressOfOp::create(b, loc, task);
    LLVM::CallOp::create(b, loc, parallelFor,
                         ValueRange{taskAddress, slot,
                                    toI64(b, loc, operands[0]),
                                    toI64(b, loc, operands[1]),
                                    toI64(b, loc, operands[kRangeArgs])});
    call.erase();
  }
};

} // namespace
