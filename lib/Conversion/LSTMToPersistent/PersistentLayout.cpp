//===- PersistentLayout.cpp - How a persistent kernel is laid out --------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The layout of a layer's kernel, chosen by the builder's constructor:
// units per block and per warp, rows a warp takes at once, what each phase
// stages and where what crosses phases goes, whether the weights stay in
// registers; and the cost model's bound on the batch that follows from it.
//
//===----------------------------------------------------------------------===//

#include "PersistentKernelBuilder.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/bit.h"

#include <limits>

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

void PersistentKernelBuilder::printLayout(raw_ostream &os) const {
  os << numBlocks << " blocks of " << blockSize << " threads: " << unitsPerBlock
     << " units a block, " << rowTiles << " tiles of rows, " << unitSlots
     << " unit slots x " << rowGroups << " row groups, " << unitsPerWarp
     << " units a warp (" << unitsAtOnce << " at once), weights "
     << (useRegisters
             ? (oneRow ? "in registers (one row at a time)" : "in registers")
             : "from memory")
     << (tensorCores ? (bf16Operands ? ", bf16 tensor cores"
                        : splitTF32  ? ", 3xtf32 tensor cores"
                                     : ", tf32 tensor cores")
                     : "")
     << (depthSplit > 1 ? " (depth split " + std::to_string(depthSplit) + ")"
                        : std::string())
     << ", " << rowWork << " multiply-adds a row, chunks of " << chunkRows
     << " rows, rows a warp takes at once by phase:";
  for (int64_t rows : groupRows)
    os << " " << rows;
}

/// The value of every element of `weight` where it is a splat constant or
/// a transposition of one (a backward reads a layer norm's averaging matrix
/// transposed).
static std::optional<APFloat> splatValue(Value weight) {
  if (auto transpose = weight.getDefiningOp<linalg::TransposeOp>())
    weight = transpose.getInput();
  DenseElementsAttr constant;
  if (matchPattern(weight, m_Constant(&constant)) && constant.isSplat())
    return constant.getSplatValue<APFloat>();
  return std::nullopt;
}

