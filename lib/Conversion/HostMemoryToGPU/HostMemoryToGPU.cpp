//===- HostMemoryToGPU.cpp - Move host buffers to the GPU -----------------===//
//
// On the GPU path the host code only orchestrates: it allocates, frees and
// launches, while every buffer lives in device memory. Allocations move to
// gpu.alloc/gpu.dealloc and copies become linalg.copy so that they turn into
// kernels with the rest of the linalg ops.
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

/// Whether the host itself reads or writes `alloc`: the buffer deallocation
/// pipeline's helper arrays (pointer lists and ownership flags) are filled
/// with memref.store and passed to a host function. Those stay in host memory.
static bool isUsedOnHost(memref::AllocOp alloc) {
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (isa<memref::LoadOp, memref::StoreOp, func::CallOp>(user))
        return true;
      if (isa<ViewLikeOpInterface, memref::CastOp>(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  return false;
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
  }
};

} // namespace
