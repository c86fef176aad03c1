//===- GemmToBlas.cpp - Buffer-level GEMMs to CPU GEMM calls --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The CPU lowering ends in loop nests, about a GFLOP/s for a matrix product:
// the cells' products dominate a CPU run by far. This pass hands them to
// the CPU runtime's GEMMs (lstm/Runtime/CpuRuntime.h: oneDNN, OpenBLAS),
// recognising them as lstm-gemm-to-cublas does on the GPU
// (lstm/Conversion/Utils).
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/GemmToBlas/GemmToBlas.h"

#include "lstm/Conversion/Utils/GemmCall.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTGEMMTOBLASPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

namespace {

struct ConvertGemmToBlasPass
    : lstm::impl::ConvertGemmToBlasPassBase<ConvertGemmToBlasPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    IRRewriter rewriter(module.getContext());
    for (const GemmMatch &g : collectGemms(rewriter, module)) {
      // One element type throughout, one the BLAS has a routine for.
      Type type = g.getElementTypeC();
      if (g.getElementTypeA() != type || !(type.isF32() || type.isF64()))
        continue;
      StringRef name =
          type.isF32() ? "lstmRuntimeCpuSgemm" : "lstmRuntimeCpuDgemm";
      func::FuncOp callee = declareGemmFunction(module, name, TypeRange{});
      replaceGemmWithCall(rewriter, g, callee, ValueRange{}, minSize);
    }
  }
};

} // namespace
