//===- PackedEntryPoints.cpp - One-pointer entry points for guarded calls -===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The CPU runtime's guarded call (lstmRuntimeCpuGuardedCall, which returns
// to its caller from a failed check or allocation instead of aborting)
// calls a function of one argument: `_lstm_packed_NAME(void **arguments)`
// loads the pointer arguments of `_mlir_ciface_NAME` (the results' struct,
// then a descriptor per argument) from the array and calls it.
//
//===----------------------------------------------------------------------===//

#include "lstm/Compiler/Compiler.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

using namespace mlir;

static constexpr llvm::StringLiteral kCInterfacePrefix = "_mlir_ciface_";
static constexpr llvm::StringLiteral kPackedPrefix = "_lstm_packed_";

void lstm::addPackedEntryPoints(llvm::Module &module) {
  llvm::LLVMContext &context = module.getContext();
  auto *ptr = llvm::PointerType::get(context, 0);
  SmallVector<llvm::Function *> entries;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        function.getName().starts_with(kCInterfacePrefix) &&
        function.getReturnType()->isVoidTy() &&
        llvm::all_of(function.args(), [](llvm::Argument &argument) {
          return argument.getType()->isPointerTy();
        }))
      entries.push_back(&function);
  for (llvm::Function *entry : entries) {
    std::string name =
        (kPackedPrefix + entry->getName().drop_front(kCInterfacePrefix.size()))
            .str();
    if (module.getFunction(name))
      continue;
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(context), {ptr},
                                         /*isVarArg=*/false);
    auto *packed = llvm::Function::Create(
        type, llvm::GlobalValue::ExternalLinkage, name, module);
    llvm::IRBuilder<> builder(
        llvm::BasicBlock::Create(context, "entry", packed));
    SmallVector<llvm::Value *> arguments;
    for (unsigned i = 0, e = entry->arg_size(); i < e; ++i) {
      llvm::Value *slot =
          builder.CreateConstInBoundsGEP1_64(ptr, packed->getArg(0), i);
      arguments.push_back(builder.CreateLoad(ptr, slot));
    }
    builder.CreateCall(entry, arguments);
    builder.CreateRetVoid();
  }
}
