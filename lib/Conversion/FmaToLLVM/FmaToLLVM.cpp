//===- FmaToLLVM.cpp - math.fma as LLVM's intrinsic in kernels ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// convert-gpu-to-nvvm lowers math.fma through libdevice, as a call of
// __nv_fmaf (__nv_fma for f64), a function whose body is LLVM's fma
// intrinsic. The persistent kernels' products are unrolled chains of
// fused multiply-adds (1,224 in char-rnn's training library), so LLVM
// linked libdevice's definition and inlined it 1,224 times: about 0.15 s of
// the kernels' code generation on the 2-core machine, for the instruction
// the intrinsic gives directly. This pass rewrites the f32 and f64 math.fma
// of a gpu.module to llvm.intr.fma before that lowering; the result is the
// same single-rounding fused multiply-add (PTX fma.rn).
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/FmaToLLVM/FmaToLLVM.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTFMATOLLVMPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {

struct FmaToIntrinsic : OpRewritePattern<math::FmaOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(math::FmaOp op,
                                PatternRewriter &rewriter) const override {
    // The types libdevice's __nv_fmaf and __nv_fma take; the narrower
    // floats (which convert-gpu-to-nvvm widens around the call) and vectors
    // keep the upstream lowering.
    Type type = op.getType();
    if (!type.isF32() && !type.isF64())
      return rewriter.notifyMatchFailure(op, "not an f32 or f64 scalar");
    // Fast-math flags would need translating; the kernels set none.
    if (op.getFastmath() != arith::FastMathFlags::none)
      return rewriter.notifyMatchFailure(op, "has fast-math flags");
    rewriter.replaceOpWithNewOp<LLVM::FMAOp>(op, op.getA(), op.getB(),
                                             op.getC());
    return success();
  }
};

struct ConvertFmaToLLVMPass
    : public lstm::impl::ConvertFmaToLLVMPassBase<ConvertFmaToLLVMPass> {
  using Base::Base;

  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FmaToIntrinsic>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
