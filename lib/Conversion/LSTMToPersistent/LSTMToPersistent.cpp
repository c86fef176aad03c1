//===- LSTMToPersistent.cpp - A layer's time loop as one kernel -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The per-step lowering launches a GEMM and a fused kernel per step, from a
// loop on the host; at small batch each step is a few microseconds of launch
// latency around less work. Here the loop runs inside one kernel instead:
// every block computes its tile of units for every step, and the blocks meet
// at a grid-wide barrier between steps (the next step's products read every
// unit's state). The kernel is built from the cell's IR: the pointwise
// region is cloned into it, and the product columns it reads are computed
// where they are read. See the pass's description (Passes.td) for what it
// handles.
//
// Per step, each warp of a block takes one (row, unit) element of the
// block's tile at a time: its lanes split the dot products of the product
// columns the element needs (lane l sums k = l, l + 32, ...: consecutive
// lanes read consecutive weights of a row), a butterfly of shuffles gives
// every lane the sums, every lane evaluates the cloned pointwise region and
// lane 0 stores the results.
//
// The layer becomes, before it (tensor level, ahead of bufferization):
// `bufferization.to_buffer` views of what the kernel reads, `memref.alloc`s
// of what it writes (the outputs, the finals, two buffers per state used
// alternately, the barrier's counter), the `gpu.launch`, and
// `bufferization.to_tensor` of the results.
//
//===----------------------------------------------------------------------===//

#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"

#include "PersistentPlan.h"

#include "lstm/Dialect/LSTM/Utils/RuntimeChecks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::lstm {
#define GEN_PASS_DEF_CONVERTLSTMTOPERSISTENTPASS
#include "lstm/Conversion/Passes.h.inc"
} // namespace mlir::lstm

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// The threads of a warp, which split a step's dot products.
static constexpr int32_t kWarpSize = 32;
/// How many of a lane's terms of a dot product are loaded at once.
static constexpr int64_t kUnrollFactor = 4;

namespace {

/// A memref of `shape` with a fully dynamic strided layout: what any tensor
/// bufferizes to can be cast to it, so `to_buffer` never copies.
MemRefType stridedMemRef(ArrayRef<int64_t> shape, Type elementType) {
  MLIRContext *ctx = elementType.getContext();
  SmallVector<int64_t> strides(shape.size(), ShapedType::kDynamic);
  return MemRefType::get(
      shape, elementType,
      StridedLayoutAttr::get(ctx, ShapedType::kDynamic, strides));
}

class PersistentKernelBuilder {
public:
  PersistentKernelBuilder(RewriterBase &rewriter, PersistentPlan plan,
                          int64_t blockSize, int64_t maxBlocks)
      : rewriter(rewriter), plan(std::move(plan)), layer(this->plan.layer),
        loc(layer.getLoc()), blockSize(blockSize) {
    int64_t n = this->plan.width;
    unitsPerBlock = (n + maxBlocks - 1) / maxBlocks;
    numBlocks = (n + unitsPerBlock - 1) / unitsPerBlock;
  }

  void build(StringRef kernelName);

private:
  // Host side, before the layer.
  Value readOnlyBuffer(Value tensor);
  Value allocLike(RankedTensorType type, ArrayRef<Value> leadingExtents);
  void prepareBuffers();
  // The kernel.
  void buildKernel(gpu::LaunchOp launch);
  void forOwnElements(OpBuilder &b, Value blockId, Value threadId,
                      function_ref<void(OpBuilder &, Value, Value)> body);
  void forWarpElements(OpBuilder &b, Value blockId, Value warp,
                       function_ref<void(OpBuilder &, Value, Value)> body);
  void buildStep(OpBuilder &b, Value step, Value cur, Value next, Value row,
                 Value unit, Value lane);
  SmallVector<Value> buildProductColumns(OpBuilder &b, const Product &product,
                                         ArrayRef<int64_t> columns, Value cur,
                                         Value row, Value unit, Value lane);
  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

  RewriterBase &rewriter;
  PersistentPlan plan;
  LayerOp layer;
  Location loc;
  int64_t blockSize, unitsPerBlock, numBlocks;

  Value seqLen, batch;
  SmallVector<Value> inputs, inits, stateBuffers, outputs, finals;
  /// Per product, per term: the weight [M, K].
  SmallVector<SmallVector<Value>> weights;
  DenseMap<Value, Value> aboveBuffers;
  Value counter;
};

} // namespace

Value PersistentKernelBuilder::readOnlyBuffer(Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  return bufferization::ToBufferOp::create(
      rewriter, loc, stridedMemRef(type.getShape(), type.getElementType()),
      tensor, /*read_only=*/true);
}

