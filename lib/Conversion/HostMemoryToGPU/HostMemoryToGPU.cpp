//===- HostMemoryToGPU.cpp - Move host buffers to the GPU -----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// On the GPU path the host code only orchestrates: it allocates, frees and
// launches, while every buffer lives in device memory. Allocations move to
// gpu.alloc/gpu.dealloc and copies become linalg.copy so that they turn into
// kernels with the rest of the linalg ops.
//
// Constants are memref.globals, which live in host memory. Whatever pass
// made one (bufferization of an arith.constant that lstm-wavefront stacked,
// say), a kernel or cuBLAS must not read it there: each memref.get_global
// that device code reads gets a device copy per call, made by a copy kernel
// that reads the global from the kernels' module (ParallelLoopsToGPU sinks
// the memref.get_global into the kernel, outlining copies the global into
// the gpu.module), so no host memory is involved at all.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/HostMemoryToGPU/HostMemoryToGPU.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTHOSTMEMORYTOGPUPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// Whether `user` reads or writes its memref operands on the host: a load,
/// store or call outside the kernels (inside a `gpu.launch`, the persistent
/// kernels' accesses, they are device accesses).
static bool accessesOnHost(Operation *user) {
  return isa<memref::LoadOp, memref::StoreOp, func::CallOp>(user) &&
         !user->getParentOfType<gpu::LaunchOp>();
}

/// Whether the host itself reads or writes `alloc`: the buffer deallocation
/// pipeline's helper arrays (pointer lists and ownership flags) are filled
/// with memref.store and passed to a host function. Those stay in host memory.
static bool isUsedOnHost(memref::AllocOp alloc) {
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (accessesOnHost(user))
        return true;
      if (isa<ViewLikeOpInterface, memref::CastOp>(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

/// Whether `use` reads the buffer on the host: directly (memref.load/store,
/// a call) or through a view that the host reads.
static bool isHostUse(OpOperand &use) {
  Operation *user = use.getOwner();
  if (accessesOnHost(user))
    return true;
  if (!isa<ViewLikeOpInterface, memref::CastOp>(user))
    return false;
  SmallVector<Value> worklist(user->getResults());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *u : v.getUsers()) {
      if (accessesOnHost(u))
        return true;
      if (isa<ViewLikeOpInterface, memref::CastOp>(u))
        llvm::append_range(worklist, u->getResults());
    }
  }
  return false;
}

/// Whether `value` (or a view of it) is returned by the function: then the
/// caller owns it and it must not be freed here.
static bool isReturned(Value value) {
  SmallVector<Value> worklist = {value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<func::ReturnOp>(user))
        return true;
      if (isa<ViewLikeOpInterface, memref::CastOp>(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
}

/// Gives the device uses of `getGlobal` a device copy of the constant, made
/// at the start of the function and freed before each return (unless it is
/// returned: the caller frees results).
static void copyGlobalToDevice(IRRewriter &rewriter, func::FuncOp func,
                               memref::GetGlobalOp getGlobal) {
  SmallVector<OpOperand *> deviceUses;
  for (OpOperand &use : getGlobal->getUses())
    if (!isHostUse(use))
      deviceUses.push_back(&use);
  if (deviceUses.empty())
    return;
  // memref.get_global has no operands: at the start of the entry block it
  // dominates every use, and the copy is made once per call even when the
  // constant is read in a loop.
  Block &entry = func.getBody().front();
  rewriter.setInsertionPointToStart(&entry);
  Location loc = getGlobal.getLoc();
  auto global = cast<memref::GetGlobalOp>(rewriter.clone(*getGlobal));
  MemRefType type = global.getType();
  auto alloc = gpu::AllocOp::create(rewriter, loc, type, /*asyncToken=*/Type(),
                                    ValueRange(), ValueRange(), ValueRange(),
                                    /*hostShared=*/false);
  Value device = alloc.getMemref();
  linalg::CopyOp::create(rewriter, loc, global.getResult(), device);
  for (OpOperand *use : deviceUses)
    use->set(device);
  if (isReturned(device))
    return;
  func.walk([&](func::ReturnOp ret) {
    rewriter.setInsertionPoint(ret);
    gpu::DeallocOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange(),
                           device);
  });
}

/// The op that made the buffer `v` is a view of, or null for a block
/// argument (a function argument: device memory on this path; a loop's
/// iteration argument: one of the buffers the loop is given).
static Operation *rootOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto cast = dyn_cast<memref::CastOp>(def))
      v = cast.getSource();
    else
      return def;
  }
  return nullptr;
}

