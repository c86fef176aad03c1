//===- SplitBatch.cpp - A layer's batch in parts, one a thread ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The rows of a layer's batch never meet: row b's state at step t is made
// from row b's inputs and state alone. Threads that split each step's
// product and cell wait for each other twice a step, which on many cores
// costs more than the step's arithmetic; threads that each take some rows
// for the whole sequence never wait until the layer ends. This pass makes
// that split where the cell lets it (see RowwiseCell) and the weights,
// which every thread then reads at every step, fit a core's cache.
//
//===----------------------------------------------------------------------===//

#include "lstm/Dialect/LSTM/Transforms/Passes.h"

#include "lstm/Dialect/LSTM/IR/LSTMOps.h"
#include "lstm/Dialect/LSTM/Utils/HoistedInputs.h"
#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "lstm-split-batch"

namespace mlir::lstm {
#define GEN_PASS_DEF_LSTMSPLITBATCHPASS
#include "lstm/Dialect/LSTM/Transforms/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;

/// Whether `type` is an f32 tensor of rank `rank` whose dimension `batch`
/// is dynamic.
static bool isF32WithDynamicBatch(Type type, int64_t rank, int64_t batch) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == rank &&
         tensor.getElementType().isF32() && tensor.isDynamicDim(batch);
}

namespace {
/// Decides whether a cell computes each batch row from that row alone. The
/// batch values are the cell's arguments and what is computed from them;
/// the others (weights, biases, slices of them, constants) are parameters.
class RowwiseCell {
public:
  /// Empty where the cell is row-wise, else why not.
  std::string check(LayerOp layer) {
    Block &body = layer.getBody().front();
    for (BlockArgument arg : body.getArguments()) {
      if (!isF32WithDynamicBatch(arg.getType(), 2, 0))
        return "a cell argument is not an f32 [?, N] tensor";
      batch.insert(arg);
    }
    for (Operation &op : body) {
      if (llvm::none_of(op.getOperands(), isBatch)) {
        // Parameters only: any computation on them stays a parameter.
        if (op.getNumRegions() != 0)
          return "an op with regions on parameters: " + name(op);
        continue;
      }
      if (std::string why = checkBatchOp(op); !why.empty())
        return why;
      batch.insert(op.result_begin(), op.result_end());
    }
    return "";
  }

  /// The elements of the weights the cell's gates multiply (each counted
  /// once); nullopt if one has a dynamic shape.
  static std::optional<int64_t> weightElements(LayerOp layer) {
    llvm::DenseSet<Value> counted;
    int64_t elements = 0;
    for (auto gate : layer.getBody().getOps<GateOp>())
      for (Value weight : gate.getWeights()) {
        auto type = cast<RankedTensorType>(weight.getType());
        if (!type.hasStaticShape())
          return std::nullopt;
        if (counted.insert(weight).second)
          elements += type.getNumElements();
      }
    return elements;
  }

private:
  llvm::DenseSet<Value> batch;
  std::function<bool(Value)> isBatch = [this](Value v) {
    return batch.contains(v);
  };

  static std::string name(Operation &op) {
    return op.getName().getStringRef().str();
  }

  /// Whether `size` is the batch extent of a batch value (tensor.dim of
  /// it, dimension 0).
  bool isBatchExtent(OpFoldResult size) {
    auto value = dyn_cast<Value>(size);
    auto dim = value ? value.getDefiningOp<tensor::DimOp>() : nullptr;
    return dim && isBatch(dim.getSource()) &&
           getConstantIntValue(dim.getDimension()) == 0;
  }

  /// For a slice of a batch value: every row, and the other dimensions'
  /// offsets, sizes and strides from parameters.
  std::string checkSliceKeepsRows(OffsetSizeAndStrideOpInterface slice) {
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets(),
                              sizes = slice.getMixedSizes(),
                              strides = slice.getMixedStrides();
    if (!isConstantIntValue(offsets[0], 0) ||
        !isConstantIntValue(strides[0], 1) || !isBatchExtent(sizes[0]))
      return "a slice that does not keep every row: " + name(*slice);
    for (size_t d = 1; d < offsets.size(); ++d)
      for (OpFoldResult v : {offsets[d], sizes[d], strides[d]})
        if (auto value = dyn_cast<Value>(v); value && isBatch(value))
          return "a slice whose columns depend on the batch: " + name(*slice);
    return "";
  }

