//===- Differentiate.cpp - The lstm-differentiate pass --------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// A thin pass around lstm::differentiateFunction
// (lib/Dialect/LSTM/Differentiation): every public function with layers gets
// its gradient functions.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"

#include "lstm/Dialect/LSTM/Differentiation/AdjointOpInterface.h"
#include "lstm/Dialect/LSTM/Differentiation/Differentiate.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMDIFFERENTIATEPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

namespace {
struct LSTMDifferentiatePass
    : lstm::impl::LSTMDifferentiatePassBase<LSTMDifferentiatePass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    // The derivatives of the upstream ops are external models: a tool that
    // did not register them still differentiates.
    registerAdjointOpInterfaceExternalModels(registry);
  }

  void runOnOperation() override {
    SmallVector<func::FuncOp> functions;
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.isPublic() && !func.isExternal() &&
          !func.getBody().getOps<LayerOp>().empty())
        functions.push_back(func);
    IRRewriter rewriter(&getContext());
    for (func::FuncOp func : functions) {
      FailureOr<GradientFunctions> made = differentiateFunction(rewriter, func);
      if (failed(made))
        return signalPassFailure();
      // @f_train and @f_backward are cut out of @f_grad: it is made anyway,
      // and dropped when not asked for.
      if (!gradFunction)
        rewriter.eraseOp(made->grad);
      if (forwardThroughTrain)
        callTrainingForward(rewriter, func, made->train);
    }
  }

  /// Replaces the body of `func` by a call of `train` (same arguments; its
  /// first results are `func`'s).
  static void callTrainingForward(RewriterBase &rewriter, func::FuncOp func,
                                  func::FuncOp train) {
    func.eraseBody();
    Block *entry = func.addEntryBlock();
    rewriter.setInsertionPointToEnd(entry);
    auto call = func::CallOp::create(rewriter, func.getLoc(), train,
                                     entry->getArguments());
    func::ReturnOp::create(rewriter, func.getLoc(),
                           call.getResults().take_front(func.getNumResults()));
  }
};
} // namespace
