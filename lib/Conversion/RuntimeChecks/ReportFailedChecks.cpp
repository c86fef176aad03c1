//===- ReportFailedChecks.cpp - Failed cf.assert messages on stderr -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Upstream's lowering of cf.assert prints the message with puts(), on
// stdout: a caller that keeps stderr for errors (a log, lstm-run's parent,
// a test harness) saw "failed run-time check (message above)" and no
// message. This pass lowers the host code's cf.asserts itself, before
// convert-cf-to-llvm: the message and a newline written to file descriptor
// 2 (write(), unbuffered, so nothing is lost when the process aborts), then
// abort(), as upstream aborts. With cpu-runtime (the CPU pipeline) the
// message goes to the CPU runtime's lstmRuntimeCpuCheckFailed instead, which
// returns a guarded call to its caller (lib/Runtime/CpuFailure.cpp).
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/RuntimeChecks/RuntimeChecks.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_REPORTFAILEDCHECKSPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

struct ReportFailedChecksPass
    : lstm::impl::ReportFailedChecksPassBase<ReportFailedChecksPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    SmallVector<cf::AssertOp> asserts;
    // The kernels' assertions are the GPU's (__assertfail).
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (auto assertOp = dyn_cast<cf::AssertOp>(op))
        asserts.push_back(assertOp);
      return WalkResult::advance();
    });
    if (asserts.empty())
      return;

    OpBuilder b(ctx);
    auto ptr = LLVM::LLVMPointerType::get(ctx);
    auto i32 = IntegerType::get(ctx, 32);
    auto i64 = IntegerType::get(ctx, 64);
    // The functions the failing block calls: the CPU runtime's, or libc's.
    FailureOr<LLVM::LLVMFuncOp> writeFn, abortFn, checkFailedFn;
    if (cpuRuntime) {
      checkFailedFn =
          LLVM::lookupOrCreateFn(b, module, "lstmRuntimeCpuCheckFailed", {ptr},
                                 LLVM::LLVMVoidType::get(ctx));
      if (failed(checkFailedFn)) {
        module.emitError("lstm-report-failed-checks: the module declares "
                         "lstmRuntimeCpuCheckFailed with another type");
        return signalPassFailure();
      }
    } else {
      writeFn =
          LLVM::lookupOrCreateFn(b, module, "write", {i32, ptr, i64}, i64);
      abortFn = LLVM::lookupOrCreateFn(b, module, "abort", {},
                                       LLVM::LLVMVoidType::get(ctx));
      if (failed(writeFn) || failed(abortFn)) {
        module.emitError("lstm-report-failed-checks: the module declares "
                         "write or abort with another type");
        return signalPassFailure();
      }
    }

    SymbolTable symbols(module);
    // One global a message: the checks of one op repeat theirs.
    llvm::StringMap<LLVM::GlobalOp> globals;
    unsigned counter = 0;
    for (cf::AssertOp assertOp : asserts) {
      Location loc = assertOp.getLoc();
      Block *before = assertOp->getBlock();
      Block *after = before->splitBlock(assertOp->getNextNode());
      Block *fail = new Block();
      fail->insertBefore(after);
      b.setInsertionPointToEnd(before);
      cf::CondBranchOp::create(b, loc, assertOp.getArg(), after, fail);

      b.setInsertionPointToEnd(fail);
      // For the CPU runtime a C string (it adds the newline), else the
      // bytes write() writes.
      std::string text = cpuRuntime ? assertOp.getMsg().str() + '\0'
                                    : (assertOp.getMsg() + "\n").str();
      LLVM::GlobalOp &global = globals[text];
      Value message;
      if (global) {
        message = LLVM::AddressOfOp::create(b, loc, global);
      } else {
        std::string name;
        do
          name = "lstm_check_failed_msg_" + std::to_string(counter++);
        while (symbols.lookup(name));
        message = LLVM::createGlobalString(loc, b, name, text,
                                           LLVM::Linkage::Private);
        global = module.lookupSymbol<LLVM::GlobalOp>(name);
      }
      if (cpuRuntime) {
        LLVM::CallOp::create(b, loc, *checkFailedFn, ValueRange{message});
        LLVM::UnreachableOp::create(b, loc);
        assertOp.erase();
        continue;
      }
      Value stderrFd = LLVM::ConstantOp::create(b, loc, i32, 2);
      Value length = LLVM::ConstantOp::create(b, loc, i64, text.size());
      LLVM::CallOp::create(b, loc, *writeFn,
                           ValueRange{stderrFd, message, length});
      LLVM::CallOp::create(b, loc, *abortFn, ValueRange{});
      LLVM::UnreachableOp::create(b, loc);
      assertOp.erase();
    }
  }
};

} // namespace
