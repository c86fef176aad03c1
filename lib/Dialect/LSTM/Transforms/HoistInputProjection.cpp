//===- HoistInputProjection.cpp - Input GEMMs of all steps at once --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The products x_t · W^T of a cell do not depend on the recurrence: step t
// needs nothing from step t - 1 to compute them. Inside the time loop they
// are T small [B, K] x [K, N] GEMMs; before it they are one [T·B, K] x
// [K, N] GEMM, which keeps the matrix units busy and leaves only the
// recurrent products on the sequential path.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"
#include "lstm/Dialect/LSTM/Transforms/Stacking.h"

#include "lstm/Dialect/LSTM/Analysis/CellDependence.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMHOISTINPUTPROJECTIONPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

/// Whether the biases of `product`'s gate can move into the hoisted GEMM
/// without changing a single rounding. The gate lowers to
/// `act(((0 + Σ products) + Σ addends) + Σ biases + peephole)`; when the
/// hoisted product is its only other term, the hoisted gate computes
/// `x·W^T + b_0 + b_1 ...` in that same order and the gate adds it to zero,
/// which is exact. With any other term the sums would be reassociated.
static bool canFoldBiases(const CellDependence &deps, GateOp gate) {
  if (gate.getBiases().empty() || gate.getInputs().size() != 1 ||
      !gate.getAddends().empty() || gate.getPeephole())
    return false;
  return llvm::all_of(gate.getBiases(),
                      [&](Value bias) { return deps.isDefinedAbove(bias); });
}

/// The size of `value`'s dimension `dim` as a value or attribute.
static OpFoldResult mixedSize(OpBuilder &b, Location loc, Value value,
                              int64_t dim) {
  return tensor::getMixedSize(b, loc, value, dim);
}

