//===- PersistentPlan.cpp - What a persistent kernel reads and writes -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The cell must be what lstm-optimize{wavefront=false} makes of an LSTM-like
// cell: recurrent products of whole states (combined or not), and one
// lstm.pointwise that reads them, the step's inputs, the states and values
// defined above, each whole or as a column slice, and makes every output
// and every new state. Anything else in the cell (a product of a value the
// step computes, a gate with an epilogue, a second pointwise op) is a reason
// to leave the layer to the per-step lowering.
//
//===----------------------------------------------------------------------===//

#include "PersistentPlan.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "lstm-to-persistent"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// Fails with `why`, which goes to `whyNot` where given and to the debug
/// stream.
static LogicalResult reject(LayerOp layer, std::string *whyNot,
                            const Twine &why) {
  if (whyNot)
    *whyNot = why.str();
  LLVM_DEBUG(llvm::dbgs() << "lstm-to-persistent: " << layer.getLoc()
                          << ": not persistent: " << why << "\n");
  return failure();
}

static bool isDefinedAbove(Value v, LayerOp layer) {
  return !layer.getBody().isAncestor(v.getParentRegion());
}

/// The state index of `v` if it is a state argument of the cell.
static std::optional<unsigned> stateIndex(Value v, LayerOp layer) {
  for (auto [i, arg] : llvm::enumerate(layer.getStateArgs()))
    if (arg == v)
      return i;
  return std::nullopt;
}

static std::optional<unsigned> inputIndex(Value v, LayerOp layer) {
  for (auto [i, arg] : llvm::enumerate(layer.getInputSlices()))
    if (arg == v)
      return i;
  return std::nullopt;
}

/// A recurrent product: identity, only products, every input a state, every
/// weight a static [M, K] defined above the layer; or why `gate` is not one.
static FailureOr<Product> matchProduct(GateOp gate, LayerOp layer,
                                       std::string &why) {
  if (gate.getActivation() != Activation::identity ||
      !gate.getAddends().empty() || !gate.getBiases().empty() ||
      gate.getPeephole()) {
    why = "a gate with an epilogue (activation, addends, biases or "
          "peephole) in the step";
    return failure();
  }
  if (gate.getInputs().empty() ||
      cast<RankedTensorType>(gate.getType()).getRank() != 2) {
    why = "a gate that is no [B, M] product";
    return failure();
  }
  Product product{gate, {}};
  for (auto [input, weight] : llvm::zip(gate.getInputs(), gate.getWeights())) {
    std::optional<unsigned> state = stateIndex(input, layer);
    if (!state) {
      why = "a product of a value the step computes (such as Cho's "
            "R_n (r * h))";
      return failure();
    }
    auto weightType = cast<RankedTensorType>(weight.getType());
    if (!isDefinedAbove(weight, layer) || !weightType.hasStaticShape()) {
      why = "a weight computed in the step or of dynamic shape";
      return failure();
    }
    product.terms.push_back({*state, weight});
  }
  return product;
}

/// The column offset of a slice [0, c] [B, width] [1, 1] of a [B, M] value,
/// or nullopt.
static std::optional<int64_t> columnSlice(tensor::ExtractSliceOp slice,
                                          int64_t width) {
  if (slice.getSourceType().getRank() != 2 || slice.getType().getRank() != 2)
    return std::nullopt;
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> strides = slice.getStaticStrides();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  if (offsets[0] != 0 || ShapedType::isDynamic(offsets[1]) || strides[0] != 1 ||
      strides[1] != 1 || sizes[1] != width)
    return std::nullopt;
  // Every row: the size is the source's batch extent (a tensor.dim of it,
  // or the same static extent).
  // A static source width, so that the verifier has checked c + width
  // against it.
  if (slice.getSourceType().isDynamicDim(1))
    return std::nullopt;
  if (ShapedType::isDynamic(sizes[0])) {
    auto dim = slice.getSizes().front().getDefiningOp<tensor::DimOp>();
    std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
    if (!dim || index != 0 || dim.getSource() != slice.getSource())
      return std::nullopt;
  } else if (sizes[0] != slice.getSourceType().getDimSize(0)) {
    return std::nullopt;
  }
  return offsets[1];
}

/// Where element (b, n) of pointwise operand `v` comes from.
static FailureOr<OperandSource>
matchOperand(Value v, LayerOp layer, int64_t width,
             const DenseMap<Operation *, unsigned> &productIndex) {
  using Kind = OperandSource::Kind;
  auto type = cast<RankedTensorType>(v.getType());
  if (isDefinedAbove(v, layer)) {
    if (type.getRank() != 1 && type.getRank() != 2)
      return failure();
    return OperandSource{Kind::Above, 0, 0, v};
  }
  Value source = v;
  int64_t column = 0;
  if (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    std::optional<int64_t> c = columnSlice(slice, width);
    if (!c)
      return failure();
    source = slice.getSource();
    column = *c;
  } else if (type.getRank() != 2 || type.getDimSize(1) != width) {
    return failure();
  }
  if (std::optional<unsigned> i = inputIndex(source, layer))
    return OperandSource{Kind::Input, *i, column, {}};
  if (std::optional<unsigned> i = stateIndex(source, layer))
    return OperandSource{Kind::State, *i, column, {}};
  if (Operation *def = source.getDefiningOp())
    if (auto it = productIndex.find(def); it != productIndex.end())
      return OperandSource{Kind::Product, it->second, column, {}};
  return failure();
}

