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
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
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

/// Whether `op`, a symbol of a lowered module, is an external LLVM function
/// declaration (a libdevice function the kernels call).
static bool isLLVMDeclaration(Operation *op) {
  auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
  return func && func.isExternal();
}

/// Moves everything of `from` into `into` and erases `from`; launches in
/// `module` follow their kernels. A symbol whose name `into` already has is
/// renamed inside `from` (uses within `from` follow; `into`'s own uses are
/// not touched), except, with `shareDeclarations`, an external LLVM
/// declaration that `into` declares or defines with the same type: that
/// one is dropped and `from`'s calls resolve to `into`'s (a libdevice
/// function must keep its name).
static LogicalResult moveModule(ModuleOp module, gpu::GPUModuleOp into,
                                SymbolTable &intoSymbols, gpu::GPUModuleOp from,
                                bool shareDeclarations) {
  MLIRContext *context = module.getContext();
  SymbolTable fromSymbols(from);
  llvm::StringMap<StringAttr> renamed;
  for (Operation &op :
       llvm::make_early_inc_range(from.getBody()->getOperations())) {
    auto symbol = dyn_cast<SymbolOpInterface>(op);
    if (!symbol)
      continue;
    StringAttr old = symbol.getNameAttr();
    if (shareDeclarations && isLLVMDeclaration(&op)) {
      if (Operation *existing = intoSymbols.lookup(old)) {
        auto existingFunc = dyn_cast<LLVM::LLVMFuncOp>(existing);
        if (!existingFunc || existingFunc.getFunctionType() !=
                                 cast<LLVM::LLVMFuncOp>(op).getFunctionType())
          return op.emitError("lstm-merge-gpu-modules: @")
                 << old.getValue()
                 << " is declared with another type, or is another symbol, "
                    "in @"
                 << into.getSymName();
        renamed[old.getValue()] = old;
        fromSymbols.erase(&op);
        continue;
      }
    }
    StringAttr now = old;
    for (unsigned n = 0;
         intoSymbols.lookup(now) || (now != old && fromSymbols.lookup(now));
         ++n)
      now = StringAttr::get(context, old.getValue() + "_" + Twine(n));
    if (now != old && failed(fromSymbols.rename(symbol, now)))
      return op.emitError("lstm-merge-gpu-modules: cannot rename symbol");
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
    return failure();
  SymbolTable(module).erase(from);
  return success();
}

/// The first op of `gpuModule` outside the LLVM and NVVM dialects, or null.
static Operation *firstUnloweredOp(gpu::GPUModuleOp gpuModule) {
  Operation *found = nullptr;
  gpuModule.getBody()->walk<WalkOrder::PreOrder>([&](Operation *op) {
    StringRef dialect = op->getName().getDialectNamespace();
    if (dialect == LLVM::LLVMDialect::getDialectNamespace() ||
        dialect == NVVM::NVVMDialect::getDialectNamespace())
      return WalkResult::advance();
    found = op;
    return WalkResult::interrupt();
  });
  return found;
}

struct MergeGPUModulesPass
    : lstm::impl::MergeGPUModulesPassBase<MergeGPUModulesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (afterLowering)
      return mergeLowered();
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules;
    for (auto m : module.getOps<gpu::GPUModuleOp>())
      if (!m.getTargetsAttr() && !m.getOffloadingHandlerAttr())
        gpuModules.push_back(m);
    if (gpuModules.empty())
      return;

    gpu::GPUModuleOp into = gpuModules.front();
    SymbolTable intoSymbols(into);
    for (gpu::GPUModuleOp from : llvm::drop_begin(gpuModules))
      if (failed(moveModule(module, into, intoSymbols, from,
                            /*shareDeclarations=*/false)))
        return signalPassFailure();
    dropRepeatedKernels(module, into);
  }

  /// after-lowering: modules in the LLVM dialect with the same targets as
  /// one. What kept them apart before the lowering (a data layout with
  /// 32-bit indices for the persistent kernels) is in their types now, and
  /// the first module's attributes are kept.
  void mergeLowered() {
    ModuleOp module = getOperation();
    SmallVector<gpu::GPUModuleOp> gpuModules(module.getOps<gpu::GPUModuleOp>());
    for (gpu::GPUModuleOp m : gpuModules)
      if (Operation *op = firstUnloweredOp(m)) {
        op->emitError("lstm-merge-gpu-modules{after-lowering}: '")
            << op->getName() << "' in @" << m.getSymName()
            << " is not in the LLVM or NVVM dialect yet";
        return signalPassFailure();
      }
    SmallVector<gpu::GPUModuleOp> firsts;
    for (gpu::GPUModuleOp from : gpuModules) {
      auto into = llvm::find_if(firsts, [&](gpu::GPUModuleOp m) {
        return m.getTargetsAttr() == from.getTargetsAttr() &&
               m.getOffloadingHandlerAttr() == from.getOffloadingHandlerAttr();
      });
      if (into == firsts.end()) {
        firsts.push_back(from);
        continue;
      }
      SymbolTable intoSymbols(*into);
      if (failed(moveModule(module, *into, intoSymbols, from,
                            /*shareDeclarations=*/true)))
        return signalPassFailure();
    }
  }
};

} // namespace
