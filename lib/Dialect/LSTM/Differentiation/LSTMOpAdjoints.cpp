//===- LSTMOpAdjoints.cpp - Derivatives of the lstm ops -------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// lstm.gate: the activation's derivative gives the cotangent dz of the gate's
// sum; every term of the sum passes dz on (products as GEMMs against the
// weight, biases and the peephole weight as sums over the batch). The
// context decides where those GEMMs and sums run.
//
// lstm.pointwise: the adjoint of a fused region is another fused region,
// built from the scalar rules of its ops: one kernel per step again.
//
// lstm.layer: the backward recurrence, built by the gradient function's
// context (LayerAdjoint.cpp).
//
//===----------------------------------------------------------------------===//

#include "AdjointUtils.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

//===----------------------------------------------------------------------===//
// lstm.gate
//===----------------------------------------------------------------------===//

/// `d ⊙ act'(z)`, from the gate's result `r = act(z)`.
FailureOr<Value> activationAdjoint(GateOp op, AdjointContext &ctx, Value d) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = op.getLoc();
  Activation act = op.getActivation();
  if (act == Activation::identity)
    return d;
  FailureOr<Value> r = ctx.getPrimal(op.getResult());
  if (failed(r))
    return failure();
  switch (act) {
  case Activation::sigmoid: {
    // σ' = σ (1 - σ).
    Value dr = arith::MulFOp::create(b, loc, d, *r);
    return arith::MulFOp::create(b, loc, dr, buildOneMinus(b, loc, *r))
        .getResult();
  }
  case Activation::tanh: {
    Value r2 = arith::MulFOp::create(b, loc, *r, *r);
    return arith::MulFOp::create(b, loc, d, buildOneMinus(b, loc, r2))
        .getResult();
  }
  case Activation::relu: {
    // The forward is max(z, 0): z > 0 exactly where r > 0.
    FailureOr<Value> zero = ctx.buildSplat(op.getResult(), 0.0);
    if (failed(zero))
      return failure();
    Value positive =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, *r, *zero);
    return arith::SelectOp::create(b, loc, positive, d, *zero).getResult();
  }
  case Activation::identity:
    break;
  }
  llvm_unreachable("handled above");
}