FailureOr<PersistentPlan>
mlir::lstm::persistent::planPersistentLayer(LayerOp layer,
                                            std::string *whyNot) {
  if (layer.getLengths())
    return reject(layer, whyNot, "it has lengths");
  if (layer.getInputs().empty())
    return reject(layer, whyNot, "it has no input sequence");
  PersistentPlan plan;
  plan.layer = layer;
  DenseMap<Operation *, unsigned> productIndex;
  for (Operation &op : layer.getBody().front()) {
    // Slices and extents are how the pointwise op reads its operands;
    // constants feed them.
    if (isa<tensor::DimOp, tensor::ExtractSliceOp, YieldOp>(op) ||
        op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (auto gate = dyn_cast<GateOp>(op)) {
      std::string why;
      FailureOr<Product> product = matchProduct(gate, layer, why);
      if (failed(product))
        return reject(layer, whyNot, why);
      productIndex[gate] = plan.products.size();
      plan.products.push_back(*product);
      continue;
    }
    if (auto pointwise = dyn_cast<PointwiseOp>(op)) {
      if (plan.pointwise)
        return reject(layer, whyNot, "a second lstm.pointwise");
      plan.pointwise = pointwise;
      continue;
    }
    return reject(layer, whyNot,
                  "an op the kernel does not run: " +
                      op.getName().getStringRef());
  }
  if (!plan.pointwise)
    return reject(layer, whyNot,
                  "no lstm.pointwise (run lstm-fuse-elementwise)");

  auto resultType =
      cast<RankedTensorType>(plan.pointwise.getResult(0).getType());
  if (resultType.getRank() != 2 || resultType.isDynamicDim(1))
    return reject(layer, whyNot,
                  "the pointwise op is not [B, N] with a static N");
  plan.width = resultType.getDimSize(1);
  if (!resultType.getElementType().isF32())
    return reject(layer, whyNot, "not f32");

  for (Value operand : plan.pointwise.getInputs()) {
    FailureOr<OperandSource> source =
        matchOperand(operand, layer, plan.width, productIndex);
    if (failed(source))
      return reject(layer, whyNot,
                    "a pointwise operand read other than as a column "
                    "slice of a state, an input, a product or a value "
                    "defined above");
    plan.operands.push_back(*source);
  }

  // Products must be read only by the pointwise op (through slices), and
  // every state they read must be N wide: the kernel reads state[b, i] for
  // i < K = N.
  for (Product &product : plan.products) {
    for (auto &[state, weight] : product.terms)
      if (cast<RankedTensorType>(weight.getType()).getDimSize(1) != plan.width)
        return reject(layer, whyNot, "a product of a state that is not N wide");
    for (Operation *user : product.gate->getUsers()) {
      auto readByPointwise = [&](Operation *op) {
        return op == plan.pointwise.getOperation() || isa<tensor::DimOp>(op);
      };
      if (readByPointwise(user))
        continue;
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!slice || !llvm::all_of(slice->getUsers(), readByPointwise))
        return reject(layer, whyNot,
                      "a product read by something other than the "
                      "pointwise op");
    }
  }

  YieldOp yield = layer.getYield();
  auto resultOf = [&](Value v) -> std::optional<unsigned> {
    for (auto [i, r] : llvm::enumerate(plan.pointwise.getResults()))
      if (r == v)
        return i;
    return std::nullopt;
  };
  for (Value out : yield.getOutputs()) {
    std::optional<unsigned> r = resultOf(out);
    if (!r)
      return reject(layer, whyNot, "an output not made by the pointwise op");
    plan.outputResults.push_back(*r);
  }
  for (Value state : yield.getState()) {
    std::optional<unsigned> r = resultOf(state);
    if (!r)
      return reject(layer, whyNot, "a new state not made by the pointwise op");
    plan.stateResults.push_back(*r);
  }
  for (Value init : layer.getInits()) {
    auto type = cast<RankedTensorType>(init.getType());
    if (type.getRank() != 2 || type.getDimSize(1) != plan.width)
      return reject(layer, whyNot, "a state that is not [B, N]");
  }
  for (Value r : plan.pointwise.getResults())
    if (r.getType() != resultType)
      return reject(layer, whyNot, "pointwise results of different types");
  return plan;
}
