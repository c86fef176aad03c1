//===- CellCotangents.cpp - Cotangents in the backward cell of a layer ----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The cotangents of the forward cell's values in the backward step, as the
// adjoint rules add them (AdjointContext): summed within the step, or, for
// values defined outside the layer (weights, biases, peepholes, the input
// sequence through the input weights), deferred to one sum after the loop
// (see LayerAdjoint.cpp).
//
//===----------------------------------------------------------------------===//

#include "LayerAdjoint.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

/// The dynamic sizes of a cell value of `type` ([B, N]: only the batch may
/// be dynamic), the batch being `batch` (made on the first use).
static FailureOr<SmallVector<Value>>
dynamicSizes(RankedTensorType type, Location loc, function_ref<Value()> batch) {
  SmallVector<Value> sizes;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d))
      continue;
    if (d != 0)
      return emitError(loc, "lstm-differentiate: cell values with a dynamic "
                            "extent other than the batch are not supported");
    sizes.push_back(batch());
  }
  return sizes;
}

//===----------------------------------------------------------------------===//
// Cotangents in the backward step
//===----------------------------------------------------------------------===//

Value CellAdjointContext::getCotangent(Value v) {
  CotangentAccumulator::Builders builders{
      [&](Value p) { return getPrimal(p); },
      [&](Value like, bool zeroed) -> FailureOr<Value> {
        if (zeroed)
          return buildSplat(like, 0.0);
        // A buffer the slices fill: in the step, so that each step writes
        // its own, and at its start, so that it dominates the ops that
        // compute the slices: bufferization can then have them write into
        // it (eliminate-empty-tensors) instead of copying.
        OpBuilder::InsertionGuard guard(builder);
        Value rows = batch();
        builder.setInsertionPointAfterValue(rows);
        auto type = cast<RankedTensorType>(like.getType());
        FailureOr<SmallVector<Value>> sizes =
            dynamicSizes(type, like.getLoc(), [&] { return rows; });
        if (failed(sizes))
          return failure();
        return tensor::EmptyOp::create(builder, like.getLoc(), type.getShape(),
                                       type.getElementType(), *sizes)
            .getResult();
      }};
  FailureOr<Value> c = cotangents.materialize(builder, v.getLoc(), v, builders);
  if (failed(c)) {
    materializationFailed = true;
    return Value();
  }
  return *c;
}

FailureOr<SequenceRef> CellAdjointContext::output(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 2 || type.isDynamicDim(1))
    return emitError(v.getLoc())
           << "lstm-differentiate: a per-step contribution of type "
           << v.getType()
           << " cannot leave the backward loop (only [B, N] tensors with a "
              "static N can)";
  auto [it, inserted] = outputIndex.try_emplace(v, outputs.size());
  if (inserted)
    outputs.push_back(v);
  return SequenceRef{SequenceRef::BackwardOutput, it->second};
}

FailureOr<SequenceRef> CellAdjointContext::sequenceOf(Value operand) {
  if (std::optional<unsigned> i = inputSliceIndex(operand))
    return SequenceRef{SequenceRef::ForwardInput, *i};
  FailureOr<Value> p = getPrimal(operand);
  if (failed(p))
    return failure();
  // A saved value is already a sequence: the tape's.
  for (auto [k, input] : llvm::enumerate(inputs))
    if (input.kind == Input::Tape && cell->getArgument(k) == *p)
      return SequenceRef{SequenceRef::Tape, input.index};
  return output(*p);
}

/// A parameter (`what`) that the cell computes at every step: its cotangent
/// would be a sequence, not the sum that a parameter's gradient is.
static LogicalResult computedInCell(Value v, StringRef what, StringRef remedy) {
  return emitError(v.getLoc(), "lstm-differentiate: ")
         << what
         << " that the cell computes at every step is not differentiated ("
         << remedy << ")";
}

