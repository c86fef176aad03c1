//===- LSTMOps.cpp - Operations of the lstm dialect -----------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

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

/// Two extents agree when they are equal or when either is dynamic.
static bool compatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

/// Prints an extent the way it appears in a tensor type.
static std::string extent(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// Every tensor of an lstm op has a size in bytes that fits in 63 bits (as
/// far as its static extents tell): the lowerings compute the offsets and
/// strides of its buffer in 64-bit integers, which would wrap around.
static LogicalResult verifySize(Operation *op, Value v, const Twine &what) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type)
    return success();
  unsigned bits = type.getElementType().isIntOrIndexOrFloat()
                      ? type.getElementType().getIntOrFloatBitWidth()
                      : 8;
  int64_t bytes = std::max<int64_t>(1, llvm::divideCeil(bits, 8));
  for (int64_t d : type.getShape())
    if (!ShapedType::isDynamic(d) && llvm::MulOverflow(bytes, d, bytes))
      return op->emitOpError()
             << what << " of type " << type
             << " is larger than 2^63 bytes, more than any buffer can be";
  return success();
}

/// Feature extents (the K of an input, the H of a weight, the N of an
/// output) are at least 1: only the sequence length, the batch and the
/// group extent may be 0. A layer of zero features computes nothing, and
/// the slices that the passes take of its features (at offset 0 of an
/// empty dimension) are IR that upstream's verifiers reject.
static LogicalResult verifyFeatures(Operation *op, Value v,
                                    ArrayRef<int64_t> dims, const Twine &what) {
  auto type = cast<RankedTensorType>(v.getType());
  for (int64_t d : dims)
    if (d < type.getRank() && type.getDimSize(d) == 0)
      return op->emitOpError()
             << what << " of type " << type << " has no features: its extent "
             << d
             << " is 0 (only the sequence length, the batch and the group "
                "extent may be 0)";
  return success();
}

/// verifySize of every operand and result of `op`.
static LogicalResult verifySizes(Operation *op) {
  for (auto [i, v] : llvm::enumerate(op->getOperands()))
    if (failed(verifySize(op, v, "operand #" + Twine(i))))
      return failure();
  for (auto [i, v] : llvm::enumerate(op->getResults()))
    if (failed(verifySize(op, v, "result #" + Twine(i))))
      return failure();
  return success();
}

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
// GateOp
//===----------------------------------------------------------------------===//

namespace {
/// The extents of a gate's result that its operands must agree with. The
/// batched form puts a group extent L in front of every operand; `lead` is
/// the number of such leading extents (0 or 1), so that the per-gate extents
/// are read at the same positions in both forms.
struct GateExtents {
  RankedTensorType result;
  int64_t lead, groups, batch, hidden;

  explicit GateExtents(GateOp op)
      : result(cast<RankedTensorType>(op.getResult().getType())),
        lead(result.getRank() - 2), groups(lead ? result.getDimSize(0) : 1),
        batch(result.getDimSize(lead)), hidden(result.getDimSize(lead + 1)) {}
};
} // namespace

/// `type` as a diagnostic prints a type argument: in single quotes.
static std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream(s) << "'" << type << "'";
  return s;
}

/// Checks extent `lead + i` of `type` against `expected[i]` (a dynamic
/// expected extent accepts any); on a mismatch, emits "`what` of type
/// `type` `requirement`" at `op`.
static LogicalResult verifyExtents(GateOp op, int64_t lead, const Twine &what,
                                   Type type, ArrayRef<int64_t> expected,
                                   const Twine &requirement) {
  auto t = cast<RankedTensorType>(type);
  for (auto [i, e] : llvm::enumerate(expected))
    if (!compatible(t.getDimSize(lead + i), e))
      return op.emitOpError() << what << " of type " << t << " " << requirement;
  return success();
}

/// The operand lists, element types and ranks of `op`: every operand is of
/// the result's form, [L, ...] operands with a batched result, plain ones
/// otherwise, with L compatible with the result's.
static LogicalResult verifyGateOperands(GateOp op, const GateExtents &ext) {
  if (op.getInputs().empty() && op.getAddends().empty() && !op.getPeephole())
    return op.emitOpError(
        "needs at least one (input, weight) pair, addend or peephole");
  if (op.getInputs().size() != op.getWeights().size())
    return op.emitOpError("has ") << op.getInputs().size() << " inputs but "
                                  << op.getWeights().size() << " weights";
  if (static_cast<bool>(op.getPeephole()) !=
      static_cast<bool>(op.getPeepholeState()))
    return op.emitOpError(
        "needs both a peephole weight and the state it reads");
  if (failed(verifySizes(op)))
    return failure();

  Type elementType = ext.result.getElementType();
  for (Value v : op->getOperands())
    if (getElementTypeOrSelf(v.getType()) != elementType)
      return op.emitOpError("operand of type ")
             << v.getType() << " does not have the result's element type "
             << elementType;

  auto isVector = [&](Value v) {
    return llvm::is_contained(op.getBiases(), v) || v == op.getPeephole();
  };
  for (Value v : op->getOperands()) {
    auto t = cast<RankedTensorType>(v.getType());
    int64_t expected = isVector(v) ? ext.lead + 1 : ext.lead + 2;
    if (t.getRank() != expected)
      return op.emitOpError("operand of type ")
             << t << " must have rank " << expected << " like the "
             << (ext.lead ? "batched" : "unbatched") << " result "
             << ext.result;
    if (ext.lead && !compatible(t.getDimSize(0), ext.groups))
      return op.emitOpError("operand of type ")
             << t << " must have " << extent(ext.groups)
             << " groups (the result's leading extent)";
  }
  return success();
}

