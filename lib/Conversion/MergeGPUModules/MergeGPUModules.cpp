//===- MergeGPUModules.cpp - All kernels into one gpu.module --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Kernel outlining gives every kernel a gpu.module of its own, and
// gpu-module-to-binary compiles each module separately: one NVPTX code
// generation and one ptxas process per kernel. A network has tens of
// kernels (95 for a 4-layer LSTM with the wavefront), which made compiling
// it take seconds. Moving every kernel into one module compiles them all in
// one go and loads one module at run time.
//
// Functions lowered side by side repeat kernels: the training forward and
// the backward of @f_train/@f_backward are also @f_grad's, the forward's
// pointwise kernel is the training forward's. A kernel identical to an
// earlier one (same type, attributes and body) is dropped and its launches
// use the earlier one: half the code to generate for a module with its
// gradient functions.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/MergeGPUModules/MergeGPUModules.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_MERGEGPUMODULESPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

/// The attributes of `kernel` but its name.
static DictionaryAttr attributesButName(gpu::GPUFuncOp kernel) {
  NamedAttrList attrs(kernel->getAttrDictionary());
  attrs.erase(SymbolTable::getSymbolAttrName());
  return attrs.getDictionary(kernel.getContext());
}

/// Whether two kernels compute the same thing: the same type and
/// attributes (but their names) and equivalent bodies.
static bool isSameKernel(gpu::GPUFuncOp a, gpu::GPUFuncOp b) {
  return a.getFunctionType() == b.getFunctionType() &&
         attributesButName(a) == attributesButName(b) &&
         OperationEquivalence::isRegionEquivalentTo(
             &a.getBody(), &b.getBody(), OperationEquivalence::IgnoreLocations);
}

/// Drops every kernel of `gpuModule` that repeats an earlier one, pointing
/// its launches in `module` at the earlier one.
static void dropRepeatedKernels(ModuleOp module, gpu::GPUModuleOp gpuModule) {
  SmallVector<gpu::GPUFuncOp> kept;
  llvm::DenseMap<StringAttr, StringAttr> replacement;
  for (auto kernel :
       llvm::make_early_inc_range(gpuModule.getOps<gpu::GPUFuncOp>())) {
    if (!kernel.isKernel())
      continue;
    auto same = llvm::find_if(
        kept, [&](gpu::GPUFuncOp k) { return isSameKernel(k, kernel); });
    if (same == kept.end()) {
      kept.push_back(kernel);
      continue;
    }
    replacement[kernel.getNameAttr()] = same->getNameAttr();
  }
  if (replacement.empty())
    return;
  module.walk([&](gpu::LaunchFuncOp launch) {
    if (launch.getKernelModuleName() != gpuModule.getSymNameAttr())
      return;
    auto it = replacement.find(launch.getKernelName());
    if (it != replacement.end())
      launch.setKernelAttr(SymbolRefAttr::get(
          gpuModule.getSymNameAttr(), {FlatSymbolRefAttr::get(it->second)}));
  });
  SymbolTable symbols(gpuModule);
  for (auto [name, keptName] : replacement)
    symbols.erase(symbols.lookup(name));
}

struct MergeGPUModulesPass
    : lstm::impl::MergeGPUModulesPassBase<MergeGPUModulesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    if (gpuModules.empty())
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
    dropRepeatedKernels(module, into);
  }
};

} // namespace
