//===- CellDependence.cpp - Gate dependences inside an lstm cell ----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Dialect/LSTM/Analysis/CellDependence.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::lstm;

CellDependence::CellDependence(LayerOp layer) : layer(layer) {
  Block &cell = layer.getBody().front();
  for (Operation &op : cell)
    if (auto gate = dyn_cast<GateOp>(op))
      gates.push_back(gate);

  // The block is in SSA order, so one forward sweep sees every operand's
  // dependences before their users. Ops with regions also depend on whatever
  // their nested ops read from the cell.
  unsigned numGates = gates.size();
  unsigned gateIndex = 0;
  for (Operation &op : cell) {
    llvm::BitVector deps(numGates);
    op.walk([&](Operation *nested) {
      for (Value operand : nested->getOperands()) {
        auto it = dependences.find(operand);
        if (it != dependences.end())
          deps |= it->second;
      }
    });
    if (isa<GateOp>(op))
      deps.set(gateIndex++);
    for (Value result : op.getResults())
      dependences[result] = deps;
  }
}

int CellDependence::getGateIndex(GateOp gate) const {
  const auto *it = llvm::find(gates, gate);
  return it == gates.end() ? -1 : static_cast<int>(it - gates.begin());
}

SmallVector<GateProduct> CellDependence::getProducts() const {
  SmallVector<GateProduct> products;
  for (GateOp gate : gates)
    for (unsigned k = 0, e = gate.getInputs().size(); k < e; ++k)
      products.push_back({gate, k});
  return products;
}

llvm::BitVector CellDependence::getGateDependences(Value value) const {
  auto it = dependences.find(value);
  return it == dependences.end() ? llvm::BitVector(gates.size()) : it->second;
}

bool CellDependence::dependsOn(Value value, GateOp gate) const {
  int index = getGateIndex(gate);
  auto it = dependences.find(value);
  return index >= 0 && it != dependences.end() && it->second.test(index);
}

bool CellDependence::dependsOnAnyGate(Value value) const {
  auto it = dependences.find(value);
  return it != dependences.end() && it->second.any();
}

bool CellDependence::canCombine(ArrayRef<GateProduct> products) const {
  if (products.empty())
    return false;
  Value operand = products.front().getOperand();
  auto first = cast<RankedTensorType>(products.front().getWeight().getType());
  for (const GateProduct &product : products) {
    if (getGateIndex(product.gate) < 0 || product.getOperand() != operand)
      return false;
    // Stacking needs the row counts to place each gate's columns of the
    // combined result, and one column count for the shared operand.
    auto type = cast<RankedTensorType>(product.getWeight().getType());
    if (!type.hasStaticShape() || type.getDimSize(1) != first.getDimSize(1) ||
        type.getElementType() != first.getElementType())
      return false;
  }
  // The combined GEMM runs before every gate of the group: an operand that
  // depends on one of them would close a cycle. (A shared SSA operand is an
  // input of every gate of the group, so this holds for well-formed IR; it
  // is checked rather than assumed.)
  for (const GateProduct &product : products)
    if (dependsOn(operand, product.gate))
      return false;
  return true;
}

SmallVector<SmallVector<GateProduct>>
CellDependence::getCombinableGroups(unsigned minGates) const {
  llvm::MapVector<Value, SmallVector<GateProduct>> byOperand;
  for (const GateProduct &product : getProducts())
    byOperand[product.getOperand()].push_back(product);

  SmallVector<SmallVector<GateProduct>> groups;
  for (auto &[operand, products] : byOperand) {
    // Products whose weight cannot be stacked stay in their gate; the rest
    // of the group may still combine.
    auto first = cast<RankedTensorType>(products.front().getWeight().getType());
    SmallVector<GateProduct> group;
    for (const GateProduct &product : products) {
      auto type = cast<RankedTensorType>(product.getWeight().getType());
      if (type.hasStaticShape() && first.hasStaticShape() &&
          type.getDimSize(1) == first.getDimSize(1))
        group.push_back(product);
    }
    llvm::SmallPtrSet<Operation *, 8> distinct;
    for (const GateProduct &product : group)
      distinct.insert(product.gate);
    if (distinct.size() >= minGates && canCombine(group))
      groups.push_back(std::move(group));
  }
  return groups;
}