LogicalResult CellAdjointContext::addCotangent(Value v, Value c) {
  if (!isCaptured(v)) {
    cotangents.add(v, c);
    return success();
  }
  // A value defined outside the layer gets this step's contribution; the
  // steps' contributions are summed after the loop.
  FailureOr<SequenceRef> rows = output(c);
  if (failed(rows))
    return failure();
  deferred.push_back({Deferred::Captured, v, *rows});
  return success();
}

LogicalResult CellAdjointContext::addSliceCotangent(
    Value v, Value c, ArrayRef<OpFoldResult> offsets,
    ArrayRef<OpFoldResult> sizes, ArrayRef<OpFoldResult> strides) {
  if (!isCaptured(v)) {
    cotangents.addSlice(v, {c, llvm::to_vector(offsets), llvm::to_vector(sizes),
                            llvm::to_vector(strides)});
    return success();
  }
  // A slice of a value from outside that still depends on the step (its
  // invariant slices were hoisted): the whole value's cotangent of this
  // step.
  FailureOr<Value> zeros = buildSplat(v, 0.0);
  if (failed(zeros))
    return failure();
  SmallVector<OpFoldResult> mapped[3];
  ArrayRef<OpFoldResult> lists[3] = {offsets, sizes, strides};
  for (auto [k, list] : llvm::enumerate(lists))
    for (OpFoldResult ofr : list) {
      if (auto value = dyn_cast<Value>(ofr)) {
        FailureOr<Value> p = getPrimal(value);
        if (failed(p))
          return failure();
        mapped[k].push_back(*p);
      } else {
        mapped[k].push_back(ofr);
      }
    }
  Value whole = tensor::InsertSliceOp::create(builder, v.getLoc(), c, *zeros,
                                              mapped[0], mapped[1], mapped[2]);
  return addCotangent(v, whole);
}

Value CellAdjointContext::transposed(Value weight) {
  Value &t = transposes[weight];
  if (!t) {
    auto type = cast<RankedTensorType>(weight.getType());
    Location loc = weight.getLoc();
    SmallVector<Value> sizes;
    for (int64_t d : {1, 0})
      if (type.isDynamicDim(d))
        sizes.push_back(tensor::DimOp::create(outerBuilder, loc, weight, d));
    Value init = tensor::EmptyOp::create(
        outerBuilder, loc, {type.getDimSize(1), type.getDimSize(0)},
        type.getElementType(), sizes);
    t = linalg::TransposeOp::create(outerBuilder, loc, weight, init,
                                    ArrayRef<int64_t>{1, 0})
            .getResult()
            .front();
  }
  return t;
}

LogicalResult CellAdjointContext::addProductCotangent(Value operand, Value dz,
                                                      Value weight) {
  if (!isCaptured(weight))
    return computedInCell(weight, "a gate weight",
                          "weights must be defined outside the layer");
  if (std::optional<unsigned> i = inputSliceIndex(operand)) {
    // dx_t = dz_t · W does not feed the recurrence: one GEMM over all steps.
    FailureOr<SequenceRef> rows = output(dz);
    if (failed(rows))
      return failure();
    Deferred item{Deferred::InputProduct, fwd.getInputs()[*i], *rows};
    item.weight = weight;
    item.inputIndex = *i;
    deferred.push_back(item);
    return success();
  }
  // In the recurrence (dh_{t-1} += dz_t · R): a gate product against the
  // transposed weight, which the passes combine, fuse and send to cuBLAS as
  // they do the forward's.
  auto dzType = cast<RankedTensorType>(dz.getType());
  auto wType = cast<RankedTensorType>(weight.getType());
  auto type = RankedTensorType::get({dzType.getDimSize(0), wType.getDimSize(1)},
                                    dzType.getElementType());
  Value product =
      GateOp::create(builder, operand.getLoc(), type, Activation::identity,
                     ValueRange{dz}, ValueRange{transposed(weight)},
                     ValueRange{}, ValueRange{}, Value(), Value());
  return addCotangent(operand, product);
}

