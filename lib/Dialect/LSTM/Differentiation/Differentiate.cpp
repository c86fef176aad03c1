//===- Differentiate.cpp - Gradient functions of lstm networks ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The gradient function `@f_grad` is built first: a copy of the forward
// body followed by its adjoint, built op by op in reverse order by the
// AdjointOpInterface rules in a FunctionAdjointContext (layers rebuild
// themselves with their tape as extra outputs). The training forward
// `@f_train` and the backward `@f_backward` are then cut out of it: what the
// backward half reads from the forward half is either recomputed (slices,
// concatenations and other cheap ops) or, when it comes out of a layer or a
// GEMM, returned by `@f_train` and taken by `@f_backward`.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Differentiation/Differentiate.h"

#include "FunctionAdjoint.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

std::string lstm::getGradFunctionName(StringRef name) {
  return (name + "_grad").str();
}
std::string lstm::getTrainFunctionName(StringRef name) {
  return (name + "_train").str();
}
std::string lstm::getBackwardFunctionName(StringRef name) {
  return (name + "_backward").str();
}

/// Moves the work of each cell that does not depend on the step (slices of
/// weights, constants) before its layer: then every weight, bias and
/// constant a cell uses is defined outside it, where the backward pass sums
/// its cotangent over all steps.
static void hoistCellInvariants(func::FuncOp func) {
  func.walk([](LayerOp layer) {
    Region &cell = layer.getBody();
    moveLoopInvariantCode(
        {&cell},
        [&](Value v, Region *) {
          return !cell.isAncestor(v.getParentRegion());
        },
        [](Operation *op, Region *) {
          return isMemoryEffectFree(op) && isSpeculatable(op);
        },
        [&](Operation *op, Region *) { op->moveBefore(layer); });
  });
}

/// Ops whose results the backward takes from the training forward rather
/// than recomputing them: the recurrences and the GEMMs.
static bool isExpensive(Operation *op) {
  if (isa<LayerOp>(op))
    return true;
  auto gate = dyn_cast<GateOp>(op);
  return gate && !gate.getInputs().empty();
}

namespace {
/// The gradient function before it is cut: its forward half ends at
/// `boundary`, an unrealized_conversion_cast without results whose operands
/// are the forward's results (so that they follow the layers' rebuilding).
struct GradientBody {
  func::FuncOp grad;
  Operation *boundary;
  unsigned numArgs;
  unsigned numResults;
};
} // namespace

/// Builds `@f_grad` with the boundary still in it.
static FailureOr<GradientBody>
buildGradient(RewriterBase &rewriter, func::FuncOp func, StringRef name) {
  Location loc = func.getLoc();
  auto grad = cast<func::FuncOp>(rewriter.clone(*func));
  grad.setSymName(name);
  grad.setPublic();
  hoistCellInvariants(grad);
  Block &body = grad.front();
  unsigned numArgs = body.getNumArguments();
  // Activity before the cotangent arguments exist: those are not inputs.
  ActivityAnalysis activity(grad);
  SmallVector<BlockArgument> cotangentArgs;
  for (Type type : func.getResultTypes())
    cotangentArgs.push_back(body.addArgument(type, loc));

  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Operation *> forwardOps;
  for (Operation &op : body.without_terminator())
    forwardOps.push_back(&op);
  rewriter.setInsertionPoint(ret);
  Operation *boundary = UnrealizedConversionCastOp::create(
      rewriter, loc, TypeRange{}, ret.getOperands());

  FunctionAdjointContext ctx(rewriter, activity);
  for (auto [result, cotangent] : llvm::zip(ret.getOperands(), cotangentArgs))
    if (activity.isActive(result))
      (void)ctx.addCotangent(result, cotangent);
  for (Operation *op : llvm::reverse(forwardOps)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return ctx.hasCotangent(r); }))
      continue;
    auto rule = dyn_cast<AdjointOpInterface>(op);
    if (!rule)
      return op->emitOpError("has no derivative (lstm-differentiate)");
    if (failed(rule.buildAdjoint(ctx)))
      return failure();
  }

  SmallVector<Value> gradients;
  for (BlockArgument arg : body.getArguments().take_front(numArgs)) {
    if (!isFloatLike(arg.getType()))
      continue;
    Value c = ctx.getCotangent(arg);
    if (!c)
      c = *ctx.buildSplat(arg, 0.0);
    gradients.push_back(c);
  }
  rewriter.modifyOpInPlace(ret, [&] { ret->setOperands(gradients); });
  grad.setFunctionType(rewriter.getFunctionType(
      body.getArgumentTypes(), ValueRange(gradients).getTypes()));
  return GradientBody{grad, boundary, numArgs,
                      static_cast<unsigned>(func.getNumResults())};
}

