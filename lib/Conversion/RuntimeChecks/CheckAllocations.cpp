//===- CheckAllocations.cpp - Stop on a failed malloc in generated code ---===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// memref.alloc becomes a call to malloc (or aligned_alloc; on the CPU path,
// the CPU runtime's `_mlir_memref_to_llvm_alloc`, which falls back to
// malloc) whose result the generated code uses as it is: when the buffer is too
// large for the process (a sequence of 10^9 steps, say), malloc returns null
// and the code writes through it, a segmentation fault far from its cause. This
// pass, run on the LLVM dialect, follows every such call with a check that
// prints how many bytes were asked for, and where, then aborts: the same way
// out as a failed run-time check (cf.assert), which lstm-run reports as an
// error. With cpu-runtime (the CPU pipeline) both go to the CPU runtime's
// lstmRuntimeCpuOutOfMemory instead, which returns a guarded call to its
// caller (lib/Runtime/CpuFailure.cpp).
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/RuntimeChecks/RuntimeChecks.h"

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CHECKALLOCATIONSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The size argument of a call to one of the allocation functions the
/// memref lowering uses, or null for any other call.
static Value allocationSize(LLVM::CallOp call) {
  std::optional<StringRef> callee = call.getCallee();
  if (!callee)
    return {};
  // malloc(size), or the CPU runtime's caching allocator behind the
  // memref lowering's generic allocation functions.
  if ((*callee == "malloc" || *callee == "_mlir_memref_to_llvm_alloc") &&
      call.getArgOperands().size() == 1)
    return call.getArgOperands()[0];
  // aligned_alloc(alignment, size)
  if ((*callee == "aligned_alloc" ||
       *callee == "_mlir_memref_to_llvm_aligned_alloc") &&
      call.getArgOperands().size() == 2)
    return call.getArgOperands()[1];
  return {};
}

struct CheckAllocationsPass
    : lstm::impl::CheckAllocationsPassBase<CheckAllocationsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<LLVM::CallOp> calls;
    // Kernels do not allocate; their modules are compiled on their own.
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (auto call = dyn_cast<LLVM::CallOp>(op))
        if (allocationSize(call) && call.getNumResults() == 1)
          calls.push_back(call);
      return WalkResult::advance();
    });
    if (calls.empty())
      return;

    OpBuilder b(ctx);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    // The functions the failing block calls: the CPU runtime's, or libc's.
    FailureOr<LLVM::LLVMFuncOp> dprintfFn, fflushFn, abortFn, outOfMemoryFn;
    if (cpuRuntime) {
      outOfMemoryFn = LLVM::lookupOrCreateFn(
          b, module, "lstmRuntimeCpuOutOfMemory", {b.getI64Type(), ptr},
          LLVM::LLVMVoidType::get(ctx));
      if (failed(outOfMemoryFn)) {
        module.emitError("lstm-check-allocations: the module declares "
                         "lstmRuntimeCpuOutOfMemory with another type");
        return signalPassFailure();
      }
    } else {
      dprintfFn = LLVM::lookupOrCreateFn(b, module, "dprintf", {i32, ptr}, i32,
                                         /*isVarArg=*/true);
      fflushFn = LLVM::lookupOrCreateFn(b, module, "fflush", {ptr}, i32);
      abortFn = LLVM::lookupOrCreateFn(b, module, "abort", {},
                                       LLVM::LLVMVoidType::get(ctx));
    }
    if (!cpuRuntime &&
        (failed(dprintfFn) || failed(fflushFn) || failed(abortFn))) {
      module.emitError("lstm-check-allocations: the module declares dprintf, "
                       "fflush or abort with another type");
      return signalPassFailure();
    }

    SymbolTable symbols(module);
    unsigned counter = 0;
    for (LLVM::CallOp call : calls) {
      Location loc = call.getLoc();
      Value size = allocationSize(call);
      Block *before = call->getBlock();
      Block *after = before->splitBlock(call->getNextNode());
      Block *fail = new Block();
      fail->insertBefore(after);

      b.setInsertionPointToEnd(before);
      Value null = LLVM::ZeroOp::create(b, loc, ptr);
      Value isNull = LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq,
                                          call.getResult(), null);
      LLVM::CondBrOp::create(b, loc, isNull, fail, after);

      b.setInsertionPointToEnd(fail);
      Value size64 = size;
      if (size.getType() != b.getI64Type())
        size64 = LLVM::ZExtOp::create(b, loc, b.getI64Type(), size);
      std::string name;
      if (cpuRuntime) {
        // lstmRuntimeCpuOutOfMemory(size, "LOC"): the runtime reports and
        // returns to a guarded call, or aborts.
        do
          name = "lstm_out_of_memory_at_" + std::to_string(counter++);
        while (symbols.lookup(name));
        std::string where = lstm::describeLocation(loc);
        Value whereText = LLVM::createGlobalString(
            loc, b, name, StringRef(where.c_str(), where.size() + 1),
            LLVM::Linkage::Private);
        LLVM::CallOp::create(b, loc, *outOfMemoryFn,
                             ValueRange{size64, whereText});
        LLVM::UnreachableOp::create(b, loc);
        continue;
      }
      // fflush(NULL); dprintf(2, "lstm: out of memory: ... %llu bytes ... at
      // LOC\n", size); abort(). On stderr, as a failed cf.assert's message
      // (lstm-report-failed-checks).
      do
        name = "lstm_out_of_memory_msg_" + std::to_string(counter++);
      while (symbols.lookup(name));
      std::string text = "lstm: out of memory: cannot allocate a buffer of "
                         "%llu bytes (for the value made at " +
                         lstm::describeLocation(loc) + ")\n";
      // The global's name is registered by createGlobalString in the module.
      Value format = LLVM::createGlobalString(
          loc, b, name, StringRef(text.c_str(), text.size() + 1),
          LLVM::Linkage::Private);
      Value stderrFd = LLVM::ConstantOp::create(b, loc, i32, 2);
      LLVM::CallOp::create(b, loc, *fflushFn, ValueRange{null});
      LLVM::CallOp::create(b, loc, *dprintfFn,
                           ValueRange{stderrFd, format, size64});
      LLVM::CallOp::create(b, loc, *abortFn, ValueRange{});
      LLVM::UnreachableOp::create(b, loc);
    }
  }
};

} // namespace
