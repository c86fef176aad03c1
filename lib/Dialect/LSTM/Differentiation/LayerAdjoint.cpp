//===- LayerAdjoint.cpp - The backward recurrence of an lstm.layer --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The adjoint of a layer is another lstm.layer that walks the sequence the
// other way. Its state is the cotangent of the forward state (dh, dc, ...);
// its cell is the adjoint of the forward cell, built op by op from the rules
// of AdjointOpInterface in a CellAdjointContext. Per step it reads:
//
// - the cotangents of the forward's outputs at that step (dy_t);
// - the forward's input slices x_t where the adjoint needs them;
// - the values the training forward saved for it (the "tape", cuDNN's
//   reserve space): the state the forward step started from and the result
//   of every gate the adjoint reads. Pointwise values in between are
//   recomputed from these in the backward step, where they are fused with the
//   rest of its pointwise work, rather than stored.
//
// The forward layer is rebuilt with the tape as extra output sequences.
//
// Only the recurrent chain stays in the backward loop. What a step
// contributes to values defined outside the layer (weights, biases,
// peepholes, the input sequence through the input weights) leaves the loop as
// output sequences and is summed after it, as cuDNN splits backward-data from
// backward-weights:
//
//     dW = dZ^T · X   (one GEMM over all T·B rows)     dX = dZ · W
//     db = sum over T·B of dZ                          dp = sum of dZ ⊙ c
//
// Steps past a sequence's length (the layer's `lengths`) are masked by the
// backward layer exactly as by the forward: its state (the cotangent) passes
// through them unchanged, and its outputs there are zero, so they contribute
// nothing to the sums after the loop.
//
//===----------------------------------------------------------------------===//

#include "FunctionAdjoint.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::detail;

namespace {

/// A sequence `[T, B, N]` that exists once the backward layer is built: an
/// input of the forward layer, a tape sequence of the rebuilt forward layer,
/// or an output of the backward layer.
struct SequenceRef {
  enum Kind { ForwardInput, Tape, BackwardOutput } kind;
  unsigned index;
};

/// What a backward step contributes to a value defined outside the layer,
/// summed over all steps after the loop.
struct Deferred {
  enum Kind {
    /// target (input #index of the forward) += dz · weight.
    InputProduct,
    /// target (a weight) += dz^T · operand over all rows.
    Weight,
    /// target (a vector) += rows summed over all rows; when the rows are
    /// columns [columnOffset, + N) of another output of the backward cell
    /// (a gate's dz among the combined dG), that output's sum is sliced.
    Broadcast,
    /// target (input #index of the forward) += rows, step by step.
    InputRows,
    /// target (a value captured by the cell, `[B, N]`) += rows summed over
    /// the steps.
    Captured,
  } kind;
  Value target;
  SequenceRef rows;
  SequenceRef operand = {SequenceRef::Tape, 0};
  Value weight;
  unsigned inputIndex = 0;
  /// Broadcast: the rows in the backward cell, until resolved.
  Value rowsValue;
  std::optional<int64_t> columnOffset;
};

/// Builds the cell of the backward layer of `fwd`.
class CellAdjointContext : public AdjointContext {
public:
  CellAdjointContext(FunctionAdjointContext &outer, OpBuilder &outerBuilder,
                     LayerOp fwd, Block *cell, OpBuilder &cellBuilder)
      : AdjointContext(cellBuilder), outer(outer), outerBuilder(outerBuilder),
        fwd(fwd), cell(cell) {}

  /// Builds the cell from the cotangents of the forward results.
  LogicalResult build(ArrayRef<Value> outputCotangents);

  //===--- AdjointContext ---------------------------------------------===//

  bool isActive(Value v) override { return outer.isActive(v); }
  FailureOr<Value> getPrimal(Value v) override;
  Value getCotangent(Value v) override;
  LogicalResult addCotangent(Value v, Value c) override;
  LogicalResult addSliceCotangent(Value v, Value c,
                                  ArrayRef<OpFoldResult> offsets,
                                  ArrayRef<OpFoldResult> sizes,
                                  ArrayRef<OpFoldResult> strides) override;
  LogicalResult addProductCotangent(Value operand, Value dz,
                                    Value weight) override;
  LogicalResult addWeightCotangent(Value weight, Value dz,
                                   Value operand) override;
  LogicalResult addBroadcastCotangent(Value v, Value rows) override;
  FailureOr<Value> buildBroadcastProduct(Value rows, Value v) override;
  FailureOr<Value> buildSplat(Value like, double c) override;
  LogicalResult differentiateLayer(LayerOp layer) override {
    return layer.emitOpError("is nested in the cell of another layer, which "
                             "lstm-differentiate does not differentiate");
  }

