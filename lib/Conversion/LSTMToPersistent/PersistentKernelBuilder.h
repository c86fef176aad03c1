//===- PersistentKernelBuilder.h - Builds a persistent layer kernel -------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The builder of lstm-to-persistent: the kernel's layout and cost model in
// PersistentLayout.cpp, its host side (buffers, checks, the launch) in
// PersistentKernelBuilder.cpp, the kernel's steps and phases in
// PersistentKernel.cpp, a warp's share of a step in PersistentWarp.cpp, an
// element's work in PersistentElement.cpp, its products (staging,
// registers, dot products) in PersistentProducts.cpp, or on tensor cores
// in PersistentTensorCores.cpp and PersistentTensorCoreTiles.cpp (their
// layout in PersistentTensorCoreLayout.cpp); its sizes and the cost
// model's bounds in PersistentSizes.h.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTKERNELBUILDER_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTKERNELBUILDER_H

#include "PersistentPlan.h"
#include "PersistentSizes.h"

#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::lstm::persistent {

/// Units per block for each layer of a stack, of multiply-adds `work` per
/// row and unit and width `widths`, at most `maxUnits` a block: the
/// smallest bound on a block's step (units · work) that `maxBlocks` blocks
/// reach, then as many blocks as they allow. Empty where `maxBlocks`
/// blocks cannot hold the layers (PersistentLayout.cpp).
SmallVector<int64_t> splitBlocks(ArrayRef<int64_t> work,
                                 ArrayRef<int64_t> widths, int64_t maxUnits,
                                 int64_t maxBlocks);

/// A memref of `shape` with a fully dynamic strided layout: what any tensor
/// bufferizes to can be cast to it, so `to_buffer` never copies.
MemRefType stridedMemRef(ArrayRef<int64_t> shape, Type elementType);

/// The CUDA runtime's function `name` of `type` (lstm/Runtime/CudaRuntime.h),
/// declared private at the start of `module` where it is not yet: the cost
/// model's run-time queries and the branch without the per-step fallback
/// call it.
func::FuncOp declareRuntimeFunction(RewriterBase &rewriter, ModuleOp module,
                                    StringRef name, FunctionType type);

class PersistentKernelBuilder {
public:
  PersistentKernelBuilder(RewriterBase &rewriter, PersistentPlan plan,
                          const PersistentOptions &options);

  void build(StringRef kernelName);
  /// The largest batch for which the cost model prefers the kernel to the
  /// per-step lowering, or 0 if it never does.
  int64_t costModelMaxBatch() const;
  /// The same for the kernel's dot products (what the bound is without
  /// tensor cores, and for the kernel below their smallest batch).
  int64_t dotsMaxBatch() const;
  /// The blocks of the kernel's grid, all resident at once.
  int64_t gridBlocks() const { return numBlocks; }
  /// The layer the kernel runs, and the width of its states.
  LayerOp kernelLayer() const { return layer; }
  int64_t stateWidth() const { return plan.width; }
  /// Whether a warp's weights fill more than half of the registers it
  /// keeps them in, so that it takes its rows one at a time.
  bool takesRowsOneAtATime() const { return oneRow; }
  /// The most dynamic shared memory a block takes, in bytes, and what it
  /// takes for a batch of `batchSize` rows (an index, host code).
  int64_t sharedBytes() const;
  Value sharedBytesAt(OpBuilder &b, Value batchSize);
  /// The most rows of a tile, ⌈B / rowTiles⌉, for a batch of `batchSize`
  /// (host code or the kernel's).
  Value tileRowsAt(OpBuilder &b, Value batchSize);
  /// Whether the warps keep their weights in registers.
  bool usesRegisters() const { return useRegisters; }
  /// How many units each warp computes, one after the other.
  int64_t unitsPerWarpCount() const { return unitsPerWarp; }
  /// How many units each warp computes at once.
  int64_t unitsAtOnceCount() const { return unitsAtOnce; }
  /// Threads per block.
  int64_t threadsPerBlock() const { return blockSize; }
  /// Whether the products run on tensor cores.
  bool usesTensorCores() const { return tensorCores; }
  /// The smallest batch its tensor cores run at (tensorCoreMinBatch): with
  /// `options` (the pass's: a block size of 0 is chosen), where its kernel
  /// of dot products, the layer's below that batch, stops or is overtaken.
  int64_t tensorCoresFrom(const PersistentOptions &options) const;
  /// As a kernel of dot products: the smallest batch at which its warps
  /// take more than kDotsRowsInTurn rows one at a time (kDotsRowsInGroups
  /// in groups), where the tensor cores' kernel overtakes it under
  /// splitTF32.
  int64_t dotsOvertakenFrom() const;
  /// Phases of a step.
  unsigned phasesPerStep() const { return plan.numPhases; }
  /// Multiply-adds of the step's products per batch row.
  int64_t multiplyAddsPerRow() const { return rowWork; }
  /// The layout in words (blocks, tiles, warps, registers), for -debug.
  void printLayout(raw_ostream &os) const;