LogicalResult adjoint(GateOp op, AdjointContext &ctx) {
  Value d = ctx.getCotangent(op.getResult());
  if (!d)
    return success();
  if (op.isBatched())
    return op.emitOpError(
        "is a batched gate, which lstm-differentiate does not differentiate: "
        "run lstm-differentiate before lstm-wavefront");
  FailureOr<Value> dz = activationAdjoint(op, ctx, d);
  if (failed(dz))
    return failure();

  for (auto [in, w] : llvm::zip(op.getInputs(), op.getWeights())) {
    if (ctx.isActive(in) && failed(ctx.addProductCotangent(in, *dz, w)))
      return failure();
    if (ctx.isActive(w) && failed(ctx.addWeightCotangent(w, *dz, in)))
      return failure();
  }
  for (Value addend : op.getAddends())
    if (ctx.isActive(addend) && failed(ctx.addCotangent(addend, *dz)))
      return failure();
  for (Value bias : op.getBiases())
    if (ctx.isActive(bias) && failed(ctx.addBroadcastCotangent(bias, *dz)))
      return failure();
  if (Value p = op.getPeephole()) {
    Value state = op.getPeepholeState();
    if (ctx.isActive(p)) {
      FailureOr<Value> s = ctx.getPrimal(state);
      if (failed(s))
        return failure();
      Value rows =
          arith::MulFOp::create(ctx.getBuilder(), op.getLoc(), *dz, *s);
      if (failed(ctx.addBroadcastCotangent(p, rows)))
        return failure();
    }
    if (ctx.isActive(state)) {
      FailureOr<Value> scaled = ctx.buildBroadcastProduct(*dz, p);
      if (failed(scaled) || failed(ctx.addCotangent(state, *scaled)))
        return failure();
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// lstm.pointwise
//===----------------------------------------------------------------------===//

/// The scalar region of the adjoint lstm.pointwise: forward scalars are the
/// recomputed clones of the forward region's values, cotangents are scalars.
class ScalarRegionContext : public AdjointContext {
public:
  ScalarRegionContext(OpBuilder &b, const IRMapping &primals,
                      const llvm::DenseSet<Value> &active)
      : AdjointContext(b), primals(primals), active(active) {}

  bool isActive(Value v) override { return active.contains(v); }
  FailureOr<Value> getPrimal(Value v) override {
    return primals.lookupOrDefault(v);
  }
  Value getCotangent(Value v) override {
    CotangentAccumulator::Builders none{
        [&](Value p) -> FailureOr<Value> { return getPrimal(p); },
        [](Value, bool) -> FailureOr<Value> { return failure(); }};
    FailureOr<Value> c = cotangents.materialize(builder, v.getLoc(), v, none);
    return succeeded(c) ? *c : Value();
  }
  LogicalResult addCotangent(Value v, Value c) override {
    cotangents.add(v, c);
    return success();
  }
  LogicalResult addSliceCotangent(Value v, Value, ArrayRef<OpFoldResult>,
                                  ArrayRef<OpFoldResult>,
                                  ArrayRef<OpFoldResult>) override {
    return unsupported(v);
  }
  LogicalResult addProductCotangent(Value v, Value, Value) override {
    return unsupported(v);
  }
  LogicalResult addWeightCotangent(Value v, Value, Value) override {
    return unsupported(v);
  }
  LogicalResult addBroadcastCotangent(Value v, Value) override {
    return unsupported(v);
  }
  FailureOr<Value> buildBroadcastProduct(Value, Value v) override {
    return unsupported(v);
  }
  FailureOr<Value> buildSplat(Value like, double c) override {
    return buildSplatValue(builder, like.getLoc(), like.getType(), {}, c);
  }
  LogicalResult differentiateLayer(LayerOp layer) override {
    return unsupported(layer.getResult(0));
  }

private:
  LogicalResult unsupported(Value v) {
    return emitError(v.getLoc(),
                     "lstm-differentiate: only elementwise scalar ops are "
                     "differentiated in an lstm.pointwise region");
  }

  const IRMapping &primals;
  const llvm::DenseSet<Value> &active;
  CotangentAccumulator cotangents;
};

bool isFloat(Type type) { return isa<FloatType>(getElementTypeOrSelf(type)); }

LogicalResult adjoint(PointwiseOp op, AdjointContext &ctx) {
  SmallVector<Value> ds(op.getNumResults());
  bool any = false;
  for (auto [j, result] : llvm::enumerate(op.getResults())) {
    ds[j] = ctx.getCotangent(result);
    any |= static_cast<bool>(ds[j]);
  }
  SmallVector<unsigned> activeInputs;
  for (auto [i, input] : llvm::enumerate(op.getInputs()))
    if (ctx.isActive(input))
      activeInputs.push_back(i);
  if (!any || activeInputs.empty())
    return success();

  OpBuilder &b = ctx.getBuilder();
  Location loc = op.getLoc();
  auto fullType = cast<RankedTensorType>(op.getResult(0).getType());
  SmallVector<Value> operands;
  for (Value input : op.getInputs()) {
    FailureOr<Value> p = ctx.getPrimal(input);
    if (failed(p))
      return failure();
    operands.push_back(*p);
  }
  SmallVector<unsigned> seeded;
  for (auto [j, d] : llvm::enumerate(ds))
    if (d) {
      operands.push_back(d);
      seeded.push_back(j);
    }
  // One full-shape result per differentiated operand; a broadcast operand's
  // is summed over the batch afterwards.
  SmallVector<Type> resultTypes;
  for (unsigned i : activeInputs)
    resultTypes.push_back(RankedTensorType::get(
        fullType.getShape(), getElementTypeOrSelf(op.getInputs()[i])));
  auto adjointOp = PointwiseOp::create(b, loc, resultTypes, operands);

  Block &forward = op.getBody().front();
  Block *body = new Block();
  adjointOp.getBody().push_back(body);
  for (Value v : operands)
    body->addArgument(getElementTypeOrSelf(v.getType()), loc);

  // Recompute the forward scalars, then run the scalar rules backwards.
  OpBuilder rb = OpBuilder::atBlockEnd(body);
  IRMapping primals;
  for (auto [arg, clone] :
       llvm::zip(forward.getArguments(),
                 body->getArguments().take_front(forward.getNumArguments())))
    primals.map(arg, clone);
  for (Operation &inner : forward.without_terminator())
    rb.clone(inner, primals);

  llvm::DenseSet<Value> active;
  for (unsigned i : activeInputs)
    if (isFloat(forward.getArgument(i).getType()))
      active.insert(forward.getArgument(i));
  for (Operation &inner : forward.without_terminator())
    if (llvm::any_of(inner.getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : inner.getResults())
        if (isFloat(r.getType()))
          active.insert(r);

  ScalarRegionContext scalar(rb, primals, active);
  PointwiseYieldOp yield = op.getYield();
  for (auto [k, j] : llvm::enumerate(seeded)) {
    Value v = yield.getValues()[j];
    if (active.contains(v))
      (void)scalar.addCotangent(
          v, body->getArgument(forward.getNumArguments() + k));
  }
  for (Operation &inner : llvm::reverse(forward.without_terminator())) {
    if (llvm::none_of(inner.getOperands(),
                      [&](Value v) { return active.contains(v); }))
      continue;
    auto rule = dyn_cast<AdjointOpInterface>(&inner);
    if (!rule)
      return inner.emitOpError(
          "has no derivative (lstm-differentiate); it is in an "
          "lstm.pointwise region");
    if (failed(rule.buildAdjoint(scalar)))
      return failure();
  }
  SmallVector<Value> results;
  for (unsigned i : activeInputs) {
    Value arg = forward.getArgument(i);
    Value c = scalar.getCotangent(arg);
    if (!c)
      c = buildSplatValue(rb, loc, arg.getType(), {}, 0.0);
    results.push_back(c);
  }
  PointwiseYieldOp::create(rb, loc, results);

  for (auto [k, i] : llvm::enumerate(activeInputs)) {
    Value input = op.getInputs()[i];
    Value c = adjointOp.getResult(k);
    LogicalResult added =
        cast<RankedTensorType>(input.getType()).getRank() == fullType.getRank()
            ? ctx.addCotangent(input, c)
            : ctx.addBroadcastCotangent(input, c);
    if (failed(added))
      return failure();
  }
  return success();
}

template <typename OpTy>
struct LSTMOpAdjoint
    : AdjointOpInterface::ExternalModel<LSTMOpAdjoint<OpTy>, OpTy> {
  LogicalResult buildAdjoint(Operation *op, AdjointContext &ctx) const {
    if constexpr (std::is_same_v<OpTy, LayerOp>)
      return ctx.differentiateLayer(cast<LayerOp>(op));
    else
      return adjoint(cast<OpTy>(op), ctx);
  }
};

} // namespace

void lstm::detail::registerLSTMOpAdjoints(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, LSTMDialect *) {
    GateOp::attachInterface<LSTMOpAdjoint<GateOp>>(*ctx);
    PointwiseOp::attachInterface<LSTMOpAdjoint<PointwiseOp>>(*ctx);
    LayerOp::attachInterface<LSTMOpAdjoint<LayerOp>>(*ctx);
  });
}