/// Cuts `@f_train` and `@f_backward` out of the gradient body.
static std::pair<func::FuncOp, func::FuncOp>
splitGradient(RewriterBase &rewriter, GradientBody g, StringRef trainName,
              StringRef backwardName) {
  Block &body = g.grad.front();
  Operation *boundary = g.boundary;
  Operation *ret = body.getTerminator();
  Location loc = g.grad.getLoc();
  auto inForwardHalf = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && def->getBlock() == &body && def->isBeforeInBlock(boundary);
  };

  // The forward values the backward half reads, and how it gets them.
  llvm::SetVector<Value> reads;
  for (Operation *op = boundary->getNextNode(); op; op = op->getNextNode())
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (inForwardHalf(v))
          reads.insert(v);
    });
  llvm::SetVector<Value> saved;
  llvm::DenseSet<Operation *> recomputed;
  SmallVector<Value> worklist(reads.begin(), reads.end());
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (!inForwardHalf(v))
      continue;
    Operation *def = v.getDefiningOp();
    if (isExpensive(def)) {
      saved.insert(v);
      continue;
    }
    if (!recomputed.insert(def).second)
      continue;
    def->walk([&](Operation *nested) {
      for (Value operand : nested->getOperands())
        worklist.push_back(operand);
    });
  }

  SmallVector<Value> results(boundary->getOperands());
  llvm::SetVector<Value> resultSet(results.begin(), results.end());
  SmallVector<Value> extra;
  for (Value v : saved)
    if (!resultSet.contains(v))
      extra.push_back(v);
  // Saved values in a deterministic order: the order of the forward body.
  llvm::sort(extra, [](Value a, Value b) {
    Operation *da = a.getDefiningOp(), *db = b.getDefiningOp();
    if (da != db)
      return da->isBeforeInBlock(db);
    return cast<OpResult>(a).getResultNumber() <
           cast<OpResult>(b).getResultNumber();
  });
  ArrayRef<BlockArgument> args = body.getArguments().take_front(g.numArgs);
  ArrayRef<BlockArgument> cotangents =
      body.getArguments().drop_front(g.numArgs);

  // @f_train: the forward half, returning the results and the saved values.
  SmallVector<Type> trainResults(ValueRange(results).getTypes());
  llvm::append_range(trainResults, ValueRange(extra).getTypes());
  rewriter.setInsertionPointAfter(g.grad);
  auto train = func::FuncOp::create(
      rewriter, loc, trainName,
      rewriter.getFunctionType(ValueRange(args).getTypes(), trainResults));
  {
    Block *entry = train.addEntryBlock();
    IRMapping map;
    map.map(ValueRange(args), entry->getArguments());
    rewriter.setInsertionPointToEnd(entry);
    for (Operation *op = &body.front(); op != boundary; op = op->getNextNode())
      rewriter.clone(*op, map);
    SmallVector<Value> returned;
    for (Value v : llvm::concat<Value>(results, extra))
      returned.push_back(map.lookupOrDefault(v));
    func::ReturnOp::create(rewriter, loc, returned);
  }

  // @f_backward: the recomputed forward values, then the backward half.
  SmallVector<Type> backwardArgs(ValueRange(args).getTypes());
  llvm::append_range(backwardArgs, trainResults);
  llvm::append_range(backwardArgs, ValueRange(cotangents).getTypes());
  rewriter.setInsertionPointAfter(train);
  auto backward = func::FuncOp::create(
      rewriter, loc, backwardName,
      rewriter.getFunctionType(backwardArgs, ret->getOperandTypes()));
  {
    Block *entry = backward.addEntryBlock();
    IRMapping map;
    unsigned next = 0;
    for (BlockArgument arg : args)
      map.map(arg, entry->getArgument(next++));
    for (Value v : llvm::concat<Value>(results, extra)) {
      BlockArgument arg = entry->getArgument(next++);
      // A result returned twice, or an argument returned, is read from the
      // first place it is passed in.
      if (!map.contains(v))
        map.map(v, arg);
    }
    for (BlockArgument arg : cotangents)
      map.map(arg, entry->getArgument(next++));
    rewriter.setInsertionPointToEnd(entry);
    for (Operation *op = &body.front(); op != boundary; op = op->getNextNode())
      if (recomputed.contains(op))
        rewriter.clone(*op, map);
    for (Operation *op = boundary->getNextNode(); op; op = op->getNextNode())
      rewriter.clone(*op, map);
  }
  return {train, backward};
}

FailureOr<GradientFunctions> lstm::differentiateFunction(RewriterBase &rewriter,
                                                         func::FuncOp func) {
  if (func.isExternal() || !llvm::hasSingleElement(func.getBody()))
    return func.emitOpError("lstm-differentiate needs a function body of one "
                            "block");
  std::string names[] = {getGradFunctionName(func.getSymName()),
                         getTrainFunctionName(func.getSymName()),
                         getBackwardFunctionName(func.getSymName())};
  Operation *table = SymbolTable::getNearestSymbolTable(func);
  for (const std::string &name : names)
    if (SymbolTable::lookupSymbolIn(table, name))
      return func.emitOpError("lstm-differentiate would add @")
             << name << ", which the module already has";

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPointAfter(func);
  FailureOr<GradientBody> body = buildGradient(rewriter, func, names[0]);
  if (failed(body)) {
    // Take back the partial gradient function.
    if (auto partial = SymbolTable::lookupSymbolIn(table, names[0]))
      rewriter.eraseOp(partial);
    return failure();
  }
  auto [train, backward] = splitGradient(rewriter, *body, names[1], names[2]);
  rewriter.eraseOp(body->boundary);
  for (func::FuncOp f : {body->grad, train, backward})
    (void)simplifyRegions(rewriter, f.getBody());
  return GradientFunctions{body->grad, train, backward};
}
