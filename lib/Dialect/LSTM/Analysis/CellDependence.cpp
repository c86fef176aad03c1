//===- CellDependence.cpp - Gate dependences inside an lstm cell ----------===//

#include "lstm/Dialect/LSTM/Analysis/CellDependence.h"

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