/// The feature extents of `op`'s result and operands (verifyFeatures), once
/// their ranks are known right.
static LogicalResult verifyGateFeatures(GateOp op, const GateExtents &ext) {
  auto features = [&](Value v, ArrayRef<int64_t> dims, const Twine &what) {
    SmallVector<int64_t> shifted;
    for (int64_t d : dims)
      shifted.push_back(d + ext.lead);
    return verifyFeatures(op, v, shifted, what);
  };
  if (failed(features(op.getResult(), {1}, "the result")))
    return failure();
  for (auto [k, v] : llvm::enumerate(op.getInputs()))
    if (failed(features(v, {1}, "input #" + Twine(k))))
      return failure();
  for (auto [k, v] : llvm::enumerate(op.getWeights()))
    if (failed(features(v, {0, 1}, "weight #" + Twine(k))))
      return failure();
  for (auto [a, v] : llvm::enumerate(op.getAddends()))
    if (failed(features(v, {1}, "addend #" + Twine(a))))
      return failure();
  for (auto [j, v] : llvm::enumerate(op.getBiases()))
    if (failed(features(v, {0}, "bias #" + Twine(j))))
      return failure();
  if (Value p = op.getPeephole())
    if (failed(features(p, {0}, "the peephole weight")) ||
        failed(features(op.getPeepholeState(), {1}, "the peephole state")))
      return failure();
  return success();
}

/// The extents of `op`'s operands against the result's batch and hidden
/// size, and each weight's columns against its input's features.
static LogicalResult verifyGateExtents(GateOp op, const GateExtents &ext) {
  int64_t lead = ext.lead, batch = ext.batch, hidden = ext.hidden;
  std::string resultShape =
      "must have the result's shape " + typeString(ext.result);
  for (auto [k, pair] : llvm::enumerate(
           llvm::zip(op.getInputs().getTypes(), op.getWeights().getTypes()))) {
    auto [in, w] = pair;
    int64_t columns = cast<RankedTensorType>(in).getDimSize(lead + 1);
    std::string input = ("input #" + Twine(k)).str();
    std::string weight = ("weight #" + Twine(k)).str();
    if (failed(verifyExtents(op, lead, input, in, {batch},
                             "does not have the result's batch size " +
                                 extent(batch))) ||
        failed(verifyExtents(op, lead, weight, w, {hidden},
                             "must have " + extent(hidden) +
                                 " rows (the result's hidden size)")) ||
        failed(verifyExtents(
            op, lead, weight, w, {ShapedType::kDynamic, columns},
            "must have " + extent(columns) + " columns to multiply " + input +
                " of type " + typeString(in))))
      return failure();
  }
  for (auto [a, type] : llvm::enumerate(op.getAddends().getTypes()))
    if (failed(verifyExtents(op, lead, "addend #" + Twine(a), type,
                             {batch, hidden}, resultShape)))
      return failure();
  for (auto [j, type] : llvm::enumerate(op.getBiases().getTypes()))
    if (failed(verifyExtents(op, lead, "bias #" + Twine(j), type, {hidden},
                             "must have " + extent(hidden) + " elements")))
      return failure();
  if (Value p = op.getPeephole())
    if (failed(verifyExtents(op, lead, "peephole weight", p.getType(), {hidden},
                             "must have " + extent(hidden) + " elements")) ||
        failed(verifyExtents(op, lead, "peephole state",
                             op.getPeepholeState().getType(), {batch, hidden},
                             resultShape)))
      return failure();
  return success();
}

LogicalResult GateOp::verify() {
  GateExtents ext(*this);
  if (failed(verifyGateOperands(*this, ext)) ||
      failed(verifyGateFeatures(*this, ext)))
    return failure();
  return verifyGateExtents(*this, ext);
}

//===----------------------------------------------------------------------===//
// PointwiseOp
//===----------------------------------------------------------------------===//

PointwiseYieldOp PointwiseOp::getYield() {
  return cast<PointwiseYieldOp>(getBody().front().getTerminator());
}

