//===- LSTMOps.cpp - Operations of the lstm dialect -----------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The ops' definitions (ODS), their custom directives, the layer's
// verifiers and the activations' builder. The gate's verifier is in
// GateOps.cpp, the pointwise op's in PointwiseOps.cpp, the checks they
// share in OpVerification.cpp.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

#include "OpVerification.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::op_verification;

#include "lstm/Dialect/LSTM/IR/LSTMOpsEnums.cpp.inc"

//===----------------------------------------------------------------------===//
// Custom directives
//===----------------------------------------------------------------------===//

/// `(T1, T2), (T3)`: two parenthesised type lists, either of which may be
/// empty (the declarative `( type($x) )` cannot parse an empty list).
static ParseResult parseTypeListPair(OpAsmParser &parser,
                                     SmallVectorImpl<Type> &first,
                                     SmallVectorImpl<Type> &second) {
  auto parseList = [&](SmallVectorImpl<Type> &types) {
    return parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren, [&]() {
      return parser.parseType(types.emplace_back());
    });
  };
  if (parseList(first) || parser.parseComma() || parseList(second))
    return failure();
  return success();
}

static void printTypeListPair(OpAsmPrinter &printer, Operation *,
                              TypeRange first, TypeRange second) {
  printer << "(" << first << "), (" << second << ")";
}

#define GET_OP_CLASSES
#include "lstm/Dialect/LSTM/IR/LSTMOps.cpp.inc"

//===----------------------------------------------------------------------===//
// LayerOp
//===----------------------------------------------------------------------===//

YieldOp LayerOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult LayerOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input sequence");
  if (getInits().empty())
    return emitOpError("needs at least one recurrent state");
  if (failed(verifySizes(*this)))
    return failure();
  for (auto [i, v] : llvm::enumerate(getInputs()))
    if (failed(verifyFeatures(*this, v, {2}, "input #" + Twine(i))))
      return failure();
  for (auto [i, v] : llvm::enumerate(getOutputs()))
    if (failed(verifyFeatures(*this, v, {2}, "output #" + Twine(i))))
      return failure();
  for (auto [i, v] : llvm::enumerate(getInits())) {
    auto type = cast<RankedTensorType>(v.getType());
    SmallVector<int64_t> dims;
    for (int64_t d = 1; d < type.getRank(); ++d)
      dims.push_back(d);
    if (failed(verifyFeatures(*this, v, dims, "initial state #" + Twine(i))))
      return failure();
  }

  auto first = cast<RankedTensorType>(getInputs().front().getType());
  int64_t seqLen = first.getDimSize(0), batch = first.getDimSize(1);
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!compatible(type.getDimSize(0), seqLen) ||
        !compatible(type.getDimSize(1), batch))
      return emitOpError("input #")
             << i << " has shape " << type
             << " whose [T, B] does not match input #0 (" << first << ")";
  }
  for (auto [i, v] : llvm::enumerate(getInits())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() < 1 || !compatible(type.getDimSize(0), batch))
      return emitOpError("initial state #")
             << i << " of type " << type << " must have the batch size ("
             << extent(batch) << ") as its leading dimension";
  }
  if (Value lengths = getLengths()) {
    auto type = cast<RankedTensorType>(lengths.getType());
    if (!compatible(type.getDimSize(0), batch))
      return emitOpError("lengths of type ")
             << type << " must have one entry per batch row (" << extent(batch)
             << ")";
  }
  for (auto [i, v] : llvm::enumerate(getOutputs())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!compatible(type.getDimSize(0), seqLen) ||
        !compatible(type.getDimSize(1), batch))
      return emitOpError("output #")
             << i << " of type " << type
             << " must be [T, B, N] with the inputs' T and B";
  }
  return success();
}

/// The cell is the body of the loop over time. The recurrent state is the
/// loop-carried part: `init` operands, the state block arguments, the
/// yielded `state` and the final states are the interface's inits, region
/// iteration arguments, yielded values and loop results. The step's input
/// slices are neither (they are read from the sequences, not carried), and
/// there is no scalar induction variable to expose.
SmallVector<Region *> LayerOp::getLoopRegions() { return {&getBody()}; }

Block::BlockArgListType LayerOp::getRegionIterArgs() { return getStateArgs(); }