  /// Why `op`, which reads a batch value, may not compute a row from that
  /// row alone; empty where it does.
  std::string checkBatchOp(Operation &op) {
    auto allBatch = [&](ValueRange values) {
      return llvm::all_of(values, isBatch);
    };
    auto noBatch = [&](ValueRange values) {
      return llvm::none_of(values, isBatch);
    };
    auto rowsOf = [](Value v) {
      return isF32WithDynamicBatch(v.getType(), 2, 0);
    };
    auto mixed = [&] {
      return "batch values and parameters mixed in " + name(op);
    };
    if (auto gate = dyn_cast<GateOp>(op)) {
      if (gate.isBatched())
        return "a batched gate";
      if (!allBatch(gate.getInputs()) || !allBatch(gate.getAddends()) ||
          !noBatch(gate.getWeights()) || !noBatch(gate.getBiases()) ||
          (gate.getPeephole() && isBatch(gate.getPeephole())) ||
          (gate.getPeepholeState() && !isBatch(gate.getPeepholeState())))
        return mixed();
      return "";
    }
    if (auto pointwise = dyn_cast<PointwiseOp>(op)) {
      for (Value operand : pointwise->getOperands()) {
        auto type = cast<ShapedType>(operand.getType());
        if (type.getRank() == 2 ? !isBatch(operand) : isBatch(operand))
          return mixed();
      }
      if (!llvm::all_of(pointwise->getResults(), rowsOf))
        return "a pointwise op over other than [B, N]";
      return "";
    }
    if (isa<OneMinusOp, tensor::DimOp>(op))
      return "";
    if (isa<YieldOp>(op))
      return allBatch(op.getOperands()) ? "" : mixed();
    if (auto empty = dyn_cast<tensor::EmptyOp>(op)) {
      // Rows: the batch extent of a batch value; other sizes parameters.
      if (!rowsOf(empty) || !isBatchExtent(empty.getMixedSizes()[0]) ||
          !noBatch(empty.getDynamicSizes().drop_front()))
        return "an empty tensor of other than [B, N]";
      return "";
    }
    if (auto fill = dyn_cast<linalg::FillOp>(op))
      return noBatch(fill.getInputs()) && allBatch(fill.getOutputs()) ? ""
                                                                      : mixed();
    if (auto cast = dyn_cast<tensor::CastOp>(op))
      return rowsOf(cast.getResult()) ? "" : "a cast of the batch extent";
    if (auto concat = dyn_cast<tensor::ConcatOp>(op))
      return concat.getDim() != 0 && allBatch(concat.getInputs())
                 ? ""
                 : "a concatenation along the batch or of parameters";
    if (auto extract = dyn_cast<tensor::ExtractSliceOp>(op)) {
      if (!isBatch(extract.getSource()) || !rowsOf(extract.getResult()))
        return mixed();
      return checkSliceKeepsRows(extract);
    }
    if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
      if (!isBatch(insert.getSource()) || !isBatch(insert.getDest()))
        return mixed();
      return checkSliceKeepsRows(insert);
    }
    // Element-wise ops on tensors of one shape: every tensor operand a
    // batch value (a parameter of that shape would be one of the batch's
    // extent, from above).
    if (op.hasTrait<OpTrait::Elementwise>() && op.getNumRegions() == 0) {
      for (Value operand : op.getOperands())
        if (isa<TensorType>(operand.getType()) && !isBatch(operand))
          return mixed();
      return llvm::all_of(op.getResults(), rowsOf)
                 ? ""
                 : "an element-wise op over other than [B, N]";
    }
    // Scalars computed from the batch extent: harmless until they size
    // something, which the checks above refuse.
    if (isPure(&op) && op.getNumRegions() == 0 &&
        llvm::all_of(op.getOperandTypes(),
                     [](Type t) { return t.isIntOrIndexOrFloat(); }) &&
        llvm::all_of(op.getResultTypes(),
                     [](Type t) { return t.isIntOrIndexOrFloat(); }))
      return "";
    return "an op the split does not know to be row-wise: " + name(op);
  }
};
} // namespace

