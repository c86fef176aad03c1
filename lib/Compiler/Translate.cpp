//===- Translate.cpp - LLVM dialect to LLVM IR ----------------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Compiler/Compiler.h"

#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/IR/Module.h"

using namespace mlir;

std::unique_ptr<llvm::Module>
lstm::translateToLLVMIR(ModuleOp module, llvm::LLVMContext &context) {
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context);
  if (llvmModule)
    hoistLaunchAllocas(*llvmModule);
  return llvmModule;
}