/// A buffer of `type`'s shape whose dynamic extents are, in order, those of
/// `leadingExtents` aligned with the leading dimensions.
Value PersistentKernelBuilder::allocLike(RankedTensorType type,
                                         ArrayRef<Value> leadingExtents) {
  SmallVector<Value> dynamic;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamic.push_back(leadingExtents[d]);
  return memref::AllocOp::create(
      rewriter, loc, MemRefType::get(type.getShape(), type.getElementType()),
      dynamic);
}

void PersistentKernelBuilder::prepareBuffers() {
  // The extents the kernel indexes with must agree (as the per-step
  // lowering checks them).
  assertLayerExtents(rewriter, layer);
  Value seq0 = layer.getInputs().front();
  for (const OperandSource &source : plan.operands)
    if (source.kind == OperandSource::Kind::Above &&
        cast<RankedTensorType>(source.above.getType()).getRank() == 2)
      assertSameExtent(rewriter, loc, source.above, 0, seq0, 1,
                       "lstm.layer: a value of the cell has a different "
                       "batch size than the input");
  seqLen = tensor::DimOp::create(rewriter, loc, seq0, 0);
  batch = tensor::DimOp::create(rewriter, loc, seq0, 1);

  for (Value seq : layer.getInputs())
    inputs.push_back(readOnlyBuffer(seq));
  for (Value init : layer.getInits())
    inits.push_back(readOnlyBuffer(init));
  for (const OperandSource &source : plan.operands)
    if (source.kind == OperandSource::Kind::Above &&
        !aboveBuffers.count(source.above))
      aboveBuffers[source.above] = readOnlyBuffer(source.above);

  DenseMap<Value, Value> weightBuffers;
  for (const Product &product : plan.products) {
    SmallVector<Value> &terms = weights.emplace_back();
    for (auto [state, weight] : product.terms) {
      Value &buffer = weightBuffers[weight];
      if (!buffer)
        buffer = readOnlyBuffer(weight);
      terms.push_back(buffer);
    }
  }

  Type f32 = rewriter.getF32Type();
  for (size_t s = 0; s < layer.getInits().size(); ++s)
    stateBuffers.push_back(memref::AllocOp::create(
        rewriter, loc,
        MemRefType::get({2, ShapedType::kDynamic, plan.width}, f32),
        ValueRange{batch}));
  for (Value out : layer.getOutputs())
    outputs.push_back(
        allocLike(cast<RankedTensorType>(out.getType()), {seqLen, batch}));
  for (Value final : layer.getFinals())
    finals.push_back(
        allocLike(cast<RankedTensorType>(final.getType()), {batch}));

  // The barrier's counter counts arrivals: barrier k waits for k·G, which
  // must fit its 32 bits (the barriers are T + 1). Zeroed by a memset: a
  // one-element linalg.fill would become a store on the host.
  int64_t maxSteps = (int64_t{1} << 31) / numBlocks - 2;
  Value fits = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ule,
                                     seqLen, index(rewriter, maxSteps));
  cf::AssertOp::create(
      rewriter, loc, fits,
      "lstm.layer: the sequence is too long for a persistent kernel of " +
          std::to_string(numBlocks) + " blocks (at most " +
          std::to_string(maxSteps) + " steps) (at " + describeLocation(loc) +
          ")");
  counter = memref::AllocOp::create(
      rewriter, loc, MemRefType::get({1}, rewriter.getI32Type()));
  Value zero = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  gpu::MemsetOp::create(rewriter, loc, /*asyncToken=*/Type(), ValueRange(),
                        counter, zero);
}

/// Runs `body(b, row, unit)` for each element of the block's tile that this
/// thread owns: the tile is every row of `unitsPerBlock` units, its
/// elements dealt out to the threads in turn (consecutive threads,
/// consecutive units).
void PersistentKernelBuilder::forOwnElements(
    OpBuilder &b, Value blockId, Value threadId,
    function_ref<void(OpBuilder &, Value, Value)> body) {
  Value units = index(b, unitsPerBlock);
  Value first = arith::MulIOp::create(b, loc, blockId, units);
  Value count = arith::MulIOp::create(b, loc, batch, units);
  scf::ForOp::create(
      b, loc, threadId, count, index(b, blockSize), ValueRange(),
      [&](OpBuilder &nb, Location l, Value item, ValueRange) {
        Value row = arith::DivUIOp::create(nb, l, item, units);
        Value unit = arith::AddIOp::create(
            nb, l, first, arith::RemUIOp::create(nb, l, item, units));
        Value inside = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult,
                                             unit, index(nb, plan.width));
        scf::IfOp::create(nb, l, inside, [&](OpBuilder &ib, Location) {
          body(ib, row, unit);
          scf::YieldOp::create(ib, l);
        });
        scf::YieldOp::create(nb, l);
      });
}