  //===--- What the backward layer is built from ----------------------===//

  /// The sequences the backward cell reads, in the order of its block
  /// arguments (before the states).
  struct Input {
    enum Kind { ForwardInput, Tape, OutputCotangent } kind;
    unsigned index;
  };
  SmallVector<Input> inputs;
  /// The forward cell's values the training forward saves, in order.
  SmallVector<Value> tape;
  /// The backward cell's per-step outputs.
  SmallVector<Value> outputs;
  /// The work after the loop.
  SmallVector<Deferred> deferred;
  /// The new states (cotangents of the forward step's initial state).
  SmallVector<Value> nextStates;

private:
  bool isCaptured(Value v) {
    return !fwd.getBody().isAncestor(v.getParentRegion());
  }
  /// The position of `v` among the forward cell's input slices.
  std::optional<unsigned> inputSliceIndex(Value v) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg || arg.getOwner() != &fwd.getBody().front() ||
        arg.getArgNumber() >= fwd.getInputs().size())
      return std::nullopt;
    return arg.getArgNumber();
  }
  /// A new block argument of the backward cell reading a sequence.
  BlockArgument addSequenceArgument(Input input, Type sliceType, Location loc);
  /// The backward cell's slice of forward input #i.
  Value inputSlice(unsigned i);
  /// `v` (a forward cell value) saved by the training forward.
  FailureOr<Value> saved(Value v);
  /// The batch size, in the backward cell.
  Value batch();
  /// `v` (a backward cell value `[B, N]`) as an output of the backward
  /// layer.
  FailureOr<SequenceRef> output(Value v);
  /// Where `rows` ([B, N], a backward cell value) is written whole into an
  /// output: (the output's index, the first column), through a chain of
  /// tensor.insert_slice of disjoint column ranges.
  std::optional<std::pair<unsigned, int64_t>> columnsOfOutput(Value rows);
  /// Decides how each Broadcast item leaves the loop (resolveBroadcasts is
  /// called once the rest of the cell is built).
  LogicalResult resolveBroadcasts();
  /// The sequence after the loop that holds `operand`'s value at every
  /// step.
  FailureOr<SequenceRef> sequenceOf(Value operand);
  /// `weight^T`, computed once before the backward layer.
  Value transposed(Value weight);

  FunctionAdjointContext &outer;
  OpBuilder &outerBuilder;
  LayerOp fwd;
  Block *cell;
  Value batchSize;
  /// Set when a cotangent could not be built (the diagnostic is out): rules
  /// see a null cotangent then, and the walk stops after them.
  bool materializationFailed = false;
  CotangentAccumulator cotangents;
  IRMapping primals;
  llvm::DenseMap<Value, unsigned> tapeIndex, outputIndex;
  llvm::DenseMap<Value, Value> transposes;
  /// Splats made before the loop, by type and the bits of the value.
  llvm::DenseMap<std::pair<Type, uint64_t>, Value> splats;
};

} // namespace

//===----------------------------------------------------------------------===//
// Forward values in the backward step
//===----------------------------------------------------------------------===//

BlockArgument CellAdjointContext::addSequenceArgument(Input input,
                                                      Type sliceType,
                                                      Location loc) {
  inputs.push_back(input);
  return cell->insertArgument(inputs.size() - 1, sliceType, loc);
}

Value CellAdjointContext::inputSlice(unsigned i) {
  for (auto [k, input] : llvm::enumerate(inputs))
    if (input.kind == Input::ForwardInput && input.index == i)
      return cell->getArgument(k);
  Value slice = fwd.getInputSlices()[i];
  return addSequenceArgument({Input::ForwardInput, i}, slice.getType(),
                             slice.getLoc());
}

