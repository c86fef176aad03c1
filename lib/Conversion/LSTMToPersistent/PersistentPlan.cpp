//===- PersistentPlan.cpp - What a persistent kernel reads and writes -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The cell must be what lstm-optimize{wavefront=false} makes of a cell:
// products of whole states or of whole results of pointwise ops (combined or
// not), and lstm.pointwise ops that read them, the step's inputs, the
// states, values defined above and earlier pointwise results, each whole or
// as a column slice, and make every output and every new state. A product
// of a computed value (Cho's R_n (r * h)) starts a new phase of the step.
// Anything else in the cell (a gate with an epilogue, a value of another
// width) is a reason to leave the layer to the per-step lowering.
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

/// A product: identity, only products, every input a state or (`computed`
/// knows it) a result of an earlier pointwise op, every weight a static
/// [M, K] defined above the layer; or why `gate` is not one.
static FailureOr<Product>
matchProduct(GateOp gate, LayerOp layer,
             const DenseMap<Value, Computed> &computed, std::string &why) {
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
    TermInput term;
    if (std::optional<unsigned> state = stateIndex(input, layer)) {
      term.state = *state;
    } else if (auto it = computed.find(input); it != computed.end()) {
      term.isState = false;
      term.computed = it->second;
    } else {
      why = "a product of a value that is neither a state nor a whole result "
            "of a pointwise op";
      return failure();
    }
    auto weightType = cast<RankedTensorType>(weight.getType());
    if (!isDefinedAbove(weight, layer) || !weightType.hasStaticShape()) {
      why = "a weight computed in the step or of dynamic shape";
      return failure();
    }
    product.terms.push_back({term, weight});
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
             const DenseMap<Operation *, unsigned> &productIndex,
             const DenseMap<Value, Computed> &computed) {
  using Kind = OperandSource::Kind;
  auto type = cast<RankedTensorType>(v.getType());
  if (isDefinedAbove(v, layer)) {
    if (type.getRank() != 1 && type.getRank() != 2)
      return failure();
    return OperandSource{Kind::Above, 0, 0, v, {}};
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
    return OperandSource{Kind::Input, *i, column, {}, {}};
  if (std::optional<unsigned> i = stateIndex(source, layer))
    return OperandSource{Kind::State, *i, column, {}, {}};
  if (Operation *def = source.getDefiningOp())
    if (auto it = productIndex.find(def); it != productIndex.end())
      return OperandSource{Kind::Product, it->second, column, {}, {}};
  if (auto it = computed.find(source); it != computed.end() && column == 0)
    return OperandSource{Kind::Computed, 0, 0, {}, it->second};
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
  // The pointwise results the step computes, and per product its phase.
  DenseMap<Value, Computed> computed;
  SmallVector<unsigned> productPhase;
  for (Operation &op : layer.getBody().front()) {
    // Slices and extents are how the pointwise ops read their operands;
    // constants feed them.
    if (isa<tensor::DimOp, tensor::ExtractSliceOp, YieldOp>(op) ||
        op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (auto gate = dyn_cast<GateOp>(op)) {
      std::string why;
      FailureOr<Product> product = matchProduct(gate, layer, computed, why);
      if (failed(product))
        return reject(layer, whyNot, why);
      // A product of computed values waits for every unit of them.
      unsigned phase = 0;
      for (auto &[input, weight] : product->terms)
        if (!input.isState)
          phase = std::max(phase, plan.pointwise[input.computed.op].phase + 1);
      productIndex[gate] = plan.products.size();
      plan.products.push_back(*product);
      productPhase.push_back(phase);
      continue;
    }
    if (auto pointwise = dyn_cast<PointwiseOp>(op)) {
      auto resultType =
          cast<RankedTensorType>(pointwise.getResult(0).getType());
      if (plan.pointwise.empty()) {
        if (resultType.getRank() != 2 || resultType.isDynamicDim(1))
          return reject(layer, whyNot,
                        "the pointwise op is not [B, N] with a static N");
        if (!resultType.getElementType().isF32())
          return reject(layer, whyNot, "not f32");
        plan.width = resultType.getDimSize(1);
      }
      Type common = plan.pointwise.empty()
                        ? Type(resultType)
                        : plan.pointwise.front().op.getResult(0).getType();
      for (Value r : pointwise.getResults())
        if (r.getType() != common)
          return reject(layer, whyNot, "pointwise results of different types");
      PointwiseStep step{pointwise, {}, 0};
      for (Value operand : pointwise.getInputs()) {
        FailureOr<OperandSource> source =
            matchOperand(operand, layer, plan.width, productIndex, computed);
        if (failed(source))
          return reject(layer, whyNot,
                        "a pointwise operand read other than as a column "
                        "slice of a state, an input, a product, a value "
                        "defined above or a whole result of a pointwise op");
        if (source->kind == OperandSource::Kind::Product)
          step.phase = std::max(step.phase, productPhase[source->index]);
        if (source->kind == OperandSource::Kind::Computed)
          step.phase =
              std::max(step.phase, plan.pointwise[source->computed.op].phase);
        step.operands.push_back(*source);
      }
      unsigned index = plan.pointwise.size();
      for (auto [r, result] : llvm::enumerate(pointwise.getResults()))
        computed[result] = Computed{index, unsigned(r)};
      plan.numPhases = std::max(plan.numPhases, step.phase + 1);
      plan.pointwise.push_back(std::move(step));
      continue;
    }
    return reject(layer, whyNot,
                  "an op the kernel does not run: " +
                      op.getName().getStringRef());
  }
  if (plan.pointwise.empty())
    return reject(layer, whyNot,
                  "no lstm.pointwise (run lstm-fuse-elementwise)");

  // Products must be read only by pointwise ops (through slices), and
  // every value they read must be N wide: the kernel reads v[b, i] for
  // i < K = N.
  for (Product &product : plan.products) {
    for (auto &[input, weight] : product.terms)
      if (cast<RankedTensorType>(weight.getType()).getDimSize(1) != plan.width)
        return reject(layer, whyNot, "a product of a value that is not N wide");
    for (Operation *user : product.gate->getUsers()) {
      auto readByPointwise = [&](Operation *op) {
        return isa<PointwiseOp, tensor::DimOp>(op);
      };
      if (readByPointwise(user))
        continue;
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!slice || !llvm::all_of(slice->getUsers(), readByPointwise))
        return reject(layer, whyNot,
                      "a product read by something other than a "
                      "pointwise op");
    }
  }

  YieldOp yield = layer.getYield();
  auto yieldSource =
      [&](Value v) -> std::optional<PersistentPlan::YieldSource> {
    if (std::optional<unsigned> state = stateIndex(v, layer))
      return PersistentPlan::YieldSource{true, *state, {}};
    if (auto it = computed.find(v); it != computed.end())
      return PersistentPlan::YieldSource{false, 0, it->second};
    return std::nullopt;
  };
  for (Value out : yield.getOutputs()) {
    std::optional<PersistentPlan::YieldSource> source = yieldSource(out);
    if (!source)
      return reject(layer, whyNot,
                    "an output that is neither a state nor made by a "
                    "pointwise op");
    plan.outputResults.push_back(*source);
  }
  for (Value state : yield.getState()) {
    std::optional<PersistentPlan::YieldSource> source = yieldSource(state);
    if (!source)
      return reject(layer, whyNot,
                    "a new state that is neither a state nor made by a "
                    "pointwise op");
    plan.stateResults.push_back(*source);
  }
  for (Value init : layer.getInits()) {
    auto type = cast<RankedTensorType>(init.getType());
    if (type.getRank() != 2 || type.getDimSize(1) != plan.width)
      return reject(layer, whyNot, "a state that is not [B, N]");
  }
  return plan;
}
