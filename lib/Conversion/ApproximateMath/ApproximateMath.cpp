//===- ApproximateMath.cpp - f32 math functions as polynomials ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// On the CPU, each tanh and exp of a cell's pointwise work was a call into
// libm: a scalar call per element that also keeps LLVM from vectorising
// the loop around it. Upstream's polynomial approximations are plain arith
// (f32 only), which the loop vectoriser turns into SIMD code. f64 functions
// keep libm: the float64 builds are the references of the tests.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/ApproximateMath/ApproximateMath.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;

namespace {
struct ApproximateMathPass
    : lstm::impl::ApproximateMathPassBase<ApproximateMathPass> {
  using Base::Base;

  void runOnOperation() override {
    static constexpr StringLiteral kKnown[] = {"tanh", "exp",   "expm1",
                                               "log",  "log1p", "log2"};
    for (const std::string &name : functions)
      if (!llvm::is_contained(kKnown, name)) {
        getOperation()->emitError()
            << "lstm-approximate-math: no approximation of '" << name
            << "' (functions: tanh, exp, expm1, log, log1p, log2)";
        return signalPassFailure();
      }
    auto chosen = [&](StringRef name) {
      return llvm::is_contained(functions, name.str());
    };
    RewritePatternSet patterns(&getContext());
    if (chosen("tanh"))
      populatePolynomialApproximateTanhPattern(patterns);
    // The predicate sees operation names ("math.exp").
    populateMathPolynomialApproximationPatterns(patterns, [&](StringRef name) {
      name.consume_front("math.");
      return name != "tanh" && chosen(name);
    });
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};
} // namespace