FailureOr<Value> CellAdjointContext::saved(Value v) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() != 2 || type.isDynamicDim(1))
    return emitError(v.getLoc())
           << "lstm-differentiate: the backward pass needs this value of the "
              "cell at every step, and only [B, N] tensors with a static N "
              "can be saved by the forward (this one is "
           << v.getType() << ")";
  auto [it, inserted] = tapeIndex.try_emplace(v, tape.size());
  if (inserted)
    tape.push_back(v);
  for (auto [k, input] : llvm::enumerate(inputs))
    if (input.kind == Input::Tape && input.index == it->second)
      return Value(cell->getArgument(k));
  return Value(
      addSequenceArgument({Input::Tape, it->second}, type, v.getLoc()));
}

Value CellAdjointContext::batch() {
  if (!batchSize) {
    // The first state has the batch as its leading extent; read it at the
    // start of the step, where everything can use it.
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(cell);
    batchSize = tensor::DimOp::create(builder, fwd.getLoc(),
                                      cell->getArguments().back(), 0);
    // The states follow the sequences, the last argument is a state whose
    // position never changes relative to the end.
  }
  return batchSize;
}

FailureOr<Value> CellAdjointContext::getPrimal(Value v) {
  if (isCaptured(v))
    return v;
  if (Value p = primals.lookupOrNull(v))
    return p;
  if (std::optional<unsigned> i = inputSliceIndex(v))
    return inputSlice(*i);
  if (isa<BlockArgument>(v))
    return saved(v); // the state the forward step started from
  Operation *def = v.getDefiningOp();
  // The batch size is known without the value it was read from.
  if (auto dim = dyn_cast<tensor::DimOp>(def);
      dim && getConstantIntValue(dim.getIndex()) == 0 &&
      !isCaptured(dim.getSource()))
    return batch();
  // Gates hold the GEMMs and the nonlinearities: their results are saved.
  // Everything else is cheap pointwise or index work, recomputed.
  if (isa<GateOp>(def))
    return saved(v);
  if (def->getNumRegions() != 0 &&
      !def->hasTrait<OpTrait::IsIsolatedFromAbove>())
    return def->emitOpError(
        "would have to be recomputed by the backward step, which "
        "lstm-differentiate only does for ops without regions or with "
        "isolated ones");
  IRMapping mapping;
  for (Value operand : def->getOperands()) {
    FailureOr<Value> p = getPrimal(operand);
    if (failed(p))
      return failure();
    mapping.map(operand, *p);
  }
  Operation *clone = builder.clone(*def, mapping);
  for (auto [r, c] : llvm::zip(def->getResults(), clone->getResults()))
    primals.map(r, c);
  return primals.lookup(v);
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
        SmallVector<Value> sizes;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d))
            continue;
          if (d != 0)
            return emitError(like.getLoc(),
                             "lstm-differentiate: cell values with a dynamic "
                             "extent other than the batch are not supported");
          sizes.push_back(rows);
        }
        return tensor::EmptyOp::create(builder, like.getLoc(), type.getShape(),
                                       type.getElementType(), sizes)
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
    return emitError(weight.getLoc(),
                     "lstm-differentiate: a gate weight that the cell "
                     "computes at every step is not differentiated (weights "
                     "must be defined outside the layer)");
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
    return emitError(weight.getLoc(),
                     "lstm-differentiate: a gate weight that the cell "
                     "computes at every step is not differentiated (weights "
                     "must be defined outside the layer)");
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
    return emitError(v.getLoc(),
                     "lstm-differentiate: a bias or peephole weight that the "
                     "cell computes at every step is not differentiated "
                     "(define it outside the layer)");
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
    SmallVector<Value> sizes;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (!type.isDynamicDim(d))
        continue;
      if (d != 0)
        return emitError(like.getLoc(),
                         "lstm-differentiate: cell values with a dynamic "
                         "extent other than the batch are not supported");
      sizes.push_back(tensor::DimOp::create(outerBuilder, fwd.getLoc(),
                                            fwd.getInputs().front(), 1));
    }
    splat = buildSplatValue(outerBuilder, like.getLoc(), type, sizes, c);
  }
  return splat;
}

//===----------------------------------------------------------------------===//
// The backward cell
//===----------------------------------------------------------------------===//

