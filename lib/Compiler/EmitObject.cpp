//===- EmitObject.cpp - LLVM IR to an object file for the host ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Compiler/Compiler.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

using namespace mlir;

// LLVM vectorises for 256-bit registers on CPUs with 512-bit ones (their
// clock once dropped with the wider units busy); the fused cells of a
// recurrent network are long chains of arithmetic on every element of the
// hidden state, for which twice the lanes per instruction measure faster
// (docs/benchmarks.md, "The CPU").
void lstm::preferWideVectors(llvm::Module &module,
                             const llvm::TargetMachine &machine) {
  // Only x86 has the feature (another target would warn about its name).
  if (!machine.getTargetTriple().isX86())
    return;
  std::string features = machine.getTargetFeatureString().str();
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      machine.getTarget().createMCSubtargetInfo(
          machine.getTargetTriple(), machine.getTargetCPU(), features));
  if (!info->checkFeatures("+avx512f"))
    return;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() &&
        !function.hasFnAttribute("prefer-vector-width"))
      function.addFnAttr("prefer-vector-width", "512");
}

llvm::Expected<llvm::CodeGenOptLevel> lstm::codeGenOptLevel(unsigned optLevel) {
  if (std::optional<llvm::CodeGenOptLevel> level =
          llvm::CodeGenOpt::getLevel(optLevel))
    return *level;
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "optimisation level " + llvm::Twine(optLevel) +
                                     " is not one of 0, 1, 2, 3");
}

llvm::Error lstm::emitObjectFile(llvm::Module &module, StringRef path,
                                 StringRef cpu, unsigned optLevel) {
  llvm::Expected<llvm::CodeGenOptLevel> codeGenLevel =
      codeGenOptLevel(optLevel);
  if (!codeGenLevel)
    return codeGenLevel.takeError();
  // Idempotent; in-process callers (the C API) have not done it themselves.
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!t)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  std::string cpuName = cpu.str(), features;
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures subtarget;
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      subtarget.AddFeature(feature, enabled);
    features = subtarget.getString();
  } else if (std::unique_ptr<llvm::MCSubtargetInfo> info(
                 t->createMCSubtargetInfo(triple, cpuName, ""));
             !info->isCPUStringValid(cpuName)) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown host CPU '" + cpuName +
                                       "' (expected native, generic or a CPU "
                                       "that LLVM knows for " +
                                       triple.str() + ")");
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(
      t->createTargetMachine(triple, cpuName, features, options,
                             llvm::Reloc::PIC_, std::nullopt, *codeGenLevel));
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(triple);
  preferWideVectors(module, *machine);
  if (auto err = makeOptimizingTransformer(optLevel, 0, machine.get())(&module))
    return err;

  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, "cannot write " + path);
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, out.os(), nullptr,
                                   llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the target cannot emit object files");
  pm.run(module);
  out.keep();
  return llvm::Error::success();
}
