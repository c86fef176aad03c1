//===- ElementwiseAdjoints.cpp - Derivatives of elementwise math ----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The adjoints of the elementwise arith and math ops that cells compute with,
// and of lstm.one_minus. Each rule is written once for float tensors and
// float scalars: the same rules differentiate the `[B, N]` math of a cell
// and the scalar region of a fused lstm.pointwise. Constants that a rule
// needs come from AdjointContext::buildSplat, which knows how to make a
// tensor of the value's (possibly dynamic) shape where the adjoint is built.
//
//===----------------------------------------------------------------------===//

#include "AdjointUtils.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"

#include <cmath>

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

/// What a rule works with: the context, the cotangent of the op's (single)
/// result, and builders for the arithmetic of the adjoint.
class Rule {
public:
  Rule(Operation *op, AdjointContext &ctx)
      : op(op), ctx(ctx), b(ctx.getBuilder()), loc(op->getLoc()) {}

  /// The cotangent of the result; null when it has none (nothing to do).
  Value d() { return ctx.getCotangent(op->getResult(0)); }
  bool active(unsigned i) { return ctx.isActive(op->getOperand(i)); }
  FailureOr<Value> x(unsigned i) { return ctx.getPrimal(op->getOperand(i)); }
  FailureOr<Value> r() { return ctx.getPrimal(op->getResult(0)); }
  LogicalResult add(unsigned i, Value c) {
    return ctx.addCotangent(op->getOperand(i), c);
  }
  FailureOr<Value> splat(double c) {
    return ctx.buildSplat(op->getResult(0), c);
  }

  Value mul(Value a, Value c) { return arith::MulFOp::create(b, loc, a, c); }
  Value div(Value a, Value c) { return arith::DivFOp::create(b, loc, a, c); }
  Value plus(Value a, Value c) { return arith::AddFOp::create(b, loc, a, c); }
  Value neg(Value a) { return arith::NegFOp::create(b, loc, a); }
  Value oneMinus(Value a) { return buildOneMinus(b, loc, a); }
  /// `1 + a`.
  Value onePlus(Value a) { return oneMinus(neg(a)); }
  Value select(Value cond, Value t, Value f) {
    return arith::SelectOp::create(b, loc, cond, t, f);
  }
  Value cmp(arith::CmpFPredicate p, Value a, Value c) {
    return arith::CmpFOp::create(b, loc, p, a, c);
  }

  Operation *op;
  AdjointContext &ctx;
  OpBuilder &b;
  Location loc;
};

/// Unwraps FailureOr values inside a rule: `TRY(v, expr)` declares `v`.
#define TRY(name, expr)                                                        \
  auto name##OrFailure = (expr);                                               \
  if (failed(name##OrFailure))                                                 \
    return failure();                                                          \
  Value name = *name##OrFailure;

/// A unary op whose adjoint is `d * f(x, r)`.
template <typename Fn>
LogicalResult unary(Operation *op, AdjointContext &ctx, Fn derivativeTimes) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d || !rule.active(0))
    return success();
  FailureOr<Value> c = derivativeTimes(rule, d);
  if (failed(c))
    return failure();
  return rule.add(0, *c);
}

/// The rule of each op, by overload.
LogicalResult adjoint(arith::AddFOp op, AdjointContext &ctx) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d)
    return success();
  for (unsigned i = 0; i < 2; ++i)
    if (rule.active(i) && failed(rule.add(i, d)))
      return failure();
  return success();
}

LogicalResult adjoint(arith::SubFOp op, AdjointContext &ctx) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d)
    return success();
  if (rule.active(0) && failed(rule.add(0, d)))
    return failure();
  if (rule.active(1) && failed(rule.add(1, rule.neg(d))))
    return failure();
  return success();
}

LogicalResult adjoint(arith::MulFOp op, AdjointContext &ctx) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d)
    return success();
  for (unsigned i = 0; i < 2; ++i) {
    if (!rule.active(i))
      continue;
    TRY(other, rule.x(1 - i));
    if (failed(rule.add(i, rule.mul(d, other))))
      return failure();
  }
  return success();
}