/// Why `layer` cannot be split (empty if it can); where it can, `minRows`
/// becomes the fewest rows a part takes: `largeMinRows` where its cell
/// multiplies more than `maxWeightBytes` of weights (0: not split then).
static std::string whyNotSplit(LayerOp layer, int64_t maxWeightBytes,
                               int64_t largeMinRows, int64_t &minRows) {
  if (layer.getInputs().empty())
    return "no input sequence";
  for (Value input : layer.getInputs())
    if (!isF32WithDynamicBatch(input.getType(), 3, 1))
      return "an input is not an f32 [T, ?, K] sequence";
  for (Value output : layer.getOutputs())
    if (!isF32WithDynamicBatch(output.getType(), 3, 1))
      return "an output is not an f32 [T, ?, N] sequence";
  for (Value state : llvm::concat<Value>(layer.getInits(), layer.getFinals()))
    if (!isF32WithDynamicBatch(state.getType(), 2, 0))
      return "a state is not an f32 [?, N] tensor";
  // A static extent of 0 (an empty sequence): nothing to split, and the
  // parts' slices would start at an offset the verifier refuses.
  for (Value value : llvm::concat<Value>(layer.getInputs(), layer.getInits(),
                                         layer->getResults()))
    if (llvm::is_contained(cast<RankedTensorType>(value.getType()).getShape(),
                           0))
      return "a static extent of 0";
  if (std::string why = RowwiseCell().check(layer); !why.empty())
    return why;
  // f32 weights (the cell's arguments are f32, and so its products).
  std::optional<int64_t> elements = RowwiseCell::weightElements(layer);
  if (!elements)
    return "weights of a dynamic shape";
  int64_t bytes = *elements * 4;
  if (bytes > maxWeightBytes) {
    if (largeMinRows == 0)
      return "weights of " + std::to_string(bytes) + " bytes, over " +
             std::to_string(maxWeightBytes);
    minRows = std::max(minRows, largeMinRows);
  }
  return "";
}

/// `value`'s rows [lo, lo + rows): dimension `batch`, every other whole.
static Value sliceRows(OpBuilder &b, Location loc, Value value, int64_t batch,
                       Value lo, Value rows) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, value);
  SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
  offsets[batch] = lo;
  sizes[batch] = rows;
  return tensor::ExtractSliceOp::create(b, loc, type, value, offsets, sizes,
                                        strides);
}

/// Rewrites `layer` into the scf.forall over parts of its batch.
static LogicalResult splitLayer(IRRewriter &rewriter, LayerOp layer,
                                func::FuncOp threadsFunction, int64_t minRows,
                                int64_t minPartWork) {
  Location loc = layer.getLoc();
  rewriter.setInsertionPoint(layer);
  // The parts take their rows of every sequence, state and length by the
  // first sequence's batch: the extents the layer's lowering would check
  // are checked here, before a larger state's extra rows go unread.
  assertLayerExtents(rewriter, layer);
  ReifiedRankedShapedTypeDims shapes;
  if (failed(reifyResultShapes(rewriter, layer, shapes)))
    return failure();
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  Value one = index(1);
  Value steps = tensor::DimOp::create(rewriter, loc, layer.getInputs()[0], 0);
  Value batch = tensor::DimOp::create(rewriter, loc, layer.getInputs()[0], 1);
  auto atLeastOne = [&](Value v) {
    return arith::MaxSIOp::create(rewriter, loc, v, one).getResult();
  };
  // The layer's multiply-adds: T · B · the weights' elements (static, see
  // whyNotSplit). (T and B are extents of one tensor: their product fits.)
  int64_t weightElements = RowwiseCell::weightElements(layer).value_or(1);
  Value work = arith::MulIOp::create(
      rewriter, loc, arith::MulIOp::create(rewriter, loc, steps, batch),
      index(std::max<int64_t>(weightElements, 1)));
  // Parts: one a thread, each of at least minRows rows and minPartWork
  // multiply-adds (at least one part: a small layer is not worth waking
  // the threads for).
  Value parts = arith::MinSIOp::create(
      rewriter, loc,
      arith::MinSIOp::create(rewriter, loc,
                             buildThreadCount(rewriter, loc, threadsFunction),
                             atLeastOne(arith::DivSIOp::create(
                                 rewriter, loc, batch, index(minRows)))),
      atLeastOne(
          arith::DivSIOp::create(rewriter, loc, work, index(minPartWork))));

  // Each result whole, written by the parts: a buffer of its own, with
  // the identity layout (from a tensor.empty, empty-tensor elimination
  // could make it a slice of the tensor the result is inserted into, whose
  // strides, dynamic, would then reach the products that read the result:
  // no longer invariant in their loops, they would not be packed once).
  SmallVector<Value> wholes;
  for (auto [result, shape] : llvm::zip_equal(layer->getResults(), shapes)) {
    auto type = cast<RankedTensorType>(result.getType());
    SmallVector<Value> dynamic;
    for (auto [d, size] : llvm::enumerate(shape))
      if (type.isDynamicDim(d))
        dynamic.push_back(getValueOrCreateConstantIndexOp(rewriter, loc, size));
    wholes.push_back(
        bufferization::AllocTensorOp::create(rewriter, loc, type, dynamic));
  }

  size_t numOutputs = layer.getOutputs().size();
  auto forall = scf::ForallOp::create(
      rewriter, loc, ArrayRef<OpFoldResult>{parts}, wholes,
      /*mapping=*/std::nullopt,
      [&](OpBuilder &b, Location loc, ValueRange args) {
        Value k = args[0];
        // Rows [k·B/n, (k+1)·B/n): parts of nearly equal size.
        auto bound = [&](Value i) {
          return arith::DivSIOp::create(
              b, loc, arith::MulIOp::create(b, loc, i, batch), parts);
        };
        Value lo = bound(k);
        Value hi = bound(arith::AddIOp::create(b, loc, k, one));
        Value rows = arith::SubIOp::create(b, loc, hi, lo);
        IRMapping mapping;
        for (Value input : layer.getInputs())
          mapping.map(input, sliceRows(b, loc, input, 1, lo, rows));
        for (Value init : layer.getInits())
          mapping.map(init, sliceRows(b, loc, init, 0, lo, rows));
        if (Value lengths = layer.getLengths())
          mapping.map(lengths, sliceRows(b, loc, lengths, 0, lo, rows));
        Operation *part = b.clone(*layer, mapping);
        auto terminator = scf::InParallelOp::create(b, loc);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(terminator.getBody());
        for (auto [i, shape] : llvm::enumerate(shapes)) {
          // Outputs [T, B, N...] by dimension 1, finals [B, ...] by 0.
          int64_t rowsDim = i < numOutputs ? 1 : 0;
          SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
          SmallVector<OpFoldResult> sizes(shape);
          SmallVector<OpFoldResult> strides(shape.size(), b.getIndexAttr(1));
          offsets[rowsDim] = lo;
          sizes[rowsDim] = rows;
          tensor::ParallelInsertSliceOp::create(
              b, loc, part->getResult(i), args[1 + i], offsets, sizes, strides);
        }
      });
  rewriter.replaceOp(layer, forall.getResults());
  return success();
}

