//===- KernelObject.cpp - The kernels' fatbin as an object of its own -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// gpu-module-to-binary (NVPTX code generation and ptxas) and the host
// object (LLVM's -O3 and x86 code generation) are the two longest steps of
// compiling a CUDA library, and neither needs the other: the host code only
// passes the fatbin's address and size to mgpuModuleLoad. So the kernels
// leave the module before its translation to LLVM IR, each gpu.module
// replaced by an empty gpu.binary of its name (upstream's translation then
// makes the launches and the module's load and unload as usual, around an
// empty constant); in the host's LLVM IR that constant becomes an external
// symbol and the load reads the size from another. The kernels are
// serialised on a thread of their own meanwhile, and a second object
// defines both symbols with the fatbin's bytes; the link joins the two.
//
//===----------------------------------------------------------------------===//

#include "lstm/Compiler/Compiler.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"

using namespace mlir;

/// The runtime's entry point that loads a module's fatbin (upstream's ABI,
/// lib/Runtime/CudaRuntime.cpp).
static constexpr llvm::StringLiteral kModuleLoad = "mgpuModuleLoad";

static llvm::Error makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message.str());
}

/// The symbols the kernels' object defines for kernel module `name`. Not
/// internal (the host object refers to them), hidden (not exported by the
/// library).
static std::string dataSymbol(StringRef name) {
  return ("__lstm_fatbin_" + name).str();
}
static std::string sizeSymbol(StringRef name) {
  return ("__lstm_fatbin_size_" + name).str();
}

FailureOr<SmallVector<std::string>> lstm::moveKernelModules(ModuleOp host,
                                                            ModuleOp kernels) {
  SmallVector<std::string> names;
  OpBuilder builder(host.getContext());
  for (auto module : host.getOps<gpu::GPUModuleOp>())
    if (!module.getTargetsAttr() || module.getTargetsAttr().empty())
      return module.emitError("kernel module has no target to serialise for "
                              "(gpu-module-to-binary needs one)");
  for (auto module :
       llvm::make_early_inc_range(host.getOps<gpu::GPUModuleOp>())) {
    // The object's target and format choose how the translation loads it:
    // a fatbin through mgpuModuleLoad, as gpu-module-to-binary's would.
    Attribute target = module.getTargetsAttr()[0];
    builder.setInsertionPoint(module);
    auto object = gpu::ObjectAttr::get(
        host.getContext(), target, gpu::CompilationTarget::Fatbin,
        builder.getStringAttr(""), /*properties=*/nullptr,
        /*kernels=*/nullptr);
    gpu::BinaryOp::create(builder, module.getLoc(), module.getName(),
                          /*offloadingHandler=*/nullptr,
                          ArrayRef<Attribute>{object});
    names.push_back(module.getName().str());
    module->moveBefore(kernels.getBody(), kernels.getBody()->end());
  }
  return names;
}

void lstm::splitKernelModules(ModuleOp host, unsigned parts,
                              bool onlyWithDominantKernel) {
  if (parts < 2)
    return;
  SymbolTable hostSymbols(host);
  for (auto module : llvm::to_vector(host.getOps<gpu::GPUModuleOp>())) {
    SmallVector<std::pair<int64_t, LLVM::LLVMFuncOp>> kernels;
    for (auto func : module.getOps<LLVM::LLVMFuncOp>()) {
      if (!func->hasAttr(NVVM::NVVMDialect::getKernelFuncAttrName()))
        continue;
      int64_t size = 0;
      func.walk([&](Operation *) { ++size; });
      kernels.push_back({size, func});
    }
    if (kernels.size() < 2)
      continue;
    // The largest first, each to the part with the fewest operations: the
    // longest kernel (a persistent backward, a third of the PTX) alone.
    llvm::stable_sort(kernels,
                      [](auto &a, auto &b) { return a.first > b.first; });
    // On the 2-core machine: the persistent forward libraries 0.05-0.14 s
    // faster split in two (their largest kernel 31-79% of the operations),
    // char-rnn's persistent training library 2.54 -> 2.20 s (33%), but
    // appleyard's wavefront training library 4.07 -> 4.47 s (80 kernels,
    // the largest 11%).
    if (onlyWithDominantKernel) {
      int64_t total = 0;
      for (auto &kernel : kernels)
        total += kernel.first;
      if (4 * kernels.front().first < total)
        continue;
    }
    unsigned count = std::min<unsigned>(parts, kernels.size());
    SmallVector<int64_t> load(count, 0);
    llvm::DenseMap<StringAttr, unsigned> partOf;
    for (auto &[size, func] : kernels) {
      unsigned part = std::min_element(load.begin(), load.end()) - load.begin();
      load[part] += size;
      partOf[func.getSymNameAttr()] = part;
    }
    OpBuilder builder(module);
    builder.setInsertionPointAfter(module);
    SmallVector<StringAttr> names = {module.getSymNameAttr()};
    for (unsigned part = 1; part < count; ++part) {
      auto copy = cast<gpu::GPUModuleOp>(builder.cloneWithoutRegions(*module));
      copy.getBodyRegion().emplaceBlock();
      // A name the host does not have yet.
      std::string name;
      for (unsigned n = part; name.empty() || hostSymbols.lookup(name); ++n)
        name = (module.getSymName() + "_part" + Twine(n)).str();
      copy.setSymName(name);
      hostSymbols.insert(copy);
      names.push_back(copy.getSymNameAttr());
      OpBuilder into = OpBuilder::atBlockEnd(copy.getBody());
      for (Operation &op :
           llvm::make_early_inc_range(module.getBody()->getOperations())) {
        auto func = dyn_cast<LLVM::LLVMFuncOp>(op);
        auto it = func ? partOf.find(func.getSymNameAttr()) : partOf.end();
        if (it == partOf.end())
          into.clone(op);
        else if (it->second == part)
          op.moveBefore(copy.getBody(), copy.getBody()->end());
      }
    }
    host.walk([&](gpu::LaunchFuncOp launch) {
      if (launch.getKernelModuleName() != module.getSymNameAttr())
        return;
      auto it = partOf.find(launch.getKernelName());
      if (it != partOf.end() && it->second != 0)
        launch.setKernelAttr(SymbolRefAttr::get(
            names[it->second],
            {FlatSymbolRefAttr::get(launch.getKernelName())}));
    });
  }
}