/// Runs `body(b, row, unit)`, with every lane of the warp, for each element
/// of the block's tile that warp `warp` owns (the elements dealt out to the
/// warps in turn). The condition is uniform over the warp, as the shuffles
/// of the body need.
void PersistentKernelBuilder::forWarpElements(
    OpBuilder &b, Value blockId, Value warp,
    function_ref<void(OpBuilder &, Value, Value)> body) {
  Value units = index(b, unitsPerBlock);
  Value first = arith::MulIOp::create(b, loc, blockId, units);
  Value count = arith::MulIOp::create(b, loc, batch, units);
  scf::ForOp::create(
      b, loc, warp, count, index(b, blockSize / kWarpSize), ValueRange(),
      [&](OpBuilder &nb, Location l, Value item, ValueRange) {
        Value row = arith::DivUIOp::create(nb, l, item, units);
        Value unit = arith::AddIOp::create(
            nb, l, first, arith::RemUIOp::create(nb, l, item, units));
        Value inside = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult,
                                             unit, index(nb, plan.width));
        scf::IfOp::create(nb, l, inside, [&](OpBuilder &ib, Location) {
          body(ib, row, unit);
          scf::YieldOp::create(ib, l);
        });
        scf::YieldOp::create(nb, l);
      });
}

/// Columns `columns[j] + unit` of `product` for `row`, in every lane of the
/// warp: the dot products of the states it reads (at the start of the
/// step, buffer `cur`) with those rows of its weights, summed over its
/// terms. Lane `lane` sums the k = lane (mod 32) terms, reading each state
/// element once for all the columns (independent loads and FMA chains), and
/// the shuffles sum the lanes'.
SmallVector<Value> PersistentKernelBuilder::buildProductColumns(
    OpBuilder &b, const Product &product, ArrayRef<int64_t> columns, Value cur,
    Value row, Value unit, Value lane) {
  size_t p = &product - plan.products.data();
  SmallVector<Value> weightRows;
  for (int64_t column : columns)
    weightRows.push_back(arith::AddIOp::create(b, loc, unit, index(b, column)));
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  SmallVector<Value> acc(columns.size(), zero);
  for (auto [term, weight] : llvm::zip(product.terms, weights[p])) {
    unsigned state = term.first;
    int64_t depth = cast<MemRefType>(weight.getType()).getDimSize(1);
    // Lane `lane` takes k = lane, lane + 32, ...: a main loop over
    // kUnrollFactor of them at a time (their loads in flight together:
    // one iteration would otherwise wait for L2 before the next), then the
    // rest one at a time.
    auto accumulate = [&](OpBuilder &nb, Location l, Value k,
                          SmallVector<Value> sums) {
      Value h = memref::LoadOp::create(nb, l, stateBuffers[state],
                                       ValueRange{cur, row, k});
      for (auto [weightRow, partial] : llvm::zip(weightRows, sums)) {
        Value w =
            memref::LoadOp::create(nb, l, weight, ValueRange{weightRow, k});
        partial = math::FmaOp::create(nb, l, h, w, partial);
      }
      return sums;
    };
    int64_t span = kWarpSize * kUnrollFactor;
    // The main loop's k satisfy k + span - 32 < depth.
    Value mainEnd = index(b, std::max<int64_t>(depth - span + kWarpSize, 0));
    auto main = scf::ForOp::create(
        b, loc, lane, mainEnd, index(b, span), acc,
        [&](OpBuilder &nb, Location l, Value k, ValueRange iterArgs) {
          SmallVector<Value> sums(iterArgs);
          for (int64_t j = 0; j < kUnrollFactor; ++j) {
            Value kj =
                arith::AddIOp::create(nb, l, k, index(nb, j * kWarpSize));
            sums = accumulate(nb, l, kj, sums);
          }
          scf::YieldOp::create(nb, l, sums);
        });
    // Where the main loop stopped: the first k = lane (mod span) at or past
    // mainEnd.
    Value mainSteps = arith::CeilDivUIOp::create(
        b, loc,
        arith::SubIOp::create(
            b, loc, arith::MaxUIOp::create(b, loc, mainEnd, lane), lane),
        index(b, span));
    Value restBegin = arith::AddIOp::create(
        b, loc, lane, arith::MulIOp::create(b, loc, mainSteps, index(b, span)));
    auto loop = scf::ForOp::create(
        b, loc, restBegin, index(b, depth), index(b, kWarpSize),
        main.getResults(),
        [&](OpBuilder &nb, Location l, Value k, ValueRange iterArgs) {
          scf::YieldOp::create(
              nb, l, accumulate(nb, l, k, SmallVector<Value>(iterArgs)));
        });
    acc.assign(loop.getResults().begin(), loop.getResults().end());
  }
  for (int32_t offset = kWarpSize / 2; offset > 0; offset /= 2)
    for (Value &sum : acc) {
      Value other = gpu::ShuffleOp::create(b, loc, sum, offset, kWarpSize,
                                           gpu::ShuffleMode::XOR)
                        .getShuffleResult();
      sum = arith::AddFOp::create(b, loc, sum, other);
    }
  return acc;
}

