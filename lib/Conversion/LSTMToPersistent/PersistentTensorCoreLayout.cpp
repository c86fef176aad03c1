//===- PersistentTensorCoreLayout.cpp - Which products take tensor cores --===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The layout half of the persistent kernels' tensor cores (the code they
// run is PersistentTensorCores.cpp): whether a layer's products take
// `mma.sync` tiles, how many units a warp takes at once, how many warps
// split each tile's depth, and the shared memory of the warps' result
// tiles.
//
//===----------------------------------------------------------------------===//

#include "PersistentKernelBuilder.h"

#include <limits>

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// PTX's named barriers other than the block's (barrier 0).
static constexpr int64_t kNamedBarriers = 15;

void PersistentKernelBuilder::chooseTensorCores(
    const PersistentOptions &options, int64_t registerBudget) {
  // A splat constant's product takes no registers in the dot-product path
  // (a layer norm's averaging matrices); here it would take a tile's.
  for (ArrayRef<std::optional<APFloat>> terms : splatWeights)
    if (llvm::any_of(terms, [](auto &splat) { return splat.has_value(); }))
      return;
  if (maxStaged == 0)
    return;
  // Registers a lane holds per tile of weight rows and kMmaDepth of K, for
  // `units` at once: its warp's share of the depth.
  int64_t perDepth = bf16Operands ? 2 : 4;
  int64_t warps = blockSize / kLanes;
  auto registers = [&](int64_t units, int64_t split) {
    int64_t total = 0;
    for (auto [p, product] : llvm::enumerate(plan.products)) {
      int64_t tiles = mmaTiles(p, units);
      for (auto &[input, weight] : product.terms)
        total += tiles * divCeil(divCeil(inputWidth(input), kMmaDepth), split) *
                 perDepth;
    }
    return total;
  };
  // The depth split that tensor-cores-split-depth asks, or with 0 the least
  // that fits the fragments in the registers. On the H200 neither pays
  // everywhere: splitting to fit took the latency stack's TF32 forward from
  // 1.69 to 0.75 ms at B = 16 (its second layer on tensor cores) and
  // char-rnn's TF32 training step from 0.490 to 0.505 ms (its backward
  // kernels, whose dot products run to B = 256); four warps where the
  // fragments fit anyway cost 20-40% at B = 128 and 256 (docs/benchmarks.md,
  // "The depth split"). Chosen (-1): to fit only where the dot products'
  // kernel stops below the batch the tensor cores start at (deepbench's
  // layer, H = 1024: B <= 4 against 16), so that the split runs the kernel
  // where nothing else would, and under splitTF32, whose kernel takes over
  // from the dot products where they are slower (tensorCoreMinBatch), as
  // measured with the split.
  bool fit = options.tensorCoresSplitDepth == 0 ||
             (options.tensorCoresSplitDepth < 0 &&
              (splitTF32 ||
               dotsMaxBatch() < tensorCoreMinBatch(options, dotsMaxBatch(),
                                                   dotsOvertakenFrom())));
  auto splitFor = [&](int64_t units) {
    int64_t slots = unitSlots / units;
    int64_t most = maxDepthSplit(options, slots, warps / slots);
    if (!fit)
      return options.tensorCoresSplitDepth < 0 ? int64_t{1} : most;
    int64_t split = 1;
    while (split < most && registers(units, split) > registerBudget)
      split *= 2;
    return split;
  };
  // As many units at once as fill a tile's columns (an LSTM's four gates:
  // two), where their weights fit.
  int64_t columns = 1;
  for (ArrayRef<int64_t> needed : neededColumns)
    columns = std::max<int64_t>(columns, int64_t(needed.size()));
  int64_t want = options.unitsAtOnce != 0
                     ? options.unitsAtOnce
                     : std::max<int64_t>(1, kMmaColumns / columns);
  // The most that fit: under a depth split more units at once can fit where
  // fewer do not (more row groups to split among; Cho's GRU at H = 1000
  // fits four units split four ways, not two split two ways).
  int64_t units = 0;
  for (int64_t u = 1; u <= std::max<int64_t>(want, 1) && unitSlots % u == 0;
       u *= 2)
    if (registers(u, splitFor(u)) <= registerBudget)
      units = u;
  if (units == 0)
    return;
  tensorCores = true;
  unitsAtOnce = units;
  depthSplit = splitFor(units);
  for (ArrayRef<unsigned> products : phaseProducts) {
    int64_t width = 0;
    for (unsigned p : products)
      width += mmaTiles(p) * kMmaColumns;
    // One float more than the tiles: a lane's reads of its row's columns
    // (rows j = lane mod 16) fall in different banks.
    mmaScratchStride = std::max(mmaScratchStride, width + 1);
  }
  // The warps' result tiles must leave the staging most of the block's
  // shared memory: else one tile a warp, without the depth split, where
  // the weights then fit; else the dot products.
  if (2 * mmaScratchBytes() > options.sharedMemory && depthSplit > 1 &&
      registers(units, 1) <= registerBudget)
    depthSplit = 1;
  if (2 * mmaScratchBytes() > options.sharedMemory) {
    tensorCores = false;
    unitsAtOnce = 1;
    mmaScratchStride = 0;
    depthSplit = 1;
  }
}

int64_t PersistentKernelBuilder::maxDepthSplit(const PersistentOptions &options,
                                               int64_t slots,
                                               int64_t groups) const {
  // Each warp takes at least one kMmaDepth of every product.
  int64_t fewestChunks = std::numeric_limits<int64_t>::max();
  for (const Product &product : plan.products) {
    int64_t chunks = 0;
    for (auto &[input, weight] : product.terms)
      chunks += divCeil(inputWidth(input), kMmaDepth);
    fewestChunks = std::min(fewestChunks, chunks);
  }
  int64_t most = options.tensorCoresSplitDepth > 0
                     ? options.tensorCoresSplitDepth
                     : std::numeric_limits<int64_t>::max();
  most = std::min({most, groups, fewestChunks});
  // A power of two that divides the row groups, and sets of warps that
  // PTX's 15 named barriers (1 to 15) tell apart.
  int64_t split = 1;
  while (2 * split <= most && groups % (2 * split) == 0 &&
         slots * (groups / (2 * split)) <= kNamedBarriers)
    split *= 2;
  return split;
}

int64_t PersistentKernelBuilder::mmaTiles(unsigned p, int64_t units) const {
  return divCeil(units * int64_t(neededColumns[p].size()), kMmaColumns);
}

int64_t PersistentKernelBuilder::mmaTiles(unsigned p) const {
  return mmaTiles(p, unitsAtOnce);
}

int64_t PersistentKernelBuilder::mmaScratchBytes() const {
  if (!tensorCores)
    return 0;
  return blockSize / kLanes * scratchTiles() * kMmaRows * mmaScratchStride *
         int64_t(sizeof(float));
}

int64_t PersistentKernelBuilder::scratchTiles() const {
  // Under a depth split, a warp writes a tile's partial sums while the
  // other warps of its set may still read the tile before's: two tiles,
  // alternating.
  return depthSplit > 1 ? 2 : 1;
}

int64_t PersistentKernelBuilder::warpChunks(int64_t depth) const {
  return divCeil(divCeil(depth, kMmaDepth), depthSplit);
}

bool PersistentKernelBuilder::chunkMayPassDepth(int64_t i,
                                                int64_t depth) const {
  // Chunk q = part + i · depthSplit, part < depthSplit.
  return (i + 1) * depthSplit * kMmaDepth > depth;
}
