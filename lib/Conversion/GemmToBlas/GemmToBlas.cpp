//===- GemmToBlas.cpp - Buffer-level GEMMs to OpenBLAS calls --------------===//
//
// The CPU lowering ends in loop nests, about a GFLOP/s for a matrix product:
// the cells' products dominate a CPU run by far. This pass hands them to
// OpenBLAS through the CPU runtime (lstm/Runtime/CpuRuntime.h), recognising
// them as lstm-gemm-to-cublas does on the GPU (lstm/Conversion/Utils).
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
    SmallVector<linalg::GenericOp> generics;
    module.walk([&](linalg::GenericOp op) { generics.push_back(op); });
    for (linalg::GenericOp op : generics)
      collapseLeadingRowDims(rewriter, op);

    SmallVector<GemmMatch> gemms;
    module.walk([&](linalg::LinalgOp op) {
      FailureOr<GemmMatch> g = matchGemm(op);
      // One element type throughout, one the BLAS has a routine for.
      if (succeeded(g) && g->getElementTypeA() == g->getElementTypeC() &&
          (g->getElementTypeC().isF32() || g->getElementTypeC().isF64()))
        gemms.push_back(*g);
    });
    for (const GemmMatch &g : gemms) {
      StringRef name = g.getElementTypeC().isF32() ? "lstmRuntimeCpuSgemm"
                                                   : "lstmRuntimeCpuDgemm";
      func::FuncOp callee = declareGemmFunction(module, name, TypeRange{});
      replaceGemmWithCall(rewriter, g, callee, ValueRange{}, minSize);
    }
  }
};

} // namespace