/// One step for element (row, unit): the operands of the pointwise region,
/// the region itself, and the stores of its results.
void PersistentKernelBuilder::buildStep(OpBuilder &b, Value step, Value cur,
                                        Value next, Value row, Value unit,
                                        Value lane) {
  using Kind = OperandSource::Kind;
  // The product columns the region reads, each computed once, all columns
  // of a product in one pass over the state.
  DenseMap<std::pair<unsigned, int64_t>, Value> columns;
  for (auto [p, product] : llvm::enumerate(plan.products)) {
    SmallVector<int64_t> needed;
    for (const OperandSource &source : plan.operands)
      if (source.kind == Kind::Product && source.index == p &&
          !llvm::is_contained(needed, source.column))
        needed.push_back(source.column);
    if (needed.empty())
      continue;
    SmallVector<Value> sums =
        buildProductColumns(b, product, needed, cur, row, unit, lane);
    for (auto [column, sum] : llvm::zip(needed, sums))
      columns[{unsigned(p), column}] = sum;
  }
  Block &region = plan.pointwise.getBody().front();
  IRMapping mapping;
  for (auto [source, arg] : llvm::zip(plan.operands, region.getArguments())) {
    auto column = [&] {
      return arith::AddIOp::create(b, loc, unit, index(b, source.column));
    };
    Value v;
    switch (source.kind) {
    case Kind::Product:
      v = columns.lookup({source.index, source.column});
      break;
    case Kind::Input:
      v = memref::LoadOp::create(b, loc, inputs[source.index],
                                 ValueRange{step, row, column()});
      break;
    case Kind::State:
      v = memref::LoadOp::create(b, loc, stateBuffers[source.index],
                                 ValueRange{cur, row, column()});
      break;
    case Kind::Above: {
      Value buffer = aboveBuffers.lookup(source.above);
      if (cast<MemRefType>(buffer.getType()).getRank() == 1)
        v = memref::LoadOp::create(b, loc, buffer, ValueRange{unit});
      else
        v = memref::LoadOp::create(b, loc, buffer, ValueRange{row, unit});
      break;
    }
    }
    mapping.map(arg, v);
  }
  for (Operation &op : region.without_terminator())
    b.clone(op, mapping);
  auto yield = cast<PointwiseYieldOp>(region.getTerminator());
  auto result = [&](unsigned i) {
    return mapping.lookupOrDefault(yield.getValues()[i]);
  };
  // Every lane has the results; lane 0 writes them.
  Value isFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        index(b, 0));
  scf::IfOp::create(b, loc, isFirst, [&](OpBuilder &ib, Location l) {
    for (auto [o, r] : llvm::enumerate(plan.outputResults))
      memref::StoreOp::create(ib, l, result(r), outputs[o],
                              ValueRange{step, row, unit});
    for (auto [s, r] : llvm::enumerate(plan.stateResults))
      memref::StoreOp::create(ib, l, result(r), stateBuffers[s],
                              ValueRange{next, row, unit});
    scf::YieldOp::create(ib, l);
  });
}