//===----------------------------------------------------------------------===//
// PointwiseGroups
//===----------------------------------------------------------------------===//

bool PointwiseGroups::hasEpilogue(GateOp gate) {
  return gate.getActivation() != Activation::identity ||
         !gate.getAddends().empty() || !gate.getBiases().empty() ||
         gate.getPeephole();
}

SmallVector<Value> PointwiseGroups::getPointwiseOperands(GateOp gate) {
  SmallVector<Value> operands(gate.getAddends());
  llvm::append_range(operands, gate.getBiases());
  if (gate.getPeephole()) {
    operands.push_back(gate.getPeephole());
    operands.push_back(gate.getPeepholeState());
  }
  return operands;
}

bool PointwiseGroups::isPointwise(Operation *op) {
  if (auto gate = dyn_cast<GateOp>(op))
    return gate.getInputs().empty() || hasEpilogue(gate);
  if (op->getNumResults() == 0 || op->getNumRegions() != 0 ||
      !isMemoryEffectFree(op))
    return false;
  // Upstream elementwise ops (arith, math) have a scalar form with the same
  // name and attributes; lstm.one_minus is 1 - x.
  if (!isa<OneMinusOp>(op) && !(op->hasTrait<OpTrait::Elementwise>() &&
                                op->hasTrait<OpTrait::Scalarizable>()))
    return false;
  auto first = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!first || (first.getRank() != 2 && first.getRank() != 3))
    return false;
  for (Type type :
       llvm::concat<const Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || t.getShape() != first.getShape() ||
        !isa<IntegerType, FloatType, IndexType>(t.getElementType()))
      return false;
  }
  return true;
}

PointwiseGroups::PointwiseGroups(Block &cell) {
  MLIRContext *ctx = cell.getParentOp()->getContext();

  // The stage at which each value computed in the cell is available, and,
  // for results of pointwise work, the shape of the group that makes them
  // (as a tensor type of `index`, so that element types do not matter).
  llvm::DenseMap<Value, unsigned> stage;
  llvm::DenseMap<Value, Type> groupShape;
  auto shapeOf = [&](Value v) {
    return RankedTensorType::get(cast<RankedTensorType>(v.getType()).getShape(),
                                 IndexType::get(ctx));
  };
  // When pointwise work of shape `shape` (null for a barrier) can read `v`:
  // in the same group if `v` is pointwise work of the same shape, after the
  // group that makes `v` otherwise.
  auto available = [&](Value v, Type shape) -> unsigned {
    auto it = stage.find(v);
    if (it == stage.end())
      return 0;
    auto g = groupShape.find(v);
    bool sameGroup = shape && g != groupShape.end() && g->second == shape;
    return it->second + (g != groupShape.end() && !sameGroup ? 1 : 0);
  };

  // ASAP: every piece of work in the earliest group it can join.
  SmallVector<Operation *> members;
  llvm::DenseMap<Operation *, unsigned> memberStage;
  for (Operation &op : cell.without_terminator()) {
    unsigned s = 0;
    if (isPointwise(&op)) {
      Type shape = shapeOf(op.getResult(0));
      auto gate = dyn_cast<GateOp>(op);
      // A gate's products are a GEMM (a barrier) that feeds its epilogue.
      SmallVector<Value> reads(op.getOperands());
      if (gate) {
        for (Value v : gate.getInputs())
          s = std::max(s, available(v, Type()));
        for (Value v : gate.getWeights())
          s = std::max(s, available(v, Type()));
        reads = getPointwiseOperands(gate);
      }
      for (Value v : reads)
        s = std::max(s, available(v, shape));
      for (Value result : op.getResults()) {
        stage[result] = s;
        groupShape[result] = shape;
      }
      members.push_back(&op);
      memberStage[&op] = s;
      continue;
    }
    // A barrier runs after everything it reads, nested uses included.
    op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        s = std::max(s, available(v, Type()));
    });
    for (Value result : op.getResults())
      stage[result] = s;
  }

  // Then work whose results only feed later groups (of its shape) moves to
  // the first of them: Cho's GRU computes z ⊙ h and 1 - z where they are
  // used, after the GEMM of r ⊙ h, and passes on z instead of both. Users
  // come later in the block, so one backward sweep sees their final stage.
  for (Operation *op : llvm::reverse(members)) {
    Type shape = shapeOf(op->getResult(0));
    std::optional<unsigned> first;
    bool onlyPointwise = true;
    for (OpOperand &use : op->getUses()) {
      Operation *user = use.getOwner();
      auto it = memberStage.find(user);
      // The matrix products of a member gate are a barrier.
      auto gate = dyn_cast<GateOp>(user);
      bool product =
          gate && use.getOperandNumber() <
                      gate.getInputs().size() + gate.getWeights().size();
      if (it == memberStage.end() || product ||
          shapeOf(user->getResult(0)) != shape) {
        onlyPointwise = false;
        break;
      }
      first = std::min(first.value_or(it->second), it->second);
    }
    if (onlyPointwise && first && *first > memberStage[op])
      memberStage[op] = *first;
  }

  llvm::DenseMap<std::pair<unsigned, Type>, unsigned> groupIndex;
  SmallVector<std::pair<unsigned, SmallVector<Operation *>>> found;
  for (Operation *op : members) {
    unsigned s = memberStage[op];
    auto [it, inserted] = groupIndex.try_emplace(
        {s, shapeOf(op->getResult(0))}, static_cast<unsigned>(found.size()));
    if (inserted)
      found.push_back({s, {}});
    found[it->second].second.push_back(op);
  }

  llvm::stable_sort(
      found, [](const auto &x, const auto &y) { return x.first < y.first; });
  for (auto &[s, ops] : found) {
    stages.push_back(s);
    groups.push_back(std::move(ops));
  }
}