namespace {
struct LSTMSplitBatchPass
    : public lstm::impl::LSTMSplitBatchPassBase<LSTMSplitBatchPass> {
  using Base::Base;

  void runOnOperation() override {
    if (failed(requireThreadsFunction(getOperation(), threadsFunction,
                                      getArgument())))
      return signalPassFailure();
    if (minRows < 1) {
      getOperation()->emitError("lstm-split-batch: min-rows must be >= 1, got ")
          << static_cast<int64_t>(minRows);
      return signalPassFailure();
    }
    if (minPartWork < 1) {
      getOperation()->emitError(
          "lstm-split-batch: min-part-work must be >= 1, got ")
          << static_cast<int64_t>(minPartWork);
      return signalPassFailure();
    }
    if (largeWeightMinRows < 0) {
      getOperation()->emitError("lstm-split-batch: large-weight-min-rows "
                                "must be >= 0, got ")
          << static_cast<int64_t>(largeWeightMinRows);
      return signalPassFailure();
    }
    // Each layer to split, with the fewest rows of its parts.
    SmallVector<std::pair<LayerOp, int64_t>> layers;
    getOperation()->walk([&](LayerOp layer) {
      // A layer inside another's cell, or already split, stays.
      if (layer->getParentOfType<LayerOp>() ||
          layer->getParentOfType<scf::ForallOp>())
        return;
      int64_t rows = minRows;
      std::string why =
          whyNotSplit(layer, maxWeightBytes, largeWeightMinRows, rows);
      LLVM_DEBUG(llvm::dbgs() << "lstm-split-batch: layer at " << layer.getLoc()
                              << (why.empty() ? ": split" : ": left whole, ")
                              << why << "\n");
      if (why.empty())
        layers.push_back({layer, rows});
    });
    if (layers.empty())
      return;
    IRRewriter rewriter(&getContext());
    FailureOr<func::FuncOp> threads = declareThreadsFunction(
        rewriter, getOperation(), threadsFunction, getArgument());
    if (failed(threads))
      return signalPassFailure();
    for (auto [layer, rows] : layers)
      if (failed(splitLayer(rewriter, layer, *threads, rows, minPartWork))) {
        layer.emitError("lstm-split-batch: cannot compute the layer's "
                        "result shapes");
        return signalPassFailure();
      }
  }
};
} // namespace