  // As one layer of a stack's kernel (PersistentStack.cpp), in this order:
  // the layer's input sequence `input` (projected in the step) is `buffer`,
  // written by the layer before in the same kernel; the extents are those
  // of the stack's first layer.
  void setStackInput(unsigned input, Value buffer) {
    stackInputs[input] = buffer;
  }
  void setStackExtents(Value sequenceLength, Value batchSize) {
    seqLen = sequenceLength;
    batch = batchSize;
  }
  /// The host side before the layer (at the rewriter's insertion point):
  /// checks of the extents, views of what the kernel reads, buffers of what
  /// it writes (not the barrier's counter: allocateCounter).
  void prepareBuffers();
  Value outputBuffer(unsigned output) const { return outputs[output]; }
  Value sequenceLength() const { return seqLen; }
  Value batchSize() const { return batch; }
  /// The zeroed counter of the kernel's grid barriers, checked to count up
  /// to barrier 1 + iterations · barriersPerIteration of `gridBlocks`
  /// blocks.
  Value allocateCounter(Value iterations, int64_t gridBlocks,
                        int64_t barriersPerIteration);
  void setCounter(Value barrierCounter) { counter = barrierCounter; }
  /// How the kernel's loop runs the layer's steps: `iterations` of it, step
  /// t in iteration t + lag (a stack's layer l in diagonal t + l), each
  /// iteration `barriers` grid barriers (at least the step's: a stack's
  /// layer meets the other layers' barriers after its own). `stack`: the
  /// steps guarded by their range.
  struct StepSchedule {
    Value iterations;
    int64_t lag = 0;
    int64_t barriers = 1;
    bool stack = false;
  };
  /// The kernel's work for the layer on the block `blockId` of its own
  /// blocks, thread `threadId`: the weights to registers, the initial
  /// states, the steps, the final states.
  void buildBlocks(OpBuilder &b, Value blockId, Value threadId,
                   const StepSchedule &schedule);
  /// Replaces the layer by the buffers that the kernel wrote.
  void replaceLayer();
  /// How many grid barriers a step has.
  int64_t gridBarriersPerStep() const {
    return plan.numPhases - (stepGridBarrier ? 0 : 1);
  }
  /// Whether every block sees output `output` of a step once the step is
  /// over: a grid barrier follows the phase that writes it.
  bool outputVisibleAfterStep(unsigned output) const {
    return stepGridBarrier || outputPhase(plan, output) + 1 < plan.numPhases;
  }

private:
  // Host side, before the layer.
  Value readOnlyBuffer(Value tensor);
  Value allocLike(RankedTensorType type, ArrayRef<Value> leadingExtents);
  void assertExtents();
  // The kernel.
  void buildKernel(gpu::LaunchOp launch);
  void forOwnElements(OpBuilder &b, Value threadId,
                      function_ref<void(OpBuilder &, Value, Value)> body);
  /// Whether it started asynchronous copies.
  bool stageInputs(OpBuilder &b, unsigned phase, Value threadId, Value step,
                   Value cur, Value first, Value rows);
  void copyAsync(OpBuilder &b, Value source, Value lead, int64_t width,
                 int64_t offset, int64_t depth, Value staged, Value threadId,
                 Value first, Value rows);
  void loadRegisterWeights(OpBuilder &b, Value unit, Value lane);
  // Tensor cores (PersistentTensorCores.cpp).
  /// Whether the products take tensor cores, and how many units a warp then
  /// takes at once (the layout's choice, in its constructor).
  void chooseTensorCores(const PersistentOptions &options,
                         int64_t registerBudget);
  /// Tiles of kMmaColumns weight rows of product `p` for a warp's units.
  int64_t mmaTiles(unsigned p) const;
  /// The same for `units` at once (the layout's trials).
  int64_t mmaTiles(unsigned p, int64_t units) const;
  /// Bytes of the warps' shared memory for their products' tiles (0
  /// without tensor cores).
  int64_t mmaScratchBytes() const;
  /// Tiles of results a warp's shared memory holds (two under a depth
  /// split).
  int64_t scratchTiles() const;
  /// Floats a staged row of `input` takes in shared memory (its width, or
  /// padded for the tensor cores' loads).
  int64_t stagedStride(const TermInput &input) const;
  /// The most of `groups` row-group warps that may split a tile's depth
  /// (at most what `options` asks; 1: none), given the block's `slots`
  /// unit slots: a power of two that divides the groups, leaves each warp
  /// a chunk of every product, and sets of warps that the named barriers
  /// tell apart.
  int64_t maxDepthSplit(const PersistentOptions &options, int64_t slots,
                        int64_t groups) const;
  /// The chunks of kMmaDepth of a product term of `depth` that a warp
  /// takes (all of them without a depth split): its i-th is chunk
  /// part + i · depthSplit.
  int64_t warpChunks(int64_t depth) const;
  /// Whether the warp's i-th chunk may have terms past `depth` (the last
  /// chunk partly, or past the last chunk under an uneven split).
  bool chunkMayPassDepth(int64_t i, int64_t depth) const;
  /// The lane's term e of its warp's i-th chunk: `firstTerm` (4t) + 16q +
  /// e, past the depth for a chunk past the last.
  Value chunkTerm(OpBuilder &b, Value firstTerm, Value part, int64_t i,
                  int64_t e);
  /// The lane's B fragments; `part`: the warp's share of the depth (null
  /// without a depth split).
  void loadMmaWeights(OpBuilder &b, Value slot, Value part, Value lane);
  /// A product's columns for a tile of kMmaRows staged rows (`rowLow` and
  /// `rowHigh`, the lane's rows g and g + 8), one accumulator per tile of
  /// weight rows: the lane's four elements of each (of the warp's share of
  /// the depth, `part`, under a depth split).
  SmallVector<SmallVector<Value>> buildMmaProduct(OpBuilder &b, unsigned p,
                                                  Value rowLow, Value rowHigh,
                                                  Value lane, Value part);
  void buildMmaChunk(OpBuilder &b, unsigned phase, Value step, Value cur,
                     Value next, Value first, Value rows, Value slot,
                     Value group, Value warp, Value lane);
  /// A lane's elements in a tile: 16 rows for each of the units at once.
  int64_t mmaElementsPerLane() const;
  /// The lane's elements of a tile of kMmaRows rows from `tileFirst` of the
  /// chunk: the products' columns read from the tile of scratch at
  /// `tileBase` (summed over the depth split's partial tiles) at
  /// `offsets`, then evaluated. Under a depth split the set's warps share
  /// a tile's elements, a round of 32 each in turn, this warp's first
  /// round `rotation`.
  void evaluateMmaTile(OpBuilder &b, unsigned phase, Value step, Value cur,
                       Value next, Value first, Value rows, Value slot,
                       Value lane, Value tileFirst,
                       ArrayRef<std::pair<unsigned, int64_t>> offsets,
                       Value tileBase, Value rotation);
  Value weightRow(OpBuilder &b, Value weight, bool transposed, Value unit,
                  int64_t column);
  /// Element `at` of term `t`'s weight of product `p` (the buffer
  /// `weight`): a load, or the splat constant.
  Value weightAt(OpBuilder &b, Location l, unsigned p, unsigned t, Value weight,
                 ValueRange at);
  /// A warp's unit: the index to compute with, and whether it is stored.
  struct WarpUnit {
    Value index, inside;
  };
  WarpUnit warpUnit(OpBuilder &b, Value local);
  /// Element i of the lane in a tile of kMmaRows rows from `tileFirst` of a
  /// chunk of `rows` staged rows from `first` (under a depth split, its
  /// round rotation + depthSplit · i of the tile's): row `tileRow` of the
  /// tile, the warp's unit `warpUnit` of those at once.
  struct MmaElement {
    Value tileRow, warpUnit, staged, row;
    WarpUnit unit;
    /// Whether the element exists (its row in the chunk, its unit in the
    /// layer and the warp's).
    Value store;
  };
  MmaElement mmaElement(OpBuilder &b, Value first, Value rows, Value slot,
                        Value lane, Value tileFirst, int64_t i, Value rotation);
  /// Row `group + ordinal · rowGroups` of a chunk: the warp's `ordinal`-th.
  Value warpRow(OpBuilder &b, Value group, Value ordinal);
  /// The element of a group of `size` that lane `lane` evaluates: its own,
  /// the group's last for the lanes past it.
  Value laneInGroup(OpBuilder &b, int64_t size, Value lane);
  /// The s-th unit of the warps of slot `slot` (its index in the block's
  /// tile).
  Value slotUnit(OpBuilder &b, Value slot, int64_t s);
  /// In a group of `size` rows for each of the warp's units at once, the
  /// row that lane `lane` evaluates (the s-th unit's row j in lane
  /// s · size + j), and its unit (in the tile, of the warps of `slot`).
  Value laneRowInGroup(OpBuilder &b, int64_t size, Value lane);
  Value laneUnit(OpBuilder &b, Value slot, int64_t size, Value lane);
  /// The row (of the whole batch) whose element lane `lane` evaluates in
  /// the group of the warp's rows from its `index`-th on in the chunk
  /// [first, first + rows), for groups of `size` rows: the lane's row of
  /// the group (the last one for lanes past it), clamped to the chunk.
  Value laneRow(OpBuilder &b, Value first, Value rows, Value group, Value index,
                int64_t size, Value lane);
  void buildRowGroup(OpBuilder &b, unsigned phase, int64_t size, Value index,
                     Value first, Value rows, Value group, Value step,
                     Value cur, Value next, Value unit, Value inside,
                     Value lane, ValueRange operands);
  void buildPhase(OpBuilder &b, unsigned phase, Value threadId, Value step,
                  Value cur, Value next, Value slot, Value group,
                  Value computes, Value lane);
  void buildWarpChunk(OpBuilder &b, unsigned phase, Value step, Value cur,
                      Value next, Value first, Value rows, Value slot,
                      Value group, Value lane,
                      std::optional<SmallVector<Value>> early);
  /// The operands of `phase`'s regions that it does not compute, for
  /// element (row, unit), in the order mapOperands expects.
  SmallVector<Value> loadOperands(OpBuilder &b, unsigned phase, Value step,
                                  Value cur, Value row, Value unit);
  /// Per op of `phase`, its region's arguments mapped to `operands`.
  SmallVector<IRMapping> mapOperands(unsigned phase, ValueRange operands);
  /// The product columns of a phase, by (product, column).
  using ColumnSums = DenseMap<std::pair<unsigned, int64_t>, Value>;
  void computeElement(OpBuilder &b, unsigned phase,
                      SmallVector<IRMapping> mappings,
                      const ColumnSums &columns, Value step, Value cur,
                      Value next, Value row, Value stagedRow, Value unit,
                      Value store);
  /// K: the width of a product input (N, or a concatenation's).
  int64_t inputWidth(const TermInput &input) const;
  /// The N-wide piece of a concatenation operand at column `column`.
  const Computed &concatPiece(const OperandSource &source,
                              int64_t column) const {
    return plan.concats[source.index].pieces[column / plan.width];
  }
  /// How many N-wide pieces the columns of product `product` take (one
  /// where it has N or fewer).
  int64_t productPieces(unsigned product) const;
  /// Whether a lane reads the terms of a dot product of width `k` from
  /// shared memory kVectorTerms at a time (terms 4·lane + 128·j + e)
  /// rather than one (terms lane + 32·j).
  bool vectorTermsFor(int64_t k) const;
  /// The shared-memory rows of `input` in the phase being built.
  Value stagedFor(const TermInput &input) const;
  /// The scratch buffer of `value`, or null if it needs none.
  Value scratchFor(const Computed &value) const;
  /// Whether an op of `phase` reads column `column` of product `product`
  /// from its scratch buffer (the product is computed in an earlier
  /// phase), and that buffer.
  bool carriedInto(unsigned phase, unsigned product) const {
    return plan.products[product].phase < phase;
  }
  Value carriedFor(unsigned product, int64_t column) const;
  SmallVector<SmallVector<Value>>
  buildProductPartials(OpBuilder &b, unsigned p, ArrayRef<Value> localRows,
                       Value unit, Value lane);
  SmallVector<Value> reduceAcrossLanes(OpBuilder &b, ArrayRef<Value> values,
                                       Value lane);
  /// `value` as an operand of a product: rounded to bf16 (and widened
  /// back) under bf16Operands, else itself.
  Value productOperand(OpBuilder &b, Location l, Value value);
  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }

  RewriterBase &rewriter;
  PersistentPlan plan;
  LayerOp layer;
  Location loc;
  int64_t blockSize, unitsPerBlock, numBlocks;
  /// Whether the products' operands are rounded to bf16 (the bf16 compute
  /// type).
  bool bf16Operands;
  /// Whether a tensor-core product's TF32 operands are each split in two
  /// (3xTF32: the fp32 compute type on tensor cores).
  bool splitTF32;
  /// Whether the products run on tensor cores (`mma.sync`, the weights in
  /// registers as B fragments; bf16 operands under bf16Operands, else
  /// TF32), and the stride of a warp's tile of their results in shared
  /// memory.
  bool tensorCores = false;
  int64_t mmaScratchStride = 0;
  /// With tensor cores, how many of a unit slot's row-group warps split
  /// each tile's depth: each takes chunks part, part + depthSplit, ... of
  /// kMmaDepth (its weights' fragments only: depthSplit times fewer
  /// registers), writes its partial tile, and one of them sums the
  /// partials and evaluates the elements.
  int64_t depthSplit = 1;
  /// The blocks' tiles: block b takes units of tile b / rowTiles and rows
  /// of tile b % rowTiles, ⌈B / rowTiles⌉ rows a tile.
  int64_t rowTiles = 1;
  /// The warps of a block: `unitSlots` slots of `unitsAtOnce` units, each
  /// by `rowGroups` warps that split the rows; a warp has `unitsPerWarp`
  /// slots' units one after the other (weights from memory), or the
  /// `unitsAtOnce` units of its slot at once (weights in registers): unit
  /// `slot + s · unitSlots` of the block's tile.
  int64_t unitSlots, rowGroups, unitsPerWarp, unitsAtOnce = 1;
  /// Rows of the states staged in shared memory at a time, and per phase
  /// the rows it takes at a time (all of them where it stages nothing).
  int64_t chunkRows;
  SmallVector<int64_t> phaseChunkRows;
  /// Whether the staging is asynchronous 16-byte copies.
  bool asyncCopies = false;
  /// Whether a step ends with a grid barrier (else a block barrier).
  bool stepGridBarrier = true;
  /// Whether the warps keep their weights in registers, and whether they
  /// fill more than half of kRegisterWeights (one row at a time).
  bool useRegisters, oneRow = false;
  /// Per phase: the products it computes (those its ops read, and those
  /// that are new states), and the rows a warp computes at once.
  SmallVector<SmallVector<unsigned>> phaseProducts;
  SmallVector<int64_t> groupRows;
  /// Multiply-adds per batch row and step.
  int64_t rowWork = 0;
  /// The same, without the products of splat constants (the cost model's).
  int64_t weightedRowWork = 0;
  /// Per product, the columns (offsets of the pointwise ops' slices) that
  /// the pointwise regions read.
  SmallVector<SmallVector<int64_t>> neededColumns;
  /// Per phase, the values its products read, staged in shared memory (in
  /// that order), and the most of them in any phase.
  SmallVector<SmallVector<TermInput>> stagedInputs;
  size_t maxStaged = 0;
  /// The widest of their staged rows (stagedStride): every shared-memory
  /// view holds chunkRows rows of that many floats.
  int64_t maxInputWidth = 0;
  /// The pointwise results read in a later phase than their own: they go
  /// through global buffers [B, N] (`scratch`, in the same order).
  SmallVector<Computed> scratchValues;
  /// The product columns read in a later phase than the product's own,
  /// (product, column): the phase that computes the product stores them in
  /// global buffers [2, B, N] (`carried`, in the same order), so that the
  /// later phase neither stages the product's inputs again nor multiplies
  /// them (Cho's GRU stack: the link's n column, read after r ⊙ h).
  SmallVector<std::pair<unsigned, int64_t>> carriedColumns;

  Value seqLen, batch;
  /// Input sequences that another layer of a stack's kernel writes.
  DenseMap<unsigned, Value> stackInputs;
  SmallVector<Value> inputs, inits, stateBuffers, outputs, finals;
  /// The layer's lengths [B], if it has them: a step t >= lengths[b] keeps
  /// row b's states and writes zeros to its outputs (computeElement).
  Value lengths;
  /// Per product, per term: the weight [M, K], and its one value where it
  /// is a splat constant (a layer norm's averaging matrix): no registers,
  /// no loads.
  SmallVector<SmallVector<Value>> weights;
  SmallVector<SmallVector<std::optional<APFloat>>> splatWeights;
  DenseMap<Value, Value> aboveBuffers;
  SmallVector<Value> scratch, carried;
  Value counter;
  // In the kernel.
  /// The block's tile of units, and its rows [rowBegin, rowEnd).
  Value unitTile, rowBegin, rowEnd;
  /// The shared-memory views (maxStaged of them), and those of the phase
  /// being built, one per stagedInputs[phase].
  SmallVector<Value> sharedViews;
  unsigned currentPhase = 0;
  /// Per unit of the warp's at once, per product, per term, per needed
  /// column: the lane's weights.
  SmallVector<SmallVector<SmallVector<SmallVector<SmallVector<Value>>>>>
      registerWeights;
  /// With tensor cores, per product, per term, per tile of weight rows: the
  /// lane's B fragments, per kMmaDepth of K (4 TF32 values or 2 pairs of
  /// bf16, as i32; under splitTF32 the fp32 weights' bits, split at each
  /// use).
  SmallVector<SmallVector<SmallVector<SmallVector<Value>>>> mmaWeights;
  /// The warps' tiles of product results in shared memory.
  Value mmaScratch;
};

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTKERNELBUILDER_H