LogicalResult CellAdjointContext::build(ArrayRef<Value> outputCotangents) {
  YieldOp yield = fwd.getYield();
  Block &forward = fwd.getBody().front();
  unsigned numStates = fwd.getInits().size();
  SmallVector<BlockArgument> stateCotangents(
      cell->getArguments().take_back(numStates));

  // Seeds: the cotangent of the new state is the backward state; that of a
  // step's output is the slice of the output's cotangent.
  for (auto [next, ds] : llvm::zip(yield.getState(), stateCotangents))
    if (isActive(next) && failed(addCotangent(next, ds)))
      return failure();
  for (auto [j, pair] :
       llvm::enumerate(llvm::zip(yield.getOutputs(), outputCotangents))) {
    auto [out, dY] = pair;
    if (!dY || !isActive(out))
      continue;
    BlockArgument dy =
        addSequenceArgument({Input::OutputCotangent, static_cast<unsigned>(j)},
                            out.getType(), out.getLoc());
    if (failed(addCotangent(out, dy)))
      return failure();
  }

  for (Operation &op : llvm::reverse(forward.without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value r) { return cotangents.has(r); }))
      continue;
    if (llvm::none_of(op.getOperands(), [&](Value v) { return isActive(v); }))
      continue;
    auto rule = dyn_cast<AdjointOpInterface>(&op);
    if (!rule)
      return op.emitOpError("has no derivative (lstm-differentiate)");
    if (failed(rule.buildAdjoint(*this)) || materializationFailed)
      return failure();
  }

  // What reaches the input slices leaves the loop step by step.
  for (auto [i, slice] : llvm::enumerate(fwd.getInputSlices())) {
    if (!cotangents.has(slice))
      continue;
    Value c = getCotangent(slice);
    if (!c)
      return failure();
    FailureOr<SequenceRef> rows = output(c);
    if (failed(rows))
      return failure();
    Deferred item{Deferred::InputRows, fwd.getInputs()[i], *rows};
    item.inputIndex = i;
    deferred.push_back(item);
  }
  if (failed(resolveBroadcasts()))
    return failure();
  // The cotangent of the state the step started from is the next backward
  // state.
  for (BlockArgument state : fwd.getStateArgs()) {
    Value c = cotangents.has(state) ? getCotangent(state) : Value();
    if (!c) {
      FailureOr<Value> zeros = buildSplat(state, 0.0);
      if (failed(zeros))
        return failure();
      c = *zeros;
    }
    nextStates.push_back(c);
  }
  YieldOp::create(builder, fwd.getLoc(), outputs, nextStates);
  return success();
}

//===----------------------------------------------------------------------===//
// FunctionAdjointContext::differentiateLayer
//===----------------------------------------------------------------------===//