PersistentKernelBuilder::PersistentKernelBuilder(
    RewriterBase &rewriter, PersistentPlan plan,
    const PersistentOptions &options)
    : rewriter(rewriter), plan(std::move(plan)), layer(this->plan.layer),
      loc(layer.getLoc()), blockSize(options.blockSize),
      bf16Operands(options.bf16Operands),
      splitTF32(options.splitTF32 && !options.bf16Operands) {
  int64_t n = this->plan.width;
  unitsPerBlock = divCeil(n, options.maxBlocks);
  numBlocks = divCeil(n, unitsPerBlock);
  int64_t warps = blockSize / kLanes;
  unitSlots = std::min(unitsPerBlock, warps);
  rowGroups = warps / unitSlots;
  unitsPerWarp = divCeil(unitsPerBlock, unitSlots);

  using Kind = OperandSource::Kind;
  using YieldKind = PersistentPlan::YieldSource::Kind;
  const PersistentPlan &cell = this->plan;
  int64_t registersNeeded = 0;
  for (auto [p, product] : llvm::enumerate(cell.products)) {
    SmallVector<int64_t> &needed = neededColumns.emplace_back();
    for (const PointwiseStep &step : cell.pointwise)
      for (const OperandSource &source : step.operands)
        for (int64_t j = 0; j < step.pieces; ++j)
          if (source.kind == Kind::Product && source.index == p &&
              !llvm::is_contained(needed, source.column + j * n))
            needed.push_back(source.column + j * n);
    // A product that is a new state or an output: its columns n + j · N.
    for (const PersistentPlan::YieldSource &yielded :
         llvm::concat<const PersistentPlan::YieldSource>(cell.stateResults,
                                                         cell.outputResults))
      if (yielded.kind == YieldKind::Product && yielded.index == p)
        for (int64_t j = 0; j < productPieces(p); ++j)
          if (!llvm::is_contained(needed, j * n))
            needed.push_back(j * n);
    auto &splats = splatWeights.emplace_back();
    for (auto &[input, weight] : product.terms) {
      int64_t depth = inputWidth(input);
      int64_t work = int64_t(needed.size()) * depth * n;
      rowWork += work;
      splats.push_back(splatValue(weight));
      if (splats.back())
        continue;
      registersNeeded +=
          int64_t(needed.size()) * divCeil(depth, int64_t(kLanes));
      weightedRowWork += work;
    }
  }
  // The products each phase computes (those its ops read, and those that
  // are new states, in their own phase) and what it stages: their inputs.
  // What crosses phases goes through global memory: the computed inputs of
  // products, and the results that an op of a later phase reads.
  stagedInputs.resize(cell.numPhases);
  phaseProducts.resize(cell.numPhases);
  auto addScratch = [&](const Computed &value) {
    if (!llvm::is_contained(scratchValues, value))
      scratchValues.push_back(value);
  };
  auto compute = [&](unsigned phase, unsigned p) {
    if (llvm::is_contained(phaseProducts[phase], p))
      return;
    phaseProducts[phase].push_back(p);
    for (auto &[input, weight] : cell.products[p].terms) {
      if (input.kind == TermInput::Kind::Computed)
        addScratch(input.computed);
      if (input.kind == TermInput::Kind::Concat)
        for (const Computed &piece : cell.concats[input.index].pieces)
          addScratch(piece);
      if (!llvm::is_contained(stagedInputs[phase], input))
        stagedInputs[phase].push_back(input);
    }
  };
  for (const PointwiseStep &step : cell.pointwise)
    for (const OperandSource &source : step.operands) {
      if (source.kind == Kind::Computed &&
          cell.pointwise[source.computed.op].phase < step.phase)
        addScratch(source.computed);
      if (source.kind == Kind::Concat)
        for (const Computed &piece : cell.concats[source.index].pieces)
          if (cell.pointwise[piece.op].phase < step.phase)
            addScratch(piece);
      if (source.kind != Kind::Product)
        continue;
      // Each product once, in its own phase (the first whose inputs are
      // complete); a later phase's op reads the column from global memory.
      unsigned own = cell.products[source.index].phase;
      compute(own, source.index);
      for (int64_t j = 0; j < step.pieces; ++j) {
        std::pair<unsigned, int64_t> column{source.index,
                                            source.column + j * n};
        if (step.phase > own && !llvm::is_contained(carriedColumns, column))
          carriedColumns.push_back(column);
      }
    }
  for (const PersistentPlan::YieldSource &yielded :
       llvm::concat<const PersistentPlan::YieldSource>(cell.stateResults,
                                                       cell.outputResults))
    if (yielded.kind == YieldKind::Product)
      compute(cell.products[yielded.index].phase, yielded.index);
  for (const SmallVector<TermInput> &phase : stagedInputs)
    maxStaged = std::max(maxStaged, phase.size());
  int64_t registerBudget = blockSize <= kFewerThreads
                               ? kRegisterWeightsFewerThreads
                               : kRegisterWeights;
  useRegisters = unitsPerWarp == 1 && registersNeeded <= registerBudget;
  // Where the blocks have warps to spare for the rows (fewer units than
  // warps), the same number of blocks or fewer as tiles of units × rows: a
  // unit a warp, more units a block, the blocks of a tile of units
  // splitting the batch. A warp does the same work; a block stages its
  // rows only, where every block staged the whole batch (the staging's
  // traffic divided by the tiles of rows). Half the warps' units a block
  // (two warps a unit, splitting the tile's rows) where that leaves two
  // tiles of rows, else as many units as warps: on the H100 at char-rnn's
  // sizes the training forward took 0.298 ms with 8 units a block of 16
  // warps, 0.379 with 16 and 0.324 without tiles (the backward 0.401,
  // 0.397 and 0.463; docs/benchmarks.md). Not where the weights are read
  // from memory: each tile of rows would read them again.
  if (options.rowTiles && useRegisters && unitSlots < warps) {
    for (int64_t units : {warps / 2, warps}) {
      units = std::min(n, units);
      int64_t unitTiles = divCeil(n, units);
      int64_t tiles = numBlocks / unitTiles;
      if (units <= unitsPerBlock || tiles < 2)
        continue;
      unitsPerBlock = units;
      unitSlots = units;
      rowGroups = warps / units;
      rowTiles = tiles;
      numBlocks = unitTiles * tiles;
      break;
    }
  }
  // The product columns a staged value feeds in each phase, for one unit.
  SmallVector<int64_t> phaseColumns;
  int64_t maxColumns = 1;
  for (ArrayRef<unsigned> products : phaseProducts) {
    int64_t columns = 0;
    for (unsigned p : products)
      columns += int64_t(neededColumns[p].size());
    phaseColumns.push_back(std::max<int64_t>(columns, 1));
    maxColumns = std::max(maxColumns, phaseColumns.back());
  }
  // Several units a warp at once, where a unit's columns reuse each staged
  // value less than an LSTM's four gates: the warp loads each value once
  // for all its units' multiply-adds (a backward step's product, dh, has
  // one column a unit; char-rnn's backward kernel read 4x the shared-memory
  // wavefronts of its forward, ncu). The units' slots give way to more
  // warps on the rows. As many as bring the columns to kColumnsAtOnce (or
  // as `unitsAtOnce` asks), where the weights of all fit the registers. On
  // the H200, char-rnn's backward kernel took 0.321 ms with one unit a
  // warp, 0.269 with 4 and 2 (its layers) in 512-thread blocks and 0.218
  // with 4 in 256-thread blocks (the stack's choice: PersistentStack.cpp;
  // docs/benchmarks.md, "Several units a warp at once").
  if (options.tensorCores && useRegisters && unitsPerWarp == 1)
    chooseTensorCores(options, registerBudget);
  if (!tensorCores && useRegisters && unitsPerWarp == 1) {
    int64_t want = options.unitsAtOnce != 0
                       ? options.unitsAtOnce
                       : std::max<int64_t>(1, kColumnsAtOnce / maxColumns);
    while (2 * unitsAtOnce <= want && unitSlots % (2 * unitsAtOnce) == 0 &&
           2 * unitsAtOnce * registersNeeded <= registerBudget &&
           2 * unitsAtOnce * maxColumns <= kMaxAccumulators)
      unitsAtOnce *= 2;
  }
  unitSlots /= unitsAtOnce;
  rowGroups = warps / unitSlots;
  // How many rows a warp takes at once: their partial sums, reduced across
  // the lanes together, fill at most kMaxAccumulators registers (and with
  // several units at once, their rows together take at most a lane each).
  // Tensor cores take tiles of kMmaRows rows.
  oneRow =
      !tensorCores && useRegisters && 2 * registersNeeded > kRegisterWeights;
  for (int64_t columns : phaseColumns) {
    int64_t fit = kMaxAccumulators / (columns * unitsAtOnce);
    groupRows.push_back(
        oneRow ? 1
               : std::min<int64_t>(
                     kMaxGroupRows,
                     llvm::bit_floor(uint64_t(std::max<int64_t>(fit, 1)))));
  }
  // Each staged value gets an equal share of the budget, as rows of the
  // widest: as many rows at a time (at least one), but no more than the
  // largest batch the cost model runs the kernel for.
  for (const SmallVector<TermInput> &phase : stagedInputs)
    for (const TermInput &input : phase)
      maxInputWidth = std::max(maxInputWidth, stagedStride(input));
  chunkRows = 1;
  if (maxStaged != 0) {
    int64_t budget = options.sharedMemory - mmaScratchBytes();
    chunkRows = std::max<int64_t>(1, budget / int64_t(sizeof(float)) /
                                         (int64_t(maxStaged) * maxInputWidth));
    // Under the cost model, no more rows than the largest batch it runs
    // the kernel at (without it, `always`, the kernel runs at every batch),
    // and for the tensor cores whole tiles: a chunk of 4 rows, deepbench's
    // bound in registers (H = 1024), ran a tile of 16 rows and a block
    // barrier for every 4, 0.85 µs a row and step on the H200.
    if (int64_t most = costModelMaxBatch(); most > 0 && options.costModel)
      chunkRows = std::min(
          chunkRows, tensorCores ? divCeil(most, kMmaRows) * kMmaRows : most);
    // Whole tiles of rows for the tensor cores.
    if (tensorCores && chunkRows > kMmaRows)
      chunkRows -= chunkRows % kMmaRows;
    // A warp whose weights take more than half its registers computes one
    // row at a time; with a second row of a chunk to loop to, the backward
    // kernel of H = 512 spilled (ptxas -v): one row per warp per chunk.
    if (oneRow)
      chunkRows = std::min(chunkRows, rowGroups);
  }
  // A phase that stages nothing takes the whole batch at once: chunks
  // would only add block barriers.
  for (ArrayRef<TermInput> staged : stagedInputs)
    phaseChunkRows.push_back(staged.empty() ? kWholeBatch : chunkRows);
  // 16-byte copies need every staged row segment (N wide, at a multiple of
  // N in a row of K, or a whole row K wide) to start at a multiple of 4
  // floats.
  asyncCopies = options.asyncCopies && maxStaged != 0 && n % 4 == 0;
  for (ArrayRef<TermInput> staged : stagedInputs)
    for (const TermInput &input : staged)
      asyncCopies &= inputWidth(input) % 4 == 0;
  // The grid barrier that ends a step makes its new states visible to the
  // blocks that stage them in the next step. Where no product reads a
  // state (a backward step's products read the step's dG only), a block
  // reads no other block's state, and a block barrier suffices: the
  // phases' own grid barriers keep a block from running a step ahead of
  // another's reads of the scratch buffers, which alternate by step.
  stepGridBarrier = false;
  for (const Product &product : cell.products)
    for (auto &[input, weight] : product.terms)
      stepGridBarrier |= input.kind == TermInput::Kind::State;
  if (cell.numPhases < 2)
    stepGridBarrier = true;
}