llvm::Error lstm::referToKernelObject(llvm::Module &host,
                                      ArrayRef<std::string> names) {
  llvm::LLVMContext &context = host.getContext();
  auto *i64 = llvm::Type::getInt64Ty(context);
  for (const std::string &name : names) {
    // Upstream's translation of gpu.binary @name (SelectObjectAttr): the
    // object as constant @name_binary, loaded by a constructor with
    // mgpuModuleLoad(@name_binary, size).
    llvm::GlobalVariable *placeholder =
        host.getGlobalVariable(name + "_binary", /*AllowInternal=*/true);
    if (!placeholder)
      return makeError("the host code has no @" + name +
                       "_binary for kernel module " + name +
                       " (the translation of gpu.binary changed?)");
    auto *data = new llvm::GlobalVariable(
        host, placeholder->getValueType(), /*isConstant=*/true,
        llvm::GlobalValue::ExternalLinkage, /*Initializer=*/nullptr,
        dataSymbol(name));
    data->setVisibility(llvm::GlobalValue::HiddenVisibility);
    auto *size = new llvm::GlobalVariable(
        host, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
        /*Initializer=*/nullptr, sizeSymbol(name));
    size->setVisibility(llvm::GlobalValue::HiddenVisibility);
    unsigned loads = 0;
    for (llvm::User *user : llvm::make_early_inc_range(placeholder->users())) {
      auto *call = llvm::dyn_cast<llvm::CallInst>(user);
      if (!call || !call->getCalledFunction() ||
          call->getCalledFunction()->getName() != kModuleLoad ||
          call->arg_size() != 2 || call->getArgOperand(0) != placeholder)
        continue;
      auto *loaded =
          new llvm::LoadInst(i64, size, sizeSymbol(name), call->getIterator());
      call->setArgOperand(1, loaded);
      ++loads;
    }
    if (loads == 0)
      return makeError("no " + kModuleLoad + " call loads @" + name +
                       "_binary (the translation of gpu.binary changed?)");
    placeholder->replaceAllUsesWith(data);
    placeholder->eraseFromParent();
  }
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::Module>>
lstm::kernelObjectModule(ModuleOp kernels, llvm::LLVMContext &context) {
  auto module = std::make_unique<llvm::Module>("kernels", context);
  auto *i64 = llvm::Type::getInt64Ty(context);
  for (auto binary : kernels.getOps<gpu::BinaryOp>()) {
    ArrayAttr objects = binary.getObjects();
    auto object = objects.empty() ? gpu::ObjectAttr()
                                  : dyn_cast<gpu::ObjectAttr>(objects[0]);
    if (!object)
      return makeError("kernel module " + binary.getName() +
                       " was not serialised to an object");
    StringRef bytes = object.getObject().getValue();
    // Its own type, where the host declared the placeholder's zero-length
    // array: only the address is taken there.
    llvm::Constant *init =
        llvm::ConstantDataArray::getString(context, bytes, /*AddNull=*/false);
    auto *data = new llvm::GlobalVariable(
        *module, init->getType(), /*isConstant=*/true,
        llvm::GlobalValue::ExternalLinkage, init, dataSymbol(binary.getName()));
    data->setVisibility(llvm::GlobalValue::HiddenVisibility);
    // The driver reads a fatbin's header through aligned loads.
    data->setAlignment(llvm::Align(8));
    auto *size = new llvm::GlobalVariable(
        *module, i64, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
        llvm::ConstantInt::get(i64, bytes.size()),
        sizeSymbol(binary.getName()));
    size->setVisibility(llvm::GlobalValue::HiddenVisibility);
  }
  return module;
}