LogicalResult FunctionAdjointContext::differentiateLayer(LayerOp fwd) {
  Location loc = fwd.getLoc();
  SmallVector<Value> outputCotangents, finalCotangents;
  bool any = false;
  for (Value out : fwd.getOutputs()) {
    outputCotangents.push_back(getCotangent(out));
    any |= static_cast<bool>(outputCotangents.back());
  }
  for (Value final : fwd.getFinals()) {
    finalCotangents.push_back(getCotangent(final));
    any |= static_cast<bool>(finalCotangents.back());
  }
  if (!any)
    return success();
  WalkResult nested = fwd.getBody().walk([](LayerOp inner) {
    inner.emitOpError("is nested in the cell of another layer, which "
                      "lstm-differentiate does not differentiate");
    return WalkResult::interrupt();
  });
  if (nested.wasInterrupted())
    return failure();

  // The backward cell: its states are the cotangents of the forward states;
  // the sequences it reads are inserted before them as it is built.
  auto cell = std::make_unique<Block>();
  for (Value init : fwd.getInits())
    cell->addArgument(init.getType(), init.getLoc());
  // (The block has no region yet: the builder gets the context itself.)
  OpBuilder cellBuilder(builder.getContext());
  cellBuilder.setInsertionPointToEnd(cell.get());
  CellAdjointContext ctx(*this, builder, fwd, cell.get(), cellBuilder);
  if (failed(ctx.build(outputCotangents)))
    return failure();

  SmallVector<Value> tapeSequences;
  LayerOp forward = addTapeOutputs(builder, fwd, ctx.tape, tapeSequences);
  auto resolve = [&](SequenceRef ref, LayerOp backward) -> Value {
    switch (ref.kind) {
    case SequenceRef::ForwardInput:
      return forward.getInputs()[ref.index];
    case SequenceRef::Tape:
      return tapeSequences[ref.index];
    case SequenceRef::BackwardOutput:
      return backward.getOutputs()[ref.index];
    }
    llvm_unreachable("unknown sequence");
  };

  SmallVector<Value> sequences;
  for (const CellAdjointContext::Input &input : ctx.inputs) {
    switch (input.kind) {
    case CellAdjointContext::Input::ForwardInput:
      sequences.push_back(forward.getInputs()[input.index]);
      break;
    case CellAdjointContext::Input::Tape:
      sequences.push_back(tapeSequences[input.index]);
      break;
    case CellAdjointContext::Input::OutputCotangent:
      sequences.push_back(outputCotangents[input.index]);
      break;
    }
  }
  SmallVector<Value> inits;
  for (auto [init, c] : llvm::zip(forward.getInits(), finalCotangents)) {
    if (c) {
      inits.push_back(c);
      continue;
    }
    FailureOr<Value> zeros = buildSplat(init, 0.0);
    if (failed(zeros))
      return failure();
    inits.push_back(*zeros);
  }
  auto first = cast<RankedTensorType>(forward.getInputs().front().getType());
  SmallVector<Type> outputTypes;
  for (Value v : ctx.outputs) {
    auto step = cast<RankedTensorType>(v.getType());
    outputTypes.push_back(RankedTensorType::get(
        {first.getDimSize(0), step.getDimSize(0), step.getDimSize(1)},
        step.getElementType()));
  }
  auto backward = LayerOp::create(
      builder, loc, outputTypes, forward.getInits().getTypes(),
      forward.isReverse() ? Direction::forward : Direction::reverse, sequences,
      inits, forward.getLengths());
  backward.getBody().push_back(cell.release());

  // After the loop: the sums over all steps.
  llvm::DenseMap<Value, Value> sums;
  for (const Deferred &item : ctx.deferred) {
    Value rows = resolve(item.rows, backward);
    switch (item.kind) {
    case Deferred::InputProduct: {
      Value product =
          buildMatmul(builder, loc, collapseLeadingDims(builder, loc, rows),
                      item.weight, false, false);
      cotangents.add(item.target,
                     expandLeadingDim(builder, loc, product, item.target));
      break;
    }
    case Deferred::Weight: {
      Value operand = resolve(item.operand, backward);
      cotangents.add(item.target,
                     buildMatmul(builder, loc,
                                 collapseLeadingDims(builder, loc, rows),
                                 collapseLeadingDims(builder, loc, operand),
                                 /*transposeLhs=*/true, false));
      break;
    }
    case Deferred::Broadcast: {
      // One sum per output sequence, sliced by the gates that share it.
      Value &sum = sums[rows];
      if (!sum)
        sum = buildColumnSums(builder, loc,
                              collapseLeadingDims(builder, loc, rows));
      Value v = sum;
      if (item.columnOffset) {
        int64_t width =
            cast<RankedTensorType>(item.rowsValue.getType()).getDimSize(1);
        v = tensor::ExtractSliceOp::create(
            builder, loc, sum,
            ArrayRef<OpFoldResult>{builder.getIndexAttr(*item.columnOffset)},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(width)},
            ArrayRef<OpFoldResult>{builder.getIndexAttr(1)});
        if (v.getType() != item.target.getType())
          v = tensor::CastOp::create(builder, loc, item.target.getType(), v);
      }
      cotangents.add(item.target, v);
      break;
    }
    case Deferred::InputRows:
      cotangents.add(item.target, rows);
      break;
    case Deferred::Captured:
      cotangents.add(item.target, buildSumOverLeadingDim(builder, loc, rows));
      break;
    }
  }
  for (auto [init, c] : llvm::zip(forward.getInits(), backward.getFinals()))
    if (isActive(init))
      cotangents.add(init, c);
  return success();
}