int64_t PersistentKernelBuilder::productPieces(unsigned product) const {
  const Product &p = plan.products[product];
  Value weight = p.terms.front().second;
  int64_t rows =
      cast<RankedTensorType>(weight.getType()).getDimSize(p.transposed ? 1 : 0);
  return divCeil(rows, plan.width);
}

int64_t PersistentKernelBuilder::inputWidth(const TermInput &input) const {
  switch (input.kind) {
  case TermInput::Kind::Concat:
    return plan.concats[input.index].width;
  case TermInput::Kind::Input:
    return plan.inStepInputs.lookup(input.index);
  case TermInput::Kind::State:
    return plan.stateWidths[input.index];
  case TermInput::Kind::Computed:
    return plan.pointwise[input.computed.op].width;
  }
  return plan.width;
}

int64_t PersistentKernelBuilder::stagedStride(const TermInput &input) const {
  int64_t width = inputWidth(input);
  if (!tensorCores)
    return width;
  // A warp reads a tile's rows g and g + 8 in 16-byte pieces at columns
  // 16q + 4t (lane 4g + t): with a stride of 16 (mod 32) floats, the eight
  // lanes of each quarter of the warp (rows g, g + 1) take the 32 banks once.
  int64_t stride = divCeil(width, kMmaDepth) * kMmaDepth;
  if (stride % (2 * kMmaDepth) == 0)
    stride += kMmaDepth;
  return stride;
}