std::optional<unsigned> CellDependence::getInputSliceIndex(Value value) const {
  // Op wrappers are handles: a copy gives access to the non-const accessors.
  LayerOp op = layer;
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &op.getBody().front() ||
      arg.getArgNumber() >= op.getInputs().size())
    return std::nullopt;
  return arg.getArgNumber();
}

bool CellDependence::isDefinedAbove(Value value) const {
  LayerOp op = layer;
  return !op.getBody().isAncestor(value.getParentRegion());
}

bool CellDependence::isInputProjection(const GateProduct &product) const {
  return getGateIndex(product.gate) >= 0 &&
         getInputSliceIndex(product.getOperand()).has_value() &&
         isDefinedAbove(product.getWeight());
}

SmallVector<SmallVector<GateProduct>>
CellDependence::getInputProjectionGroups() const {
  llvm::MapVector<Value, SmallVector<SmallVector<GateProduct>>> byOperand;
  for (const GateProduct &product : getProducts()) {
    if (!isInputProjection(product))
      continue;
    SmallVector<SmallVector<GateProduct>> &groups =
        byOperand[product.getOperand()];
    auto type = cast<RankedTensorType>(product.getWeight().getType());
    // Stacking needs static row counts (to place each gate's columns) and
    // one column count; anything else is multiplied on its own.
    SmallVector<GateProduct> *target = nullptr;
    if (type.hasStaticShape()) {
      for (SmallVector<GateProduct> &group : groups) {
        auto first =
            cast<RankedTensorType>(group.front().getWeight().getType());
        if (first.hasStaticShape() &&
            first.getDimSize(1) == type.getDimSize(1) &&
            first.getElementType() == type.getElementType()) {
          target = &group;
          break;
        }
      }
    }
    if (target)
      target->push_back(product);
    else
      groups.push_back({product});
  }
  SmallVector<SmallVector<GateProduct>> result;
  for (auto &[operand, groups] : byOperand)
    for (SmallVector<GateProduct> &group : groups)
      result.push_back(std::move(group));
  return result;
}

void mlir::lstm::eraseGateProducts(RewriterBase &rewriter,
                                   SmallVectorImpl<GateProduct> &products) {
  // Highest index first, so that erasing one product does not shift the
  // ones still to be erased.
  llvm::stable_sort(products, [](const GateProduct &x, const GateProduct &y) {
    return x.index > y.index;
  });
  for (GateProduct product : products) {
    rewriter.modifyOpInPlace(product.gate, [&] {
      product.gate.getInputsMutable().erase(product.index);
      product.gate.getWeightsMutable().erase(product.index);
    });
  }
}
