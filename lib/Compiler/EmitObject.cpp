//===- EmitObject.cpp - LLVM IR to an object file for the host ------------===//

#include "lstm/Compiler/Compiler.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

llvm::Error lstm::emitObjectFile(llvm::Module &module, StringRef path) {
  // Idempotent; in-process callers (the C API) have not done it themselves.
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!t)
    return llvm::createStringError(llvm::inconvertibleErrorCode(), error);
  llvm::TargetOptions options;
  // "generic": the library must run on any machine of the architecture, not
  // only the one that compiled it.
  std::unique_ptr<llvm::TargetMachine> machine(
      t->createTargetMachine(triple, "generic", "", options, llvm::Reloc::PIC_,
                             std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(triple);
  if (auto err = makeOptimizingTransformer(3, 0, machine.get())(&module))
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
