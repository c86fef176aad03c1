//===- PersistentPlan.cpp - What a persistent kernel reads and writes -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The cell must be what lstm-optimize{wavefront=false} makes of a cell:
// products of whole states or of whole results of pointwise ops (combined or
// not), and lstm.pointwise ops (or lone elementwise arith and math ops) that
// read them, the step's inputs, the states, values defined above, earlier
// pointwise results and concatenations of them, each whole or as a column
// slice, and make every output and every new state. N, the kernel's units,
// is the widest state's width: pointwise values are k · N wide (k pieces a
// unit) or narrower than N (the units below their width), a narrower state
// is a product's or a pointwise op's. A product of a computed value
// (Cho's R_n (r * h), LSTMP's projection, a layer norm's mean) starts a new
// phase of the step. Anything else in the cell (a gate with an epilogue, a
// pointwise value of another width) is a reason to leave the layer to the
// per-step lowering.
//
//===----------------------------------------------------------------------===//

#include "PersistentCellValues.h"

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

ValueRange mlir::lstm::persistent::pointwiseInputs(const PointwiseStep &step) {
  if (auto pointwise = dyn_cast<PointwiseOp>(step.op))
    return pointwise.getInputs();
  return step.op->getOperands();
}

SmallVector<Value>
mlir::lstm::persistent::pointwiseArguments(const PointwiseStep &step) {
  if (auto pointwise = dyn_cast<PointwiseOp>(step.op))
    return SmallVector<Value>(pointwise.getBody().front().getArguments());
  return SmallVector<Value>(step.op->getOperands());
}

/// A product: identity, only products, every input a state, a whole result
/// of an earlier pointwise op (`computed`) or a complete concatenation of
/// such results (`partials`), every weight a static [M, K] defined above the
/// layer, K the input's width; or why `gate` is not one.
static FailureOr<Product>
matchProduct(GateOp gate, LayerOp layer, PersistentPlan &plan,
             const DenseMap<Value, Computed> &computed,
             const DenseMap<Value, PartialConcat> &partials, std::string &why) {
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
  Product product{gate, {}, 0, false};
  for (auto [input, weight] : llvm::zip(gate.getInputs(), gate.getWeights())) {
    TermInput term;
    int64_t depth = plan.width;
    if (std::optional<unsigned> state = stateIndex(input, layer)) {
      term.index = *state;
      depth = plan.stateWidths[*state];
    } else if (auto it = computed.find(input); it != computed.end()) {
      term.kind = TermInput::Kind::Computed;
      term.computed = it->second;
      depth = plan.pointwise[it->second.op].width;
      product.phase =
          std::max(product.phase, plan.pointwise[it->second.op].phase + 1);
    } else if (auto pt = partials.find(input); pt != partials.end()) {
      std::optional<Concat> concat = completeConcat(pt->second, plan.width);
      if (!concat) {
        why = "a product of a concatenation with gaps or pieces that are not "
              "N wide";
        return failure();
      }
      for (const Computed &piece : concat->pieces)
        product.phase =
            std::max(product.phase, plan.pointwise[piece.op].phase + 1);
      term.kind = TermInput::Kind::Concat;
      term.index = plan.concats.size();
      depth = concat->width;
      plan.concats.push_back(std::move(*concat));
    } else {
      why = "a product of a value that is neither a state, nor a whole "
            "result of a pointwise op, nor a concatenation of those";
      return failure();
    }
    auto weightType = cast<RankedTensorType>(weight.getType());
    if (!isDefinedAboveLayer(weight, layer) || !weightType.hasStaticShape()) {
      why = "a weight computed in the step or of dynamic shape";
      return failure();
    }
    if (weightType.getDimSize(1) != depth) {
      why = "a product whose weight's K is not its input's width";
      return failure();
    }
    product.terms.push_back({term, weight});
  }
  return product;
}

/// Where element (b, n) of pointwise operand `v`, of an op `opWidth` wide
/// (a multiple of N), comes from. A concatenation it reads is added to
/// `plan`.
static FailureOr<OperandSource>
matchOperand(Value v, LayerOp layer, int64_t width, int64_t opWidth,
             const DenseMap<Operation *, unsigned> &productIndex,
             const DenseMap<Value, Computed> &computed,
             const DenseMap<Value, PartialConcat> &partials,
             PersistentPlan &plan) {
  using Kind = OperandSource::Kind;
  auto type = cast<RankedTensorType>(v.getType());
  if (isDefinedAboveLayer(v, layer)) {
    if (type.getRank() != 1 && type.getRank() != 2)
      return failure();
    return OperandSource{Kind::Above, 0, 0, v, {}};
  }
  Value source = v;
  int64_t column = 0;
  if (auto slice = v.getDefiningOp<tensor::ExtractSliceOp>()) {
    std::optional<int64_t> c = columnSlice(slice, opWidth);
    if (!c)
      return failure();
    source = slice.getSource();
    column = *c;
  } else if (type.getRank() != 2 || type.getDimSize(1) != opWidth) {
    return failure();
  }
  if (std::optional<unsigned> i = inputIndex(source, layer))
    return OperandSource{Kind::Input, *i, column, {}, {}};
  if (std::optional<unsigned> i = stateIndex(source, layer))
    return OperandSource{Kind::State, *i, column, {}, {}};
  if (Operation *def = source.getDefiningOp())
    if (auto it = productIndex.find(def); it != productIndex.end())
      return OperandSource{Kind::Product, it->second, column, {}, {}};
  // A computed value's whole pieces (those a unit evaluates itself).
  if (auto it = computed.find(source);
      it != computed.end() && column % width == 0)
    return OperandSource{Kind::Computed, 0, column, {}, it->second};
  // A concatenation of N-wide results (a backward's dG of a layer
  // normalisation's 4N-wide gates), whole pieces of it.
  if (auto pt = partials.find(source);
      pt != partials.end() && column % width == 0) {
    std::optional<Concat> concat = completeConcat(pt->second, width);
    if (!concat)
      return failure();
    auto index = unsigned(plan.concats.size());
    plan.concats.push_back(std::move(*concat));
    return OperandSource{Kind::Concat, index, column, {}, {}};
  }
  return failure();
}

