//===- MergeGPUModules.cpp - All kernels into one gpu.module --------------===//
//
// Kernel outlining gives every kernel a gpu.module of its own, and
// gpu-module-to-binary compiles each module separately: one NVPTX code
// generation and one ptxas process per kernel. A network has tens of
// kernels (95 for a 4-layer LSTM with the wavefront), which made compiling
// it take seconds. Moving every kernel into one module compiles them all in
// one go and loads one module at run time.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/MergeGPUModules/MergeGPUModules.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

struct MergeGPUModulesPass
    : lstm::impl::MergeGPUModulesPassBase<MergeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.size() < 2)
      return;
    // Modules with targets or attributes of their own would need those
    // reconciled; outlined modules have none yet.
    for (gpu::GPUModuleOp m : gpuModules)
      if (m.getTargetsAttr() || m.getOffloadingHandlerAttr()) {
        m.emitError("lstm-merge-gpu-modules: runs before targets are "
                    "attached (this module has one)");
        return signalPassFailure();
      }

    gpu::GPUModuleOp into = gpuModules.front();
    SymbolTable intoSymbols(into);
    SymbolTable moduleSymbols(module);
    for (gpu::GPUModuleOp from : llvm::drop_begin(gpuModules)) {
      // Renames, inside `from`, the symbols whose names `into` already has
      // (uses within `from` follow; `into`'s own uses are not touched), then
      // moves everything, and records where each symbol now lives.
      SymbolTable fromSymbols(from);
      llvm::StringMap<StringAttr> renamed;
      for (Operation &op : from.getBody()->getOperations()) {
        auto symbol = dyn_cast<SymbolOpInterface>(op);
        if (!symbol)
          continue;
        StringAttr old = symbol.getNameAttr();
        StringAttr now = old;
        for (unsigned n = 0;
             intoSymbols.lookup(now) || (now != old && fromSymbols.lookup(now));
             ++n)
          now = StringAttr::get(&getContext(), old.getValue() + "_" + Twine(n));
        if (now != old && failed(fromSymbols.rename(symbol, now))) {
          op.emitError("lstm-merge-gpu-modules: cannot rename symbol");
          return signalPassFailure();
        }
        renamed[old.getValue()] = now;
      }
      for (Operation &op :
           llvm::make_early_inc_range(from.getBody()->getOperations())) {
        op.moveBefore(into.getBody(), into.getBody()->end());
        if (auto symbol = dyn_cast<SymbolOpInterface>(op))
          intoSymbols.insert(symbol);
      }
      // Launches name kernels as @module::@kernel.
      auto result = module.walk([&](gpu::LaunchFuncOp launch) {
        SymbolRefAttr kernel = launch.getKernel();
        if (kernel.getRootReference() != from.getSymNameAttr())
          return WalkResult::advance();
        auto it = renamed.find(kernel.getLeafReference().getValue());
        if (it == renamed.end()) {
          launch.emitError("lstm-merge-gpu-modules: unknown kernel ") << kernel;
          return WalkResult::interrupt();
        }
        launch.setKernelAttr(SymbolRefAttr::get(
            into.getSymNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
        return WalkResult::advance();
      });
      if (result.wasInterrupted())
        return signalPassFailure();
      moduleSymbols.erase(from);
    }
  }
};

} // namespace