bool PersistentKernelBuilder::vectorTermsFor(int64_t k) const {
  // The 16-byte loads need 16-byte aligned rows: every staged row starts at
  // a multiple of its K, every shared view at a multiple of maxInputWidth
  // floats (buildBlocks).
  return useRegisters && k % (kLanes * kVectorTerms) == 0 &&
         maxInputWidth % kVectorTerms == 0;
}

int64_t PersistentKernelBuilder::sharedBytes() const {
  return int64_t(maxStaged) * chunkRows * maxInputWidth *
             int64_t(sizeof(float)) +
         mmaScratchBytes();
}

Value PersistentKernelBuilder::tileRowsAt(OpBuilder &b, Value batchSize) {
  if (rowTiles == 1)
    return batchSize;
  return arith::CeilDivUIOp::create(b, loc, batchSize, index(b, rowTiles));
}

Value PersistentKernelBuilder::sharedBytesAt(OpBuilder &b, Value batchSize) {
  // Every view min(⌈B / rowTiles⌉, chunkRows) rows long (buildBlocks).
  Value staged = arith::MinUIOp::create(b, loc, tileRowsAt(b, batchSize),
                                        index(b, chunkRows));
  Value bytes = arith::MulIOp::create(
      b, loc, staged,
      index(b, int64_t(maxStaged) * maxInputWidth * int64_t(sizeof(float))));
  if (!tensorCores)
    return bytes;
  return arith::AddIOp::create(b, loc, bytes, index(b, mmaScratchBytes()));
}

int64_t PersistentKernelBuilder::costModelMaxBatch() const {
  int64_t dots = dotsMaxBatch();
  if (!tensorCores || rowWork == 0)
    return dots;
  // On tensor cores a step's products cost little next to its staging:
  // every block reads the batch's staged rows from L2 (deepbench's layer,
  // H = 1024, K = 1024: 0.3 ms at B = 16 and 0.5 at 32, against 0.59 and
  // 0.61 for the per-step GEMMs and cuDNN in TF32, but 0.87 against 0.62
  // at 64; its backward, K = 4096 staged, lost at 32). Both bounds, the
  // multiply-adds and the staged floats a step, hold the measured wins
  // (docs/benchmarks.md, "The cost model's bounds on tensor cores").
  int64_t staged = 0;
  for (ArrayRef<TermInput> phase : stagedInputs)
    for (const TermInput &input : phase)
      staged += inputWidth(input);
  int64_t work = weightedRowWork != 0 ? weightedRowWork : rowWork;
  // Under 3xTF32 against the fp32 per-step GEMMs, three times slower than
  // TF32's, twice the multiply-adds: deepbench's layer at B = 64 took 1.78
  // ms against their 2.02 (docs/benchmarks.md, "fp32 on tensor cores").
  int64_t bound = (splitTF32 ? 2 : 1) * kMaxStepWorkTensorCores / work;
  if (staged != 0)
    bound = std::min(bound, kMaxStagedTensorCores / staged);
  return std::max(dots, bound);
}