FailureOr<PersistentPlan>
mlir::lstm::persistent::planPersistentLayer(LayerOp layer,
                                            std::string *whyNot) {
  if (layer.getInputs().empty())
    return reject(layer, whyNot, "it has no input sequence");
  if (layer.getInits().empty())
    return reject(layer, whyNot, "it has no state");
  PersistentPlan plan;
  plan.layer = layer;
  // N: the widest state's width, which every pointwise result shares.
  for (Value init : layer.getInits()) {
    auto stateType = cast<RankedTensorType>(init.getType());
    if (stateType.getRank() != 2 || stateType.isDynamicDim(1))
      return reject(layer, whyNot,
                    "a state that is not [B, W] with a static W");
    plan.stateWidths.push_back(stateType.getDimSize(1));
    plan.width = std::max(plan.width, stateType.getDimSize(1));
  }
  DenseMap<Operation *, unsigned> productIndex;
  // The pointwise results the step computes, and per product its phase.
  DenseMap<Value, Computed> computed;
  // The concatenations being assembled (tensor.empty, insert_slices).
  DenseMap<Value, PartialConcat> partials;
  for (Operation &op : layer.getBody().front()) {
    // Slices and extents are how the pointwise ops read their operands;
    // constants feed them. A slice of a concatenation's pieces is one too.
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
      if (std::optional<PartialConcat> part =
              sliceConcat(slice, plan.width, partials))
        partials[slice] = std::move(*part);
      continue;
    }
    if (isa<tensor::DimOp, YieldOp>(op) || op.hasTrait<OpTrait::ConstantLike>())
      continue;
    if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      auto type = cast<RankedTensorType>(empty.getType());
      if (type.getRank() != 2 || type.isDynamicDim(1))
        return reject(layer, whyNot, "a tensor.empty that is no [B, W]");
      partials[empty] = PartialConcat{type.getDimSize(1), {}};
      continue;
    }
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      std::optional<PartialConcat> extended =
          extendConcat(insert, plan.width, computed, partials);
      if (!extended)
        return reject(layer, whyNot,
                      "an insert_slice other than of a whole pointwise "
                      "result into a concatenation");
      partials[insert] = std::move(*extended);
      continue;
    }
    if (auto gate = dyn_cast<GateOp>(op)) {
      std::string why;
      // A product of computed values waits for every unit of them: its
      // phase follows theirs.
      FailureOr<Product> product =
          matchProduct(gate, layer, plan, computed, partials, why);
      if (failed(product))
        return reject(layer, whyNot, why);
      productIndex[gate] = plan.products.size();
      plan.numPhases = std::max(plan.numPhases, product->phase + 1);
      plan.products.push_back(*product);
      continue;
    }
    if (isa<PointwiseOp>(op) || isLoneElementwise(&op)) {
      auto resultType = cast<RankedTensorType>(op.getResult(0).getType());
      if (resultType.getRank() != 2 || resultType.isDynamicDim(1) ||
          (resultType.getDimSize(1) % plan.width != 0 &&
           resultType.getDimSize(1) > plan.width))
        return reject(layer, whyNot,
                      "a pointwise op that is not [B, k * N] or narrower "
                      "than N, N the widest state's width");
      if (!resultType.getElementType().isF32())
        return reject(layer, whyNot, "not f32");
      for (Value r : op.getResults())
        if (r.getType() != resultType)
          return reject(layer, whyNot, "pointwise results of different types");
      int64_t opWidth = resultType.getDimSize(1);
      PointwiseStep step{
          &op, {}, 0, std::max<int64_t>(opWidth / plan.width, 1), opWidth};
      for (Value operand : pointwiseInputs(step)) {
        FailureOr<OperandSource> source =
            matchOperand(operand, layer, plan.width, opWidth, productIndex,
                         computed, partials, plan);
        if (failed(source)) {
          LLVM_DEBUG(llvm::dbgs() << "lstm-to-persistent: the operand "
                                  << operand << " of " << op << "\n");
          return reject(layer, whyNot,
                        "a pointwise operand read other than as a column "
                        "slice of a state, an input, a product, a value "
                        "defined above, a whole result of a pointwise op "
                        "or a concatenation of those");
        }
        if (source->kind == OperandSource::Kind::Product)
          step.phase = std::max(step.phase, plan.products[source->index].phase);
        if (source->kind == OperandSource::Kind::Computed)
          step.phase =
              std::max(step.phase, plan.pointwise[source->computed.op].phase);
        if (source->kind == OperandSource::Kind::Concat)
          for (const Computed &piece : plan.concats[source->index].pieces)
            step.phase = std::max(step.phase, plan.pointwise[piece.op].phase);
        step.operands.push_back(*source);
      }
      unsigned index = plan.pointwise.size();
      for (auto [r, result] : llvm::enumerate(op.getResults()))
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

  // Products must be read only by pointwise ops (through slices) or be a
  // new state.
  for (Product &product : plan.products) {
    for (Operation *user : product.gate->getUsers()) {
      auto readByPointwise = [&](Operation *op) {
        return isa<PointwiseOp, tensor::DimOp, YieldOp>(op) ||
               isLoneElementwise(op);
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
  using YieldKind = PersistentPlan::YieldSource::Kind;
  // (The verifier makes a new state's type the state's: a computed one
  // is N wide. An output may have several pieces: a training forward saves
  // a layer normalisation's 4N-wide values.)
  auto yieldSource =
      [&](Value v) -> std::optional<PersistentPlan::YieldSource> {
    if (std::optional<unsigned> state = stateIndex(v, layer))
      return PersistentPlan::YieldSource{YieldKind::StateArg, *state, {}};
    if (auto it = computed.find(v); it != computed.end())
      return PersistentPlan::YieldSource{YieldKind::Computed, 0, it->second};
    return std::nullopt;
  };
  // A [B, M] product, M <= N or a multiple of N: its columns n + j · N are
  // stored by unit n (an LSTMP's projected h, a backward step's dh; a
  // training forward saves a layer normalisation's 4N-wide means).
  auto productSource =
      [&](Value v) -> std::optional<PersistentPlan::YieldSource> {
    Operation *def = v.getDefiningOp();
    auto it = def ? productIndex.find(def) : productIndex.end();
    int64_t columns = cast<RankedTensorType>(v.getType()).getDimSize(1);
    if (it == productIndex.end() ||
        (columns > plan.width && columns % plan.width != 0))
      return std::nullopt;
    return PersistentPlan::YieldSource{YieldKind::Product, it->second, {}};
  };
  for (Value out : yield.getOutputs()) {
    std::optional<PersistentPlan::YieldSource> source = yieldSource(out);
    if (!source)
      source = productSource(out);
    if (auto pt = partials.find(out); !source && pt != partials.end()) {
      if (std::optional<Concat> concat =
              completeConcat(pt->second, plan.width)) {
        source = PersistentPlan::YieldSource{
            YieldKind::Concat, unsigned(plan.concats.size()), {}};
        plan.concats.push_back(std::move(*concat));
      }
    }
    if (!source)
      return reject(layer, whyNot,
                    "an output that is neither a state, nor made by a "
                    "pointwise op or a product, nor a concatenation of "
                    "those");
    plan.outputResults.push_back(*source);
  }
  for (Value state : yield.getState()) {
    std::optional<PersistentPlan::YieldSource> source = yieldSource(state);
    if (!source)
      source = productSource(state);
    if (!source)
      return reject(layer, whyNot,
                    "a new state that is neither a state, nor made by a "
                    "pointwise op, nor a product");
    plan.stateResults.push_back(*source);
  }
  return plan;
}

void mlir::lstm::persistent::projectInputInStep(PersistentPlan &plan,
                                                unsigned input, Value weight,
                                                bool transposed) {
  auto product = static_cast<unsigned>(plan.products.size());
  Product projection{GateOp(),
                     {{TermInput{TermInput::Kind::Input, input, {}}, weight}},
                     /*phase=*/0,
                     transposed};
  plan.products.push_back(std::move(projection));
  plan.inStepInputs[input] =
      cast<RankedTensorType>(weight.getType()).getDimSize(transposed ? 0 : 1);
  for (PointwiseStep &step : plan.pointwise)
    for (OperandSource &source : step.operands)
      if (source.kind == OperandSource::Kind::Input && source.index == input) {
        source.kind = OperandSource::Kind::Product;
        source.index = product;
      }
}

unsigned mlir::lstm::persistent::outputPhase(const PersistentPlan &plan,
                                             unsigned output) {
  using Kind = PersistentPlan::YieldSource::Kind;
  const PersistentPlan::YieldSource &source = plan.outputResults[output];
  switch (source.kind) {
  case Kind::Computed:
    return plan.pointwise[source.computed.op].phase;
  case Kind::Concat: {
    unsigned phase = 0;
    for (const Computed &piece : plan.concats[source.index].pieces)
      phase = std::max(phase, plan.pointwise[piece.op].phase);
    return phase;
  }
  case Kind::Product:
    return plan.products[source.index].phase;
  case Kind::StateArg:
    break;
  }
  return 0;
}
