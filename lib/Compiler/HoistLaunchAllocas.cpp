//===- HoistLaunchAllocas.cpp - Kernel arguments on a fixed stack slot ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The translation of gpu.launch_func to LLVM IR puts each launch's argument
// arrays on the stack with `alloca` where the launch is. Inside a loop (the
// time loop of a layer) such an alloca is dynamic: every iteration takes new
// stack that is only given back when the function returns, and a long
// sequence of a deep network (4 layers, T = 100, a backward pass with its
// kernels of a hundred arguments) overflows an 8 MiB stack inside
// cuLaunchKernel. The arrays are only read by the launch, which copies the
// arguments when it is called, so every iteration can use the same slot:
// such allocas move to the function's entry block.
//
//===----------------------------------------------------------------------===//

#include "lstm/Compiler/Compiler.h"

#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

using namespace mlir;

/// The launch entry point of the runtime (upstream's ABI, lib/Runtime).
static constexpr llvm::StringLiteral kLaunch = "mgpuLaunchKernel";

/// Whether every use of `alloca` (through address computations) only stores
/// into it, stores its addresses into other launch argument arrays, or passes
/// it to the kernel launch.
static bool onlyFeedsLaunches(llvm::AllocaInst *alloca) {
  SmallVector<llvm::Value *> worklist = {alloca};
  while (!worklist.empty()) {
    llvm::Value *v = worklist.pop_back_val();
    for (llvm::User *user : v->users()) {
      if (auto *gep = llvm::dyn_cast<llvm::GetElementPtrInst>(user)) {
        worklist.push_back(gep);
        continue;
      }
      if (auto *store = llvm::dyn_cast<llvm::StoreInst>(user)) {
        // Into the array, or an address of it into another array.
        llvm::Value *base = store->getPointerOperand()->stripInBoundsOffsets();
        if (store->getPointerOperand() == v ||
            llvm::isa<llvm::AllocaInst>(base))
          continue;
        return false;
      }
      auto *call = llvm::dyn_cast<llvm::CallInst>(user);
      llvm::Function *callee = call ? call->getCalledFunction() : nullptr;
      if (!callee || callee->getName() != kLaunch)
        return false;
    }
  }
  return true;
}

void lstm::hoistLaunchAllocas(llvm::Module &module) {
  for (llvm::Function &function : module) {
    if (function.isDeclaration())
      continue;
    llvm::BasicBlock &entry = function.getEntryBlock();
    SmallVector<llvm::AllocaInst *> moved;
    for (llvm::BasicBlock &block : function) {
      if (&block == &entry)
        continue;
      for (llvm::Instruction &inst : block)
        if (auto *alloca = llvm::dyn_cast<llvm::AllocaInst>(&inst))
          if (alloca->isArrayAllocation()
                  ? llvm::isa<llvm::ConstantInt>(alloca->getArraySize())
                  : true)
            if (onlyFeedsLaunches(alloca))
              moved.push_back(alloca);
    }
    llvm::Instruction *point = &*entry.getFirstInsertionPt();
    for (llvm::AllocaInst *alloca : moved)
      alloca->moveBefore(point->getIterator());
  }
}