int64_t PersistentKernelBuilder::dotsMaxBatch() const {
  // A warp with several units reads each unit's weights from memory in
  // turn: slower than the per-step GEMMs at every size measured.
  if (unitsPerWarp != 1)
    return 0;
  // The bounds count the multiply-adds by weights a warp holds or reads:
  // a splat constant's product (a layer norm's averaging matrix) takes
  // neither registers nor loads. Measured on the H200, the
  // layer-normalised stack's kernel, whose whole work would bound it at
  // B = 26, beat the wavefront at every batch to 320 (0.96 against 2.95
  // ms at 64, 3.62 against 4.31 at 320; docs/benchmarks.md); its weighted
  // work bounds it at 256.
  if (rowWork == 0)
    return std::numeric_limits<int32_t>::max();
  // Every product by a splat constant: nothing measured bounds that work
  // lower than all of it.
  int64_t work = weightedRowWork != 0 ? weightedRowWork : rowWork;
  // One unit a warp whose weights do not fit in its registers (H = 2048)
  // reads them from L1 and L2 at every step: faster than the per-step
  // GEMMs to a smaller step.
  return (useRegisters ? kMaxStepWork : kMaxStepWorkFromMemory) / work;
}

int64_t PersistentKernelBuilder::dotsOvertakenFrom() const {
  // A warp takes ⌈⌈B / rowTiles⌉ / rowGroups⌉ rows in turn; in groups
  // where every phase's warps take more than one row at once.
  bool grouped = llvm::all_of(groupRows, [](int64_t rows) { return rows > 1; });
  int64_t rows = grouped ? kDotsRowsInGroups : kDotsRowsInTurn;
  return rowTiles * rowGroups * rows + 1;
}

/// Units per block for each layer of multiply-adds `work` per row and unit
/// and width `widths`, at most `maxUnits` (a warp each, so that the warps
/// keep their weights in registers): the smallest bound on a block's step
/// (units · work) that `maxBlocks` blocks reach, then as many blocks as
/// they allow (the layer of the longest block step first). Empty where
/// `maxBlocks` blocks cannot hold the layers.
SmallVector<int64_t>
mlir::lstm::persistent::splitBlocks(ArrayRef<int64_t> work,
                                    ArrayRef<int64_t> widths, int64_t maxUnits,
                                    int64_t maxBlocks) {
  size_t n = work.size();
  auto blocks = [&](ArrayRef<int64_t> units) {
    int64_t total = 0;
    for (size_t l = 0; l < n; ++l)
      total += divCeil(widths[l], units[l]);
    return total;
  };
  SmallVector<int64_t> bounds;
  for (size_t l = 0; l < n; ++l)
    for (int64_t u = 1; u <= std::min(widths[l], maxUnits); ++u)
      bounds.push_back(u * std::max<int64_t>(work[l], 1));
  llvm::sort(bounds);
  SmallVector<int64_t> units(n, 0);
  for (int64_t bound : bounds) {
    bool reachable = true;
    for (size_t l = 0; l < n; ++l) {
      units[l] = std::min(
          {widths[l], maxUnits, bound / std::max<int64_t>(work[l], 1)});
      reachable &= units[l] >= 1;
    }
    if (reachable && blocks(units) <= maxBlocks)
      break;
  }
  if (llvm::any_of(units, [](int64_t u) { return u < 1; }) ||
      blocks(units) > maxBlocks)
    return {};
  // Fewer units a block where the blocks allow, the longest step first.
  for (bool changed = true; changed;) {
    changed = false;
    SmallVector<size_t> order = llvm::to_vector(llvm::seq<size_t>(0, n));
    llvm::sort(order, [&](size_t a, size_t b) {
      return units[a] * work[a] > units[b] * work[b];
    });
    for (size_t l : order) {
      if (units[l] == 1)
        continue;
      --units[l];
      if (blocks(units) <= maxBlocks) {
        changed = true;
        break;
      }
      ++units[l];
    }
  }
  return units;
}