std::optional<MutableArrayRef<OpOperand>> LayerOp::getYieldedValuesMutable() {
  // Also called by the interface's verifier, before the block's terminator
  // has been checked.
  Block &body = getBody().front();
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return std::nullopt;
  return MutableArrayRef<OpOperand>(yield.getStateMutable());
}

std::optional<ResultRange> LayerOp::getLoopResults() { return getFinals(); }

/// Run by the CellMatchesLayer trait, before LoopLikeOpInterface's verifier
/// reads the states as a loop's iteration arguments (whose messages would not
/// say which argument of the cell is wrong, or why).
LogicalResult LayerOp::verifyCell() {
  if (getFinals().size() != getInits().size())
    return emitOpError("has ") << getInits().size() << " initial states but "
                               << getFinals().size() << " final states";
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(getInits().getTypes(), getFinals().getTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return emitOpError("final state #")
             << i << " has type " << std::get<1>(pair)
             << " but its initial state has type " << std::get<0>(pair);

  Block &body = getBody().front();
  size_t numInputs = getInputs().size(), numStates = getInits().size();
  if (body.getNumArguments() != numInputs + numStates)
    return emitOpError("cell takes ")
           << body.getNumArguments() << " arguments, expected " << numInputs
           << " input slices followed by " << numStates << " states";

  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto seq = cast<RankedTensorType>(v.getType());
    auto expected = RankedTensorType::get(
        {seq.getDimSize(1), seq.getDimSize(2)}, seq.getElementType());
    if (body.getArgument(i).getType() != expected)
      return emitOpError("cell argument #")
             << i << " has type " << body.getArgument(i).getType()
             << ", expected the step slice " << expected << " of input #" << i;
  }
  for (auto [i, v] : llvm::enumerate(getInits()))
    if (body.getArgument(numInputs + i).getType() != v.getType())
      return emitOpError("cell argument #")
             << numInputs + i << " has type "
             << body.getArgument(numInputs + i).getType()
             << ", expected the type of initial state #" << i << " ("
             << v.getType() << ")";

  // A cell without its terminator is reported by the region's verifier.
  auto yield = body.empty() ? YieldOp() : dyn_cast<YieldOp>(body.back());
  if (!yield)
    return success();
  if (yield.getOutputs().size() != getOutputs().size())
    return yield.emitOpError("yields ")
           << yield.getOutputs().size() << " outputs but the layer has "
           << getOutputs().size();
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(yield.getOutputs().getTypes(), getOutputs().getTypes()))) {
    auto step = cast<RankedTensorType>(std::get<0>(pair));
    auto seq = cast<RankedTensorType>(std::get<1>(pair));
    auto expected = RankedTensorType::get(
        {seq.getDimSize(1), seq.getDimSize(2)}, seq.getElementType());
    if (step != expected)
      return yield.emitOpError("output #")
             << i << " has type " << step << ", expected " << expected
             << " (one step of the layer's output " << seq << ")";
  }
  if (yield.getState().size() != getInits().size())
    return yield.emitOpError("yields ")
           << yield.getState().size() << " states but the layer has "
           << getInits().size();
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(yield.getState().getTypes(), getInits().getTypes())))
    if (std::get<0>(pair) != std::get<1>(pair))
      return yield.emitOpError("state #")
             << i << " has type " << std::get<0>(pair)
             << ", expected the initial state's type " << std::get<1>(pair);
  return success();
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

Value mlir::lstm::buildActivation(OpBuilder &b, Location loc, Activation act,
                                  Value x) {
  Type type = x.getType();
  switch (act) {
  case Activation::identity:
    return x;
  case Activation::tanh:
    return math::TanhOp::create(b, loc, x);
  case Activation::relu: {
    Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(type));
    return arith::MaximumFOp::create(b, loc, x, zero);
  }
  case Activation::sigmoid: {
    // 1 / (1 + exp(-x)): exp overflows to +inf for very negative x, which
    // correctly yields 0.
    Value one = arith::ConstantOp::create(b, loc, b.getFloatAttr(type, 1.0));
    Value neg = arith::NegFOp::create(b, loc, x);
    Value e = math::ExpOp::create(b, loc, neg);
    Value den = arith::AddFOp::create(b, loc, one, e);
    return arith::DivFOp::create(b, loc, one, den);
  }
  }
  llvm_unreachable("unknown activation");
}