LogicalResult adjoint(arith::DivFOp op, AdjointContext &ctx) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d)
    return success();
  TRY(den, rule.x(1));
  if (rule.active(0) && failed(rule.add(0, rule.div(d, den))))
    return failure();
  if (rule.active(1)) {
    // d(a / b)/db = -(a / b) / b.
    TRY(r, rule.r());
    if (failed(rule.add(1, rule.neg(rule.div(rule.mul(d, r), den)))))
      return failure();
  }
  return success();
}

LogicalResult adjoint(arith::NegFOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    return rule.neg(d);
  });
}

LogicalResult adjoint(OneMinusOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    return rule.neg(d);
  });
}

/// max/min: the cotangent goes to the operand that was taken (the first on
/// ties, as the forward's `>=`/`<=` would pick it).
LogicalResult maxOrMin(Operation *op, AdjointContext &ctx, bool isMax) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d || (!rule.active(0) && !rule.active(1)))
    return success();
  TRY(a, rule.x(0));
  TRY(c, rule.x(1));
  TRY(zero, rule.splat(0.0));
  Value first = rule.cmp(
      isMax ? arith::CmpFPredicate::OGE : arith::CmpFPredicate::OLE, a, c);
  if (rule.active(0) && failed(rule.add(0, rule.select(first, d, zero))))
    return failure();
  if (rule.active(1) && failed(rule.add(1, rule.select(first, zero, d))))
    return failure();
  return success();
}

LogicalResult adjoint(arith::MaximumFOp op, AdjointContext &ctx) {
  return maxOrMin(op, ctx, true);
}
LogicalResult adjoint(arith::MaxNumFOp op, AdjointContext &ctx) {
  return maxOrMin(op, ctx, true);
}
LogicalResult adjoint(arith::MinimumFOp op, AdjointContext &ctx) {
  return maxOrMin(op, ctx, false);
}
LogicalResult adjoint(arith::MinNumFOp op, AdjointContext &ctx) {
  return maxOrMin(op, ctx, false);
}

LogicalResult adjoint(arith::SelectOp op, AdjointContext &ctx) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d || (!rule.active(1) && !rule.active(2)))
    return success();
  TRY(cond, rule.x(0));
  TRY(zero, rule.splat(0.0));
  if (rule.active(1) && failed(rule.add(1, rule.select(cond, d, zero))))
    return failure();
  if (rule.active(2) && failed(rule.add(2, rule.select(cond, zero, d))))
    return failure();
  return success();
}

/// Precision casts: the cotangent is cast back.
LogicalResult adjoint(arith::ExtFOp op, AdjointContext &ctx) {
  return unary(op, ctx, [&](Rule &rule, Value d) -> FailureOr<Value> {
    return arith::TruncFOp::create(rule.b, rule.loc, op.getIn().getType(), d)
        .getResult();
  });
}
LogicalResult adjoint(arith::TruncFOp op, AdjointContext &ctx) {
  return unary(op, ctx, [&](Rule &rule, Value d) -> FailureOr<Value> {
    return arith::ExtFOp::create(rule.b, rule.loc, op.getIn().getType(), d)
        .getResult();
  });
}

LogicalResult adjoint(math::TanhOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(r, rule.r());
    return rule.mul(d, rule.oneMinus(rule.mul(r, r)));
  });
}

LogicalResult adjoint(math::ExpOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(r, rule.r());
    return rule.mul(d, r);
  });
}

LogicalResult adjoint(math::Exp2Op op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(r, rule.r());
    TRY(ln2, rule.splat(std::log(2.0)));
    return rule.mul(rule.mul(d, r), ln2);
  });
}

LogicalResult adjoint(math::ExpM1Op op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(r, rule.r());
    return rule.mul(d, rule.onePlus(r));
  });
}

LogicalResult adjoint(math::LogOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    return rule.div(d, x);
  });
}

/// log_base(x): d / (x · ln(base)).
static LogicalResult logBase(Operation *op, AdjointContext &ctx, double base) {
  return unary(op, ctx, [&](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    TRY(lnBase, rule.splat(std::log(base)));
    return rule.div(d, rule.mul(x, lnBase));
  });
}
LogicalResult adjoint(math::Log2Op op, AdjointContext &ctx) {
  return logBase(op, ctx, 2.0);
}
LogicalResult adjoint(math::Log10Op op, AdjointContext &ctx) {
  return logBase(op, ctx, 10.0);
}

LogicalResult adjoint(math::Log1pOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    return rule.div(d, rule.onePlus(x));
  });
}

