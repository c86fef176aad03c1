//===- GemmToCublas.cpp - Buffer-level GEMMs to cuBLAS calls --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The generated kernel of a contraction is one thread per output element
// with a sequential reduction: fine for the tiny products of toy cells, far
// from the GEMM ceiling for real ones. This pass hands the products to cuBLAS
// through the project's runtime, on the stream of the run's kernels.
//
// It runs on memrefs, once every buffer lives on the device, and recognises
// contractions structurally (lstm/Conversion/Utils/GemmCall.h, shared with
// the CPU's BLAS path), so it serves the gates' products, the hoisted input
// projections and the batched products of a wavefront alike.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/GemmToCublas/GemmToCublas.h"

#include "lstm/Conversion/SplitTF32Gemms/SplitTF32Gemms.h"
#include "lstm/Conversion/Utils/GemmCall.h"
#include "lstm/Runtime/CudaRuntime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTGEMMTOCUBLASPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

namespace {

constexpr StringLiteral kGemmFunction = "lstmRuntimeGemmStridedBatched";

struct ConvertGemmToCublasPass
    : lstm::impl::ConvertGemmToCublasPassBase<ConvertGemmToCublasPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The enum's values are the runtime's codes.
    static_assert(int32_t(GemmComputeType::fp32) == LSTM_RUNTIME_COMPUTE_FP32 &&
                  int32_t(GemmComputeType::tf32) == LSTM_RUNTIME_COMPUTE_TF32 &&
                  int32_t(GemmComputeType::bf16) == LSTM_RUNTIME_COMPUTE_BF16);
    auto compute = static_cast<int32_t>(computeType.getValue());

    IRRewriter rewriter(module.getContext());
    // fp32 accumulators; the operands fp32, or bf16 for the bf16 compute
    // type.
    SmallVector<GemmMatch> gemms = collectGemms(rewriter, module);
    llvm::erase_if(gemms, [](const GemmMatch &g) {
      return !g.getElementTypeC().isF32() ||
             !(g.getElementTypeA().isF32() || g.getElementTypeA().isBF16());
    });
    if (gemms.empty())
      return;
    func::FuncOp callee =
        declareGemmFunction(module, kGemmFunction, rewriter.getI32Type());

    for (GemmMatch &g : gemms) {
      Type operandType = g.getElementTypeA();
      // A product of operands that lstm-split-tf32-gemms made exact TF32
      // values runs on TF32 tensor cores whatever the compute type.
      int32_t productCompute = g.op->hasAttr(kTF32OperandsAttr)
                                   ? LSTM_RUNTIME_COMPUTE_TF32
                                   : compute;
      if (operandType.isBF16() !=
          (productCompute == LSTM_RUNTIME_COMPUTE_BF16)) {
        if (operandType.isBF16()) {
          g.op->emitError("lstm-gemm-to-cublas: a bf16 product needs "
                          "compute-type=bf16");
          return signalPassFailure();
        }
        // The rounding to bf16 happens at tensor level, before this pass
        // (--lstm-to-nvvm=compute-type=bf16 runs lstm-gemm-operands-to-bf16);
        // an fp32 product here was not rounded, and running it in fp32
        // would silently give another precision than the one asked for.
        g.op->emitError("lstm-gemm-to-cublas: compute-type=bf16 needs bf16 "
                        "operands, and this product's are fp32 (run "
                        "lstm-gemm-operands-to-bf16 before bufferization, as "
                        "--lstm-to-nvvm=compute-type=bf16 does)");
        return signalPassFailure();
      }
      rewriter.setInsertionPoint(g.op);
      Value computeArg = arith::ConstantIntOp::create(
          rewriter, g.op->getLoc(), rewriter.getI32Type(), productCompute);
      replaceGemmWithCall(rewriter, g, callee, computeArg, minSize);
    }
  }
};

} // namespace