void PersistentKernelBuilder::buildKernel(gpu::LaunchOp launch) {
  OpBuilder b = OpBuilder::atBlockBegin(&launch.getBody().front());
  b.setListener(rewriter.getListener());
  Value blockId = launch.getBlockIds().x;
  Value threadId = launch.getThreadIds().x;
  Value warpSize = index(b, kWarpSize);
  Value warp = arith::DivUIOp::create(b, loc, threadId, warpSize);
  Value lane = arith::RemUIOp::create(b, loc, threadId, warpSize);
  Value zero = index(b, 0), one = index(b, 1), two = index(b, 2);

  forOwnElements(
      b, blockId, threadId, [&](OpBuilder &ib, Value row, Value unit) {
        for (auto [init, buffer] : llvm::zip(inits, stateBuffers)) {
          Value v =
              memref::LoadOp::create(ib, loc, init, ValueRange{row, unit});
          memref::StoreOp::create(ib, loc, v, buffer,
                                  ValueRange{zero, row, unit});
        }
      });
  GridBarrierOp::create(b, loc, counter, one);

  scf::ForOp::create(
      b, loc, zero, seqLen, one, ValueRange(),
      [&](OpBuilder &lb, Location l, Value t, ValueRange) {
        Value cur = arith::RemUIOp::create(lb, l, t, two);
        Value next = arith::SubIOp::create(lb, l, one, cur);
        // Reverse layers walk the sequence from its end; outputs are
        // written at the step's own index.
        Value step = t;
        if (layer.isReverse())
          step = arith::SubIOp::create(
              lb, l, arith::SubIOp::create(lb, l, seqLen, one), t);
        forWarpElements(lb, blockId, warp,
                        [&](OpBuilder &ib, Value row, Value unit) {
                          buildStep(ib, step, cur, next, row, unit, lane);
                        });
        GridBarrierOp::create(lb, l, counter,
                              arith::AddIOp::create(lb, l, t, two));
        scf::YieldOp::create(lb, l);
      });

  Value last = arith::RemUIOp::create(b, loc, seqLen, two);
  forOwnElements(
      b, blockId, threadId, [&](OpBuilder &ib, Value row, Value unit) {
        for (auto [buffer, final] : llvm::zip(stateBuffers, finals)) {
          Value v = memref::LoadOp::create(ib, loc, buffer,
                                           ValueRange{last, row, unit});
          memref::StoreOp::create(ib, loc, v, final, ValueRange{row, unit});
        }
      });
  gpu::TerminatorOp::create(b, loc);
}

void PersistentKernelBuilder::build(StringRef kernelName) {
  rewriter.setInsertionPoint(layer);
  prepareBuffers();
  Value one = index(rewriter, 1);
  auto launch = gpu::LaunchOp::create(
      rewriter, loc, index(rewriter, numBlocks), one, one,
      index(rewriter, blockSize), one, one, /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
      /*workgroupAttributions=*/{}, /*privateAttributions=*/{},
      /*clusterSizeX=*/nullptr, /*clusterSizeY=*/nullptr,
      /*clusterSizeZ=*/nullptr,
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName),
      FlatSymbolRefAttr::get(rewriter.getContext(), kernelName));
  buildKernel(launch);

  rewriter.setInsertionPointAfter(launch);
  SmallVector<Value> results;
  auto toTensor = [&](Value buffer, Type type) {
    return bufferization::ToTensorOp::create(rewriter, loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  };
  for (auto [buffer, out] : llvm::zip(outputs, layer.getOutputs()))
    results.push_back(toTensor(buffer, out.getType()));
  for (auto [buffer, final] : llvm::zip(finals, layer.getFinals()))
    results.push_back(toTensor(buffer, final.getType()));
  rewriter.replaceOp(layer, results);
}

LogicalResult mlir::lstm::convertLayerToPersistentKernel(RewriterBase &rewriter,
                                                         LayerOp layer,
                                                         StringRef kernelName,
                                                         int64_t blockSize,
                                                         int64_t maxBlocks) {
  FailureOr<PersistentPlan> plan = planPersistentLayer(layer);
  if (failed(plan))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  PersistentKernelBuilder(rewriter, *plan, blockSize, maxBlocks)
      .build(kernelName);
  return success();
}

namespace {
struct ConvertLSTMToPersistentPass
    : lstm::impl::ConvertLSTMToPersistentPassBase<ConvertLSTMToPersistentPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (blockSize < kWarpSize || blockSize > 1024 ||
        blockSize % kWarpSize != 0 || maxBlocks < 1) {
      func.emitError("lstm-to-persistent: block-size must be a multiple of 32 "
                     "in [32, 1024] and max-blocks at least 1");
      return signalPassFailure();
    }
    SmallVector<LayerOp> layers;
    func.walk([&](LayerOp layer) { layers.push_back(layer); });
    IRRewriter rewriter(&getContext());
    unsigned n = 0;
    for (LayerOp layer : layers) {
      std::string name =
          (kPersistentKernelPrefix + "_" + func.getSymName() + "_" + Twine(n))
              .str();
      if (succeeded(convertLayerToPersistentKernel(rewriter, layer, name,
                                                   blockSize, maxBlocks)))
        ++n;
    }
  }
};
} // namespace