LogicalResult adjoint(math::SqrtOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(r, rule.r());
    return rule.div(d, rule.plus(r, r));
  });
}

LogicalResult adjoint(math::RsqrtOp op, AdjointContext &ctx) {
  // r = x^(-1/2): dr/dx = -r / (2x).
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    TRY(r, rule.r());
    return rule.neg(rule.div(rule.mul(d, r), rule.plus(x, x)));
  });
}

LogicalResult adjoint(math::AbsFOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    TRY(zero, rule.splat(0.0));
    return rule.select(rule.cmp(arith::CmpFPredicate::OGE, x, zero), d,
                       rule.neg(d));
  });
}

LogicalResult adjoint(math::SinOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    return rule.mul(d, math::CosOp::create(rule.b, rule.loc, x));
  });
}

LogicalResult adjoint(math::CosOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    return rule.neg(rule.mul(d, math::SinOp::create(rule.b, rule.loc, x)));
  });
}

LogicalResult adjoint(math::TanOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(r, rule.r());
    return rule.mul(d, rule.onePlus(rule.mul(r, r)));
  });
}

LogicalResult adjoint(math::AtanOp op, AdjointContext &ctx) {
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    return rule.div(d, rule.onePlus(rule.mul(x, x)));
  });
}

LogicalResult adjoint(math::ErfOp op, AdjointContext &ctx) {
  // erf'(x) = 2 / sqrt(pi) · exp(-x²).
  return unary(op, ctx, [](Rule &rule, Value d) -> FailureOr<Value> {
    TRY(x, rule.x(0));
    TRY(scale, rule.splat(2.0 / std::sqrt(M_PI)));
    Value e = math::ExpOp::create(rule.b, rule.loc, rule.neg(rule.mul(x, x)));
    return rule.mul(d, rule.mul(scale, e));
  });
}

LogicalResult adjoint(math::PowFOp op, AdjointContext &ctx) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d)
    return success();
  TRY(base, rule.x(0));
  TRY(r, rule.r());
  if (rule.active(0)) {
    // d(a^b)/da = b · a^b / a.
    TRY(exponent, rule.x(1));
    if (failed(rule.add(0, rule.div(rule.mul(d, rule.mul(exponent, r)), base))))
      return failure();
  }
  if (rule.active(1)) {
    // d(a^b)/db = a^b · ln a.
    Value ln = math::LogOp::create(rule.b, rule.loc, base);
    if (failed(rule.add(1, rule.mul(d, rule.mul(r, ln)))))
      return failure();
  }
  return success();
}

LogicalResult adjoint(math::FmaOp op, AdjointContext &ctx) {
  Rule rule(op, ctx);
  Value d = rule.d();
  if (!d)
    return success();
  for (unsigned i = 0; i < 2; ++i) {
    if (!rule.active(i))
      continue;
    TRY(other, rule.x(1 - i));
    if (failed(rule.add(i, rule.mul(d, other))))
      return failure();
  }
  if (rule.active(2) && failed(rule.add(2, d)))
    return failure();
  return success();
}

#undef TRY

template <typename OpTy>
struct ElementwiseAdjoint
    : AdjointOpInterface::ExternalModel<ElementwiseAdjoint<OpTy>, OpTy> {
  LogicalResult buildAdjoint(Operation *op, AdjointContext &ctx) const {
    return adjoint(cast<OpTy>(op), ctx);
  }
};

template <typename... OpTys> void attach(MLIRContext *ctx) {
  (OpTys::template attachInterface<ElementwiseAdjoint<OpTys>>(*ctx), ...);
}

} // namespace

void lstm::detail::registerElementwiseAdjoints(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attach<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
           arith::NegFOp, arith::MaximumFOp, arith::MaxNumFOp,
           arith::MinimumFOp, arith::MinNumFOp, arith::SelectOp, arith::ExtFOp,
           arith::TruncFOp>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attach<math::TanhOp, math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
           math::Log2Op, math::Log10Op, math::Log1pOp, math::SqrtOp,
           math::RsqrtOp, math::AbsFOp, math::SinOp, math::CosOp, math::TanOp,
           math::AtanOp, math::ErfOp, math::PowFOp, math::FmaOp>(ctx);
  });
  registry.addExtension(
      +[](MLIRContext *ctx, LSTMDialect *) { attach<OneMinusOp>(ctx); });
}