/// Whether `type` is a scalar that a pointwise region can compute with.
static bool isScalar(Type type) {
  return isa<IntegerType, FloatType, IndexType>(type);
}

/// Prints a shape as "[2, ?, 8]".
static std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? ", " : "") + extent(d);
  return s + "]";
}

LogicalResult PointwiseOp::verify() {
  if (getResults().empty())
    return emitOpError("needs at least one result");
  if (failed(verifySizes(*this)))
    return failure();
  // The iteration space is [B, N], or [L, B, N] for the batched cell of a
  // wavefront; operands without the batch extent are broadcast along it.
  int64_t rank = cast<RankedTensorType>(getResult(0).getType()).getRank();
  int64_t batchDim = rank - 2;
  // The common shape, refined by every static extent seen so far.
  SmallVector<int64_t> common(rank, ShapedType::kDynamic);
  bool hasFull = false;
  auto check = [&](RankedTensorType type, StringRef what,
                   unsigned index) -> LogicalResult {
    if (!isScalar(type.getElementType()))
      return emitOpError() << what << " #" << index << " of type " << type
                           << " must have an integer, index or float element "
                              "type";
    // The positions in the common shape of the type's dimensions.
    SmallVector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d)
      if (type.getRank() == rank || d != batchDim)
        dims.push_back(d);
    if (type.getRank() != static_cast<int64_t>(dims.size()))
      return emitOpError() << what << " #" << index << " of type " << type
                           << " must have rank " << rank << " or " << rank - 1
                           << " (the results' rank " << rank
                           << ", without the batch extent)";
    for (auto [i, d] : llvm::enumerate(dims)) {
      if (compatible(type.getDimSize(i), common[d]))
        continue;
      if (type.getRank() == rank)
        return emitOpError()
               << what << " #" << index << " of type " << type
               << " does not match the common shape " << shapeString(common);
      return emitOpError() << what << " #" << index << " of type " << type
                           << " must have the common shape "
                           << shapeString(common)
                           << " without its batch extent";
    }
    for (auto [i, d] : llvm::enumerate(dims))
      if (ShapedType::isDynamic(common[d]))
        common[d] = type.getDimSize(i);
    return success();
  };
  // Full-rank values first, so that a broadcast operand is compared with
  // the established extents.
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() == rank) {
      hasFull = true;
      if (failed(check(type, "operand", i)))
        return failure();
    }
  }
  for (auto [i, v] : llvm::enumerate(getResults()))
    if (failed(check(cast<RankedTensorType>(v.getType()), "result", i)))
      return failure();
  for (auto [i, v] : llvm::enumerate(getInputs())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (type.getRank() != rank && failed(check(type, "operand", i)))
      return failure();
  }
  if (!hasFull)
    return emitOpError("needs at least one operand of the results' rank (the "
                       "batch extent comes from it)");
  for (Value v : llvm::concat<Value>(getInputs(), getResults())) {
    auto type = cast<RankedTensorType>(v.getType());
    if (failed(verifyFeatures(*this, v, {type.getRank() - 1},
                              "a value of the region's iteration space")))
      return failure();
  }
  return success();
}

LogicalResult PointwiseOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("region takes ")
           << body.getNumArguments() << " arguments, expected one per operand ("
           << getInputs().size() << ")";
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(body.getArgumentTypes(), getInputs().getTypes()))) {
    Type expected = getElementTypeOrSelf(std::get<1>(pair));
    if (std::get<0>(pair) != expected)
      return emitOpError("region argument #")
             << i << " has type " << std::get<0>(pair) << ", expected "
             << expected << " (the element type of operand #" << i << ")";
  }
  auto yield = dyn_cast<PointwiseYieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("region must end with lstm.pointwise_yield");
  if (yield.getValues().size() != getResults().size())
    return yield.emitOpError("yields ")
           << yield.getValues().size() << " values but the op has "
           << getResults().size() << " results";
  for (auto [i, pair] : llvm::enumerate(
           llvm::zip(yield.getValues().getTypes(), getResults().getTypes()))) {
    Type expected = getElementTypeOrSelf(std::get<1>(pair));
    if (std::get<0>(pair) != expected)
      return yield.emitOpError("value #")
             << i << " has type " << std::get<0>(pair) << ", expected "
             << expected << " (the element type of result #" << i << ")";
  }
  for (Operation &op : body.without_terminator()) {
    // The region runs once per element, in any order and possibly in
    // parallel: only pure scalar computations are meaningful there.
    if (op.getNumRegions() != 0 || !isMemoryEffectFree(&op))
      return op.emitOpError("is not allowed in an lstm.pointwise region: "
                            "only side-effect-free scalar ops are");
    for (Type type :
         llvm::concat<const Type>(op.getOperandTypes(), op.getResultTypes()))
      if (!isScalar(type))
        return op.emitOpError("computes on ")
               << type
               << " in an lstm.pointwise region, which takes only "
                  "scalars";
  }
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
