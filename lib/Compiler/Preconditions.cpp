//===- Preconditions.cpp - What a module must be to be compiled ----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Function names. A function of the module is a symbol of the compiled code, in
// the same namespace as what that code calls: the C library's allocation and
// copies (malloc, free, memcpy, aligned_alloc), the math library's functions
// (tanhf, expf), the failed checks' write and abort, and the entry points of
// the runtimes. A function named like one of them takes its calls: a
// library exporting `free` called the network on its own buffers
// ("free(): invalid pointer"), one named `malloc` returned garbage, `exit`
// ended the calling process. Such names are refused before the lowering,
// at the function.
//
// Lowered functions. A lowering given as a pre-pass (lstm-to-cpu) leaves
// llvm.funcs, which the lowering would take as they are and fail on far from
// the cause.
//
// Compute types. TF32 and bf16 (lstm-gemm-operands-to-bf16, the persistent
// kernels' operands) are roundings of f32 products: a network of another
// float type would compile with its products as they are, without a word.
//
//===----------------------------------------------------------------------===//

#include "lstm/Compiler/Compiler.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <dlfcn.h>

using namespace mlir;

/// Prefixes of the symbols of the runtimes the compiled code calls (ours,
/// MLIR's, CUDA's, the BLAS libraries', OpenMP's), of the entry points the
/// compiler adds (_mlir_ciface_NAME, _lstm_packed_NAME) and of names C
/// reserves.
static constexpr StringLiteral kReservedPrefixes[] = {
    "__",         "_mlir_", "_lstm_", "mgpu",  "lstmRuntime",
    "memrefCopy", "cublas", "cuda",   "dnnl_", "cblas_",
    "openblas_",  "GOMP_",  "omp_",   "llvm.", "nvvm."};

/// The system library among libc and libm that defines `name`, if one does
/// (both are loaded in every process that compiles; the compiled code links
/// them).
static std::optional<StringRef> systemLibraryDefining(StringRef name) {
  static void *const libraries[] = {
      dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD),
      dlopen("libm.so.6", RTLD_LAZY | RTLD_NOLOAD)};
  static constexpr StringLiteral names[] = {"C library", "math library"};
  std::string symbol = name.str();
  for (auto [library, libraryName] : llvm::zip(libraries, names))
    if (library && dlsym(library, symbol.c_str()))
      return libraryName;
  return std::nullopt;
}

/// Whether `name` starts like a CUDA driver function (cuLaunchKernel).
static bool isCudaDriverName(StringRef name) {
  return name.size() > 2 && name.starts_with("cu") && llvm::isUpper(name[2]);
}

/// Why `name` would take the compiled code's calls, if it would.
static std::optional<std::string> reservedBecause(StringRef name) {
  for (StringRef prefix : kReservedPrefixes)
    if (name.starts_with(prefix))
      return ("takes a name reserved for the runtimes and the toolchain "
              "(prefix '" +
              prefix + "')")
          .str();
  if (isCudaDriverName(name))
    return std::string("is named like a CUDA driver function (cu and a "
                       "capital)");
  if (std::optional<StringRef> library = systemLibraryDefining(name))
    return ("has the name of a function of the " + *library +
            ", which the compiled code and its runtime may call (the "
            "library would call this function instead)")
        .str();
  return std::nullopt;
}

LogicalResult lstm::checkFunctionNames(ModuleOp module) {
  bool refused = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    if (std::optional<std::string> reason =
            reservedBecause(func.getSymName())) {
      func.emitError("function '")
          << func.getSymName() << "' " << *reason << ": rename the function";
      refused = true;
    }
  }
  return failure(refused);
}

LogicalResult lstm::checkComputeType(ModuleOp module,
                                     GemmComputeType computeType) {
  if (computeType == GemmComputeType::fp32)
    return success();
  bool refused = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      continue;
    for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
      auto tensor = dyn_cast<TensorType>(type);
      if (!tensor || !isa<FloatType>(tensor.getElementType()) ||
          tensor.getElementType().isF32())
        continue;
      func.emitError("compute type ")
          << stringifyGemmComputeType(computeType)
          << " rounds f32 products, but argument #" << i << " of '"
          << func.getSymName() << "' is " << type
          << ": compile this network with the fp32 compute type";
      refused = true;
      break;
    }
  }
  return failure(refused);
}

LogicalResult lstm::checkNotLowered(ModuleOp module) {
  if (llvm::any_of(module.getOps<func::FuncOp>(),
                   [](func::FuncOp func) { return !func.isExternal(); }))
    return success();
  for (auto func : module.getOps<LLVM::LLVMFuncOp>())
    if (!func.isExternal())
      return func.emitError("function '")
             << func.getSymName()
             << "' is in the LLVM dialect already: the pre-passes lowered it "
                "(--pre-passes takes passes on the lstm IR, such as "
                "lstm-optimize, not a lowering such as lstm-to-cpu or "
                "lstm-to-nvvm)";
  return success();
}
