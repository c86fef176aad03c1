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
#include "lstm/Dialect/LSTM/Transforms/Transforms.h"

#include "lstm/Dialect/LSTM/Analysis/CellDependence.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/EmptyLayers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
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

namespace {
/// The weights of one group stacked along the rows.
struct StackedWeights {
  /// The stacked weight (the weight itself for a group of one).
  Value packed;
  /// The rows of each product's weight, in group order.
  SmallVector<int64_t> heights;
  /// Their sum, dynamic when one of them is.
  int64_t rows = 0;
};
} // namespace

/// Stacks the weights of `group` at the rewriter's insertion point.
static StackedWeights stackWeights(RewriterBase &rewriter, Location loc,
                                   ArrayRef<GateProduct> group) {
  StackedWeights stacked;
  SmallVector<Value> weights;
  for (const GateProduct &product : group) {
    weights.push_back(product.getWeight());
    int64_t h =
        cast<RankedTensorType>(product.getWeight().getType()).getDimSize(0);
    stacked.heights.push_back(h);
    stacked.rows =
        ShapedType::isDynamic(h) || ShapedType::isDynamic(stacked.rows)
            ? ShapedType::kDynamic
            : stacked.rows + h;
  }
  stacked.packed = buildStack(rewriter, loc, /*dim=*/0, weights);
  return stacked;
}

/// The biases of the hoisted GEMM, stacked at the rewriter's insertion point:
/// bias j of every gate whose biases fold (`folds`, indexed like `group`),
/// zeros for the gates that keep theirs (adding +0 changes no sum). Zero
/// padding needs static heights, which a group of more than one product has.
static SmallVector<Value>
stackFoldedBiases(RewriterBase &rewriter, Location loc,
                  ArrayRef<GateProduct> group, ArrayRef<bool> folds,
                  ArrayRef<int64_t> heights, Type elementType) {
  // Op wrappers are handles: copies give access to the non-const accessors.
  size_t numBiases = 0;
  for (auto [product, fold] : llvm::zip(group, folds))
    if (fold)
      numBiases = std::max(numBiases, GateOp(product.gate).getBiases().size());
  SmallVector<Value> packedBiases;
  llvm::SmallDenseMap<int64_t, Value> zeros;
  for (size_t j = 0; j < numBiases; ++j) {
    SmallVector<Value> parts;
    for (auto [product, fold, h] : llvm::zip(group, folds, heights)) {
      GateOp gate = product.gate;
      if (fold && j < gate.getBiases().size()) {
        parts.push_back(gate.getBiases()[j]);
        continue;
      }
      Value &zero = zeros[h];
      if (!zero) {
        auto zeroType = RankedTensorType::get({h}, elementType);
        zero = arith::ConstantOp::create(
            rewriter, loc, zeroType,
            DenseElementsAttr::get(zeroType,
                                   rewriter.getZeroAttr(elementType)));
      }
      parts.push_back(zero);
    }
    packedBiases.push_back(buildStack(rewriter, loc, /*dim=*/0, parts));
  }
  return packedBiases;
}

/// The products of every step at once, at the rewriter's insertion point:
/// [T, B, K] -> [T·B, K], one GEMM with `weight` and `biases`, -> [T, B, N].
static Value projectSequence(RewriterBase &rewriter, Location loc, Value seq,
                             Value weight, ValueRange biases, int64_t rows) {
  auto seqType = cast<RankedTensorType>(seq.getType());
  Type elementType = seqType.getElementType();
  SmallVector<ReassociationIndices> reassociation = {{0, 1}, {2}};
  Value flat =
      tensor::CollapseShapeOp::create(rewriter, loc, seq, reassociation);
  auto flatType = cast<RankedTensorType>(flat.getType());
  auto projType =
      RankedTensorType::get({flatType.getDimSize(0), rows}, elementType);
  Value proj = GateOp::create(rewriter, loc, projType, Activation::identity,
                              ValueRange{flat}, ValueRange{weight},
                              ValueRange{}, biases, Value(), Value())
                   .getResult();
  auto seqProjType = RankedTensorType::get(
      {seqType.getDimSize(0), seqType.getDimSize(1), rows}, elementType);
  SmallVector<OpFoldResult> outputShape = {mixedSize(rewriter, loc, seq, 0),
                                           mixedSize(rewriter, loc, seq, 1),
                                           mixedSize(rewriter, loc, proj, 1)};
  return tensor::ExpandShapeOp::create(rewriter, loc, seqProjType, proj,
                                       reassociation, outputShape);
}

/// Appends `seqProj` to `layer`'s `ins` sequences and returns its step
/// slice: a new cell argument right after the existing input slices.
static Value appendInputSequence(RewriterBase &rewriter, LayerOp layer,
                                 Value seqProj) {
  auto seqProjType = cast<RankedTensorType>(seqProj.getType());
  auto stepType = RankedTensorType::get(seqProjType.getShape().drop_front(),
                                        seqProjType.getElementType());
  unsigned position = layer.getInputs().size();
  Value step;
  rewriter.modifyOpInPlace(layer, [&] {
    layer.getInputsMutable().append(seqProj);
    step = layer.getBody().front().insertArgument(position, stepType,
                                                  layer.getLoc());
  });
  return step;
}