LogicalResult CellAdjointContext::addWeightCotangent(Value weight, Value dz,
                                                     Value operand) {
  if (!isCaptured(weight))
    return computedInCell(weight, "a gate weight",
                          "weights must be defined outside the layer");
  FailureOr<SequenceRef> rows = output(dz);
  if (failed(rows))
    return failure();
  FailureOr<SequenceRef> seq = sequenceOf(operand);
  if (failed(seq))
    return failure();
  Deferred item{Deferred::Weight, weight, *rows};
  item.operand = *seq;
  deferred.push_back(item);
  return success();
}

LogicalResult CellAdjointContext::addBroadcastCotangent(Value v, Value rows) {
  if (!isCaptured(v))
    return computedInCell(v, "a bias or peephole weight",
                          "define it outside the layer");
  // Resolved when the cell is complete (resolveBroadcasts): by then the
  // combined dG these rows may be columns of is an output.
  Deferred item{Deferred::Broadcast, v, {SequenceRef::BackwardOutput, 0}};
  item.rowsValue = rows;
  deferred.push_back(item);
  return success();
}

std::optional<std::pair<unsigned, int64_t>>
CellAdjointContext::columnsOfOutput(Value rows) {
  auto type = cast<RankedTensorType>(rows.getType());
  if (type.getRank() != 2 || type.isDynamicDim(1))
    return std::nullopt;
  int64_t width = type.getDimSize(1);
  // Whether `insert` writes whole rows of the [B, N] value it inserts into,
  // at static columns [begin, end).
  auto columns = [&](tensor::InsertSliceOp insert)
      -> std::optional<std::pair<int64_t, int64_t>> {
    if (insert.getDestType().getRank() != 2 ||
        insert.getSourceType().getRank() != 2 ||
        !isConstantIntValue(insert.getMixedOffsets()[0], 0) ||
        !llvm::all_of(insert.getMixedStrides(),
                      [](OpFoldResult s) { return isConstantIntValue(s, 1); }))
      return std::nullopt;
    std::optional<int64_t> begin =
        getConstantIntValue(insert.getMixedOffsets()[1]);
    std::optional<int64_t> size =
        getConstantIntValue(insert.getMixedSizes()[1]);
    if (!begin || !size)
      return std::nullopt;
    return std::make_pair(*begin, *begin + *size);
  };
  for (OpOperand &use : rows.getUses()) {
    auto insert = dyn_cast<tensor::InsertSliceOp>(use.getOwner());
    if (!insert || use.get() != insert.getSource())
      continue;
    std::optional<std::pair<int64_t, int64_t>> own = columns(insert);
    if (!own || own->second - own->first != width)
      continue;
    // Follow the chain of inserts into the same buffer; later ones must
    // leave these columns alone.
    for (Value current = insert.getResult(); current;) {
      if (auto it = outputIndex.find(current); it != outputIndex.end())
        return std::make_pair(it->second, own->first);
      Value next;
      for (Operation *user : current.getUsers()) {
        auto later = dyn_cast<tensor::InsertSliceOp>(user);
        if (!later || later.getDest() != current)
          continue;
        std::optional<std::pair<int64_t, int64_t>> other = columns(later);
        if (other &&
            (other->second <= own->first || own->second <= other->first))
          next = later.getResult();
      }
      current = next;
    }
  }
  return std::nullopt;
}