/// Checks what the rest of the GPU path relies on: every buffer that a
/// linalg op (a kernel or a cuBLAS call to be) touches is device memory. A
/// host buffer there is a kernel reading host memory at run time
/// (CUDA_ERROR_ILLEGAL_ADDRESS): better a compile-time error naming the op.
static LogicalResult checkDeviceOperands(func::FuncOp func) {
  WalkResult result = func.walk<WalkOrder::PreOrder>([](Operation *op) {
    if (isa<gpu::LaunchOp>(op))
      return WalkResult::skip();
    if (!isa<linalg::LinalgOp>(op))
      return WalkResult::advance();
    for (Value operand : op->getOperands()) {
      if (!isa<MemRefType>(operand.getType()))
        continue;
      Operation *root = rootOf(operand);
      // The device copies of constants read the global from the kernels'
      // module (see copyGlobalToDevice).
      if (isa_and_nonnull<memref::GetGlobalOp>(root) &&
          isa<linalg::CopyOp>(op) && operand == op->getOperand(0))
        continue;
      if (root &&
          isa<memref::AllocOp, memref::AllocaOp, memref::GetGlobalOp>(root)) {
        op->emitError("lstm-host-memory-to-gpu: this op would read or write "
                      "host memory on the GPU (a buffer made by ")
            << root->getName() << " at " << root->getLoc() << ")";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

struct ConvertHostMemoryToGPUPass
    : lstm::impl::ConvertHostMemoryToGPUPassBase<ConvertHostMemoryToGPUPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    SmallVector<Operation *> work;
    // Kernels already formed keep their own (private) memory ops.
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (isa<memref::AllocOp, memref::DeallocOp, memref::CopyOp>(op))
        work.push_back(op);
      return WalkResult::advance();
    });

    // Constants the device reads get device copies.
    SmallVector<memref::GetGlobalOp> globals;
    getOperation()->walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::LaunchOp>(op))
        return WalkResult::skip();
      if (auto getGlobal = dyn_cast<memref::GetGlobalOp>(op))
        globals.push_back(getGlobal);
      return WalkResult::advance();
    });
    for (memref::GetGlobalOp getGlobal : globals) {
      copyGlobalToDevice(rewriter, getOperation(), getGlobal);
      if (getGlobal->use_empty())
        rewriter.eraseOp(getGlobal);
    }

    llvm::SmallPtrSet<Value, 8> hostBuffers;
    for (Operation *op : work)
      if (auto alloc = dyn_cast<memref::AllocOp>(op))
        if (isUsedOnHost(alloc))
          hostBuffers.insert(alloc.getResult());

    for (Operation *op : work) {
      rewriter.setInsertionPoint(op);
      if (auto alloc = dyn_cast<memref::AllocOp>(op)) {
        if (hostBuffers.contains(alloc.getResult()))
          continue;
        if (!alloc.getSymbolOperands().empty()) {
          alloc.emitError("cannot move an allocation with symbol operands to "
                          "the GPU");
          return signalPassFailure();
        }
        auto gpuAlloc = gpu::AllocOp::create(
            rewriter, alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
            /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
            /*symbolOperands=*/ValueRange(), /*hostShared=*/false);
        rewriter.replaceOp(alloc, gpuAlloc.getMemref());
      } else if (auto dealloc = dyn_cast<memref::DeallocOp>(op)) {
        if (hostBuffers.contains(dealloc.getMemref()))
          continue;
        gpu::DeallocOp::create(rewriter, dealloc.getLoc(),
                               /*asyncToken=*/Type(), ValueRange(),
                               dealloc.getMemref());
        rewriter.eraseOp(dealloc);
      } else if (auto copy = dyn_cast<memref::CopyOp>(op)) {
        rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                    copy.getTarget());
      }
    }
    if (failed(checkDeviceOperands(getOperation())))
      signalPassFailure();
  }
};

} // namespace