/// Rewrites one group of input projections of `layer` (products on the same
/// input slice): emits the hoisted GEMM over all T·B rows before the layer,
/// appends its result as a new `ins` sequence, and gives each gate its
/// columns of the new slice as an addend. The moved products are appended
/// to `removed` and left in place, so that the indices of the other groups'
/// products stay valid until every group is done; the gates are added to
/// `touched`.
static void hoistGroup(LayerOp layer, const CellDependence &deps,
                       ArrayRef<GateProduct> group,
                       SmallVectorImpl<GateProduct> &removed,
                       llvm::SetVector<Operation *> &touched) {
  Location loc = layer.getLoc();
  OpBuilder b(layer);
  Value slice = group.front().getOperand();
  Value seq = layer.getInputs()[*deps.getInputSliceIndex(slice)];
  auto seqType = cast<RankedTensorType>(seq.getType());
  Type elementType = seqType.getElementType();

  // The stacked weight (the weight itself for a group of one).
  SmallVector<Value> weights;
  SmallVector<int64_t> heights;
  int64_t rows = 0;
  for (const GateProduct &product : group) {
    weights.push_back(product.getWeight());
    int64_t h =
        cast<RankedTensorType>(product.getWeight().getType()).getDimSize(0);
    heights.push_back(h);
    rows = ShapedType::isDynamic(h) || ShapedType::isDynamic(rows)
               ? ShapedType::kDynamic
               : rows + h;
  }
  Value packed = buildStack(b, loc, /*dim=*/0, weights);

  // Biases that fold exactly; the gates that keep theirs get zeros in the
  // stacked bias (adding +0 changes no sum). Zero padding needs static
  // heights, which a group of more than one product has.
  // Op wrappers are handles: copies give access to the non-const accessors.
  SmallVector<GateOp> gates;
  SmallVector<bool> folds;
  size_t numBiases = 0;
  for (const GateProduct &product : group) {
    gates.push_back(product.gate);
    folds.push_back(canFoldBiases(deps, gates.back()));
    if (folds.back())
      numBiases = std::max(numBiases, gates.back().getBiases().size());
  }
  SmallVector<Value> packedBiases;
  llvm::SmallDenseMap<int64_t, Value> zeros;
  for (size_t j = 0; j < numBiases; ++j) {
    SmallVector<Value> parts;
    for (auto [gate, fold, h] : llvm::zip(gates, folds, heights)) {
      if (fold && j < gate.getBiases().size()) {
        parts.push_back(gate.getBiases()[j]);
        continue;
      }
      Value &zero = zeros[h];
      if (!zero) {
        auto zeroType = RankedTensorType::get({h}, elementType);
        zero = arith::ConstantOp::create(
            b, loc, zeroType,
            DenseElementsAttr::get(zeroType, b.getZeroAttr(elementType)));
      }
      parts.push_back(zero);
    }
    packedBiases.push_back(buildStack(b, loc, /*dim=*/0, parts));
  }

  // [T, B, K] -> [T·B, K], one GEMM, -> [T, B, N].
  SmallVector<ReassociationIndices> reassociation = {{0, 1}, {2}};
  Value flat = tensor::CollapseShapeOp::create(b, loc, seq, reassociation);
  auto flatType = cast<RankedTensorType>(flat.getType());
  auto projType =
      RankedTensorType::get({flatType.getDimSize(0), rows}, elementType);
  Value proj = GateOp::create(b, loc, projType, Activation::identity,
                              ValueRange{flat}, ValueRange{packed},
                              ValueRange{}, packedBiases, Value(), Value())
                   .getResult();
  auto seqProjType = RankedTensorType::get(
      {seqType.getDimSize(0), seqType.getDimSize(1), rows}, elementType);
  SmallVector<OpFoldResult> outputShape = {mixedSize(b, loc, seq, 0),
                                           mixedSize(b, loc, seq, 1),
                                           mixedSize(b, loc, proj, 1)};
  Value seqProj = tensor::ExpandShapeOp::create(b, loc, seqProjType, proj,
                                                reassociation, outputShape);

  // The new sequence goes after the existing ones; its step slice becomes a
  // cell argument right after the existing input slices.
  unsigned position = layer.getInputs().size();
  layer.getInputsMutable().append(seqProj);
  Block &cell = layer.getBody().front();
  auto stepType =
      RankedTensorType::get({seqType.getDimSize(1), rows}, elementType);
  Value step = cell.insertArgument(position, stepType, loc);

  // Each gate takes its columns of the step slice, right before the first
  // gate of the group.
  Operation *first = group.front().gate;
  for (const GateProduct &product : group)
    if (product.gate->isBeforeInBlock(first))
      first = product.gate;
  b.setInsertionPoint(first);
  OpFoldResult batch;
  if (group.size() > 1)
    batch = mixedSize(b, first->getLoc(), step, 0);
  int64_t offset = 0;
  for (auto [product, fold, h] : llvm::zip(group, folds, heights)) {
    GateProduct p = product;
    Value addend = step;
    if (group.size() > 1) {
      auto sliceType =
          RankedTensorType::get({seqType.getDimSize(1), h}, elementType);
      addend = tensor::ExtractSliceOp::create(
          b, p.gate.getLoc(), sliceType, step,
          ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{batch, b.getIndexAttr(h)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
      offset += h;
    }
    p.gate.getAddendsMutable().append(addend);
    if (fold)
      p.gate.getBiasesMutable().clear();
    removed.push_back(p);
    touched.insert(p.gate);
  }
}

/// A gate left as `identity add(%a)` (what the combined identity gate of
/// `lstm-combine-gate-gemms` becomes) is `%a` itself.
static void forwardTrivialGate(GateOp gate) {
  if (gate.getActivation() != Activation::identity ||
      !gate.getInputs().empty() || gate.getAddends().size() != 1 ||
      !gate.getBiases().empty() || gate.getPeephole() ||
      gate.getAddends().front().getType() != gate.getType())
    return;
  gate.getResult().replaceAllUsesWith(gate.getAddends().front());
  gate.erase();
}

/// Drops the `ins` sequences whose step slice the cell no longer reads,
/// keeping at least one (the layer takes T and B from its first input).
static void dropUnusedInputs(LayerOp layer) {
  Block &cell = layer.getBody().front();
  for (int i = static_cast<int>(layer.getInputs().size()) - 1; i >= 0; --i) {
    if (layer.getInputs().size() == 1)
      break;
    if (!cell.getArgument(i).use_empty())
      continue;
    layer.getInputsMutable().erase(i);
    cell.eraseArgument(i);
  }
}

namespace {
struct LSTMHoistInputProjectionPass
    : lstm::impl::LSTMHoistInputProjectionPassBase<
          LSTMHoistInputProjectionPass> {
  void runOnOperation() override {
    // Layers that statically run no step (T or B of 0) are what they
    // compute before anything else looks at them (EmptyLayers.h).
    replaceEmptyLayers(getOperation());
    SmallVector<LayerOp> layers;
    getOperation()->walk([&](LayerOp layer) { layers.push_back(layer); });
    for (LayerOp layer : layers) {
      // The groups are decided on the original cell; hoisting one group
      // adds a cell argument after the input slices, which leaves the other
      // groups' operands and gates as they were.
      CellDependence deps(layer);
      SmallVector<SmallVector<GateProduct>> groups =
          deps.getInputProjectionGroups();
      if (groups.empty())
        continue;
      SmallVector<GateProduct> removed;
      llvm::SetVector<Operation *> touched;
      for (const SmallVector<GateProduct> &group : groups)
        hoistGroup(layer, deps, group, removed, touched);
      eraseGateProducts(removed);
      for (Operation *gate : touched)
        forwardTrivialGate(cast<GateOp>(gate));
      dropUnusedInputs(layer);
    }
  }
};
} // namespace