/// Hands each gate of `group` its columns of the step slice `step` as an
/// addend (the whole slice for a group of one), right before the group's
/// first gate, and clears the biases that moved into the hoisted GEMM
/// (`folds`, indexed like `group`).
static void addStepSlices(RewriterBase &rewriter, ArrayRef<GateProduct> group,
                          ArrayRef<bool> folds, ArrayRef<int64_t> heights,
                          Value step) {
  Operation *first = group.front().gate;
  for (const GateProduct &product : group)
    if (product.gate->isBeforeInBlock(first))
      first = product.gate;
  rewriter.setInsertionPoint(first);
  auto stepType = cast<RankedTensorType>(step.getType());
  OpFoldResult batch;
  if (group.size() > 1)
    batch = mixedSize(rewriter, first->getLoc(), step, 0);
  int64_t offset = 0;
  for (auto [product, fold, h] : llvm::zip(group, folds, heights)) {
    GateOp gate = product.gate;
    Value addend = step;
    if (group.size() > 1) {
      auto sliceType = RankedTensorType::get({stepType.getDimSize(0), h},
                                             stepType.getElementType());
      addend = tensor::ExtractSliceOp::create(
          rewriter, gate.getLoc(), sliceType, step,
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(0),
                                 rewriter.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{batch, rewriter.getIndexAttr(h)},
          ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1),
                                 rewriter.getIndexAttr(1)});
      offset += h;
    }
    bool clearBiases = fold;
    rewriter.modifyOpInPlace(gate, [&] {
      gate.getAddendsMutable().append(addend);
      if (clearBiases)
        gate.getBiasesMutable().clear();
    });
  }
}

/// Rewrites one group of input projections of `layer` (products on the same
/// input slice): emits the hoisted GEMM over all T·B rows before the layer,
/// appends its result as a new `ins` sequence, and gives each gate its
/// columns of the new slice as an addend. The moved products are appended
/// to `removed` and left in place, so that the indices of the other groups'
/// products stay valid until every group is done; the gates are added to
/// `touched`.
static void hoistGroup(RewriterBase &rewriter, LayerOp layer,
                       const CellDependence &deps, ArrayRef<GateProduct> group,
                       SmallVectorImpl<GateProduct> &removed,
                       llvm::SetVector<Operation *> &touched) {
  Location loc = layer.getLoc();
  rewriter.setInsertionPoint(layer);
  Value slice = group.front().getOperand();
  Value seq = layer.getInputs()[*deps.getInputSliceIndex(slice)];
  Type elementType = cast<RankedTensorType>(seq.getType()).getElementType();

  StackedWeights weights = stackWeights(rewriter, loc, group);
  SmallVector<bool> folds;
  for (const GateProduct &product : group)
    folds.push_back(canFoldBiases(deps, product.gate));
  SmallVector<Value> biases = stackFoldedBiases(rewriter, loc, group, folds,
                                                weights.heights, elementType);
  Value seqProj =
      projectSequence(rewriter, loc, seq, weights.packed, biases, weights.rows);
  Value step = appendInputSequence(rewriter, layer, seqProj);
  addStepSlices(rewriter, group, folds, weights.heights, step);
  for (const GateProduct &product : group) {
    removed.push_back(product);
    touched.insert(product.gate);
  }
}

/// A gate left as `identity add(%a)` (what the combined identity gate of
/// `lstm-combine-gate-gemms` becomes) is `%a` itself.
static void forwardTrivialGate(RewriterBase &rewriter, GateOp gate) {
  if (gate.getActivation() != Activation::identity ||
      !gate.getInputs().empty() || gate.getAddends().size() != 1 ||
      !gate.getBiases().empty() || gate.getPeephole() ||
      gate.getAddends().front().getType() != gate.getType())
    return;
  rewriter.replaceOp(gate, gate.getAddends().front());
}

/// Drops the `ins` sequences whose step slice the cell no longer reads,
/// keeping at least one (the layer takes T and B from its first input).
static void dropUnusedInputs(RewriterBase &rewriter, LayerOp layer) {
  Block &cell = layer.getBody().front();
  for (int i = static_cast<int>(layer.getInputs().size()) - 1; i >= 0; --i) {
    if (layer.getInputs().size() == 1)
      break;
    if (!cell.getArgument(i).use_empty())
      continue;
    rewriter.modifyOpInPlace(layer, [&] {
      layer.getInputsMutable().erase(i);
      cell.eraseArgument(i);
    });
  }
}

LogicalResult mlir::lstm::hoistInputProjections(RewriterBase &rewriter,
                                                LayerOp layer) {
  // The groups are decided on the original cell; hoisting one group adds a
  // cell argument after the input slices, which leaves the other groups'
  // operands and gates as they were.
  CellDependence deps(layer);
  SmallVector<SmallVector<GateProduct>> groups =
      deps.getInputProjectionGroups();
  if (groups.empty())
    return failure();

  OpBuilder::InsertionGuard guard(rewriter);
  SmallVector<GateProduct> removed;
  llvm::SetVector<Operation *> touched;
  for (const SmallVector<GateProduct> &group : groups)
    hoistGroup(rewriter, layer, deps, group, removed, touched);
  eraseGateProducts(rewriter, removed);
  for (Operation *gate : touched)
    forwardTrivialGate(rewriter, cast<GateOp>(gate));
  dropUnusedInputs(rewriter, layer);
  return success();
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
    IRRewriter rewriter(&getContext());
    for (LayerOp layer : layers)
      (void)hoistInputProjections(rewriter, layer);
  }
};
} // namespace