LogicalResult CellAdjointContext::resolveBroadcasts() {
  // Rows that are columns of an output already (a gate's dz among the
  // combined dG) are summed with it; the others (a peephole's dz ⊙ c, ...)
  // that no other item needs as an output of their own leave the loop side
  // by side in one output, so that one sum over the rows serves them all
  // (a peephole LSTM's three vectors: one product after the loop, not
  // three).
  SmallVector<Deferred *> alone;
  llvm::SetVector<Value> aloneRows;
  for (Deferred &item : deferred) {
    if (item.kind != Deferred::Broadcast)
      continue;
    if (auto columns = columnsOfOutput(item.rowsValue)) {
      item.rows = {SequenceRef::BackwardOutput, columns->first};
      item.columnOffset = columns->second;
      continue;
    }
    auto type = dyn_cast<RankedTensorType>(item.rowsValue.getType());
    if (outputIndex.count(item.rowsValue) || !type || type.getRank() != 2 ||
        type.isDynamicDim(1)) {
      FailureOr<SequenceRef> seq = output(item.rowsValue);
      if (failed(seq))
        return failure();
      item.rows = *seq;
      continue;
    }
    alone.push_back(&item);
    aloneRows.insert(item.rowsValue);
  }
  if (alone.empty())
    return success();
  Type element =
      cast<RankedTensorType>(aloneRows.front().getType()).getElementType();
  bool sideBySide =
      aloneRows.size() > 1 && llvm::all_of(aloneRows, [&](Value rows) {
        return cast<RankedTensorType>(rows.getType()).getElementType() ==
               element;
      });
  if (!sideBySide) {
    for (Deferred *item : alone) {
      FailureOr<SequenceRef> seq = output(item->rowsValue);
      if (failed(seq))
        return failure();
      item->rows = *seq;
    }
    return success();
  }
  llvm::DenseMap<Value, int64_t> offsets;
  int64_t width = 0;
  for (Value rows : aloneRows) {
    offsets[rows] = width;
    width += cast<RankedTensorType>(rows.getType()).getDimSize(1);
  }
  // As many rows as the first (the batch: static or dynamic, as the cell's
  // types have it).
  Location loc = aloneRows.front().getLoc();
  Value all = tensor::EmptyOp::create(
      builder, loc,
      ArrayRef<OpFoldResult>{
          tensor::getMixedSize(builder, loc, aloneRows.front(), 0),
          builder.getIndexAttr(width)},
      element);
  for (Value rows : aloneRows) {
    int64_t n = cast<RankedTensorType>(rows.getType()).getDimSize(1);
    all = tensor::InsertSliceOp::create(
        builder, loc, rows, all,
        ArrayRef<OpFoldResult>{builder.getIndexAttr(0),
                               builder.getIndexAttr(offsets[rows])},
        ArrayRef<OpFoldResult>{tensor::getMixedSize(builder, loc, rows, 0),
                               builder.getIndexAttr(n)},
        ArrayRef<OpFoldResult>{builder.getIndexAttr(1),
                               builder.getIndexAttr(1)});
  }
  FailureOr<SequenceRef> seq = output(all);
  if (failed(seq))
    return failure();
  for (Deferred *item : alone) {
    item->rows = *seq;
    item->columnOffset = offsets[item->rowsValue];
  }
  return success();
}

FailureOr<Value> CellAdjointContext::buildBroadcastProduct(Value rows,
                                                           Value v) {
  FailureOr<Value> p = getPrimal(v);
  if (failed(p))
    return failure();
  // An lstm.gate with only a peephole term: p ⊙ rows, fused like any gate.
  return GateOp::create(builder, v.getLoc(), rows.getType(),
                        Activation::identity, ValueRange{}, ValueRange{},
                        ValueRange{}, ValueRange{}, *p, rows)
      .getResult();
}

FailureOr<Value> CellAdjointContext::buildSplat(Value like, double c) {
  auto type = dyn_cast<RankedTensorType>(like.getType());
  if (!type)
    return emitError(like.getLoc(), "lstm-differentiate: a cell value of type ")
           << like.getType() << " is not a tensor";
  if (type.hasStaticShape())
    return buildSplatValue(builder, like.getLoc(), type, {}, c);
  // Made once, before the loop, with the batch of the forward's input.
  Value &splat = splats[{type, llvm::bit_cast<uint64_t>(c)}];
  if (!splat) {
    FailureOr<SmallVector<Value>> sizes =
        dynamicSizes(type, like.getLoc(), [&]() -> Value {
          return tensor::DimOp::create(outerBuilder, fwd.getLoc(),
                                       fwd.getInputs().front(), 1);
        });
    if (failed(sizes))
      return failure();
    splat = buildSplatValue(outerBuilder, like.getLoc(), type, *sizes, c);
  }
  return splat;
}
