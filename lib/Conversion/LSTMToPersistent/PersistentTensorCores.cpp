//===- PersistentTensorCores.cpp - A persistent kernel's products on MMA --===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The products of a persistent kernel on tensor cores (`mma.sync`, sm_80
// and later), where a warp keeps its weights in registers. A product's
// result for a warp is [rows, units at once · columns]: the batch rows are
// the instruction's M (tiles of 16 rows, read from the staged rows in shared
// memory as A fragments), the weight rows of the warp's units' columns its
// N (tiles of 8, the lane's B fragments loaded into registers before the
// time loop), K the product's depth, 16 at a time: two m16n8k8 TF32
// instructions or one m16n8k16 bf16 one, accumulating in fp32. The
// products of a phase go through the warp's tile of shared memory, from
// which each lane reads the columns of its elements (a row of one of the
// warp's units) and evaluates them as the dot-product path does
// (PersistentElement.cpp): the tiles and elements are
// PersistentTensorCoreTiles.cpp's.
//
// Lane 4g + t holds, per 16 of K, the terms 16q + 4t .. + 3 of rows g and
// g + 8 (one 16-byte load each) and of weight row g of the tile: the
// instruction's K order permuted so that each lane's terms are contiguous.
// TF32: the first instruction takes terms 4t and 4t + 1 as its k = t and
// t + 4, the second 4t + 2 and 4t + 3; bf16: terms 4t, 4t + 1 as k = 2t,
// 2t + 1 and 4t + 2, 4t + 3 as k = 2t + 8, 2t + 9. A and B agree, so the
// sums are the product's.
//
// Under 3xTF32 (splitTF32, the fp32 compute type) the lanes hold the
// weights' fp32 bits and split them, and the staged values, into big and
// small TF32 operands at each use (PersistentMmaOperands.cpp), three
// instructions for each of TF32's.
//
// Under a depth split (PersistentTensorCoreLayout.cpp) the warps of a set
// take the same tiles, each its chunks of 16 of K, and their partial
// tiles meet at a named barrier; one warp a tile sums them.
//
//===----------------------------------------------------------------------===//

#include "PersistentKernelBuilder.h"
#include "PersistentMmaOperands.h"
#include "lstm/Conversion/Utils/TF32.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::persistent;

/// Independent accumulators of each tile: in blocks of kFewerThreads or
/// fewer (whose lanes may use 255 registers) and in larger ones (128).
static constexpr int64_t kMmaChains = 4;
static constexpr int64_t kMmaChainsManyThreads = 2;

/// One mma.sync of a 16x8 tile: `c` + A · B, fp32.
static SmallVector<Value> mmaSync(OpBuilder &b, Location loc, bool bf16,
                                  ValueRange a, ValueRange bFragment,
                                  ValueRange c) {
  auto mma = WarpMmaOp::create(b, loc, a, bFragment, c, bf16);
  return SmallVector<Value>(mma->getResults());
}

Value PersistentKernelBuilder::chunkTerm(OpBuilder &b, Value firstTerm,
                                         Value part, int64_t i, int64_t e) {
  if (depthSplit == 1)
    return arith::AddIOp::create(b, loc, firstTerm,
                                 index(b, i * kMmaDepth + e));
  Value q = arith::AddIOp::create(b, loc, part, index(b, i * depthSplit));
  return arith::AddIOp::create(
      b, loc, firstTerm,
      arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, q, index(b, kMmaDepth)),
          index(b, e)));
}

/// The lane's B fragments of every product's weights, loaded once before
/// the time loop: of each tile of kMmaColumns weight rows, row g (the s-th
/// of the warp's units at once, column c of the product, for the tile's
/// column s · columns + c; zeros past the last), terms 16q + 4t .. + 3
/// (zeros past K).
void PersistentKernelBuilder::loadMmaWeights(OpBuilder &b, Value slot,
                                             Value part, Value lane) {
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  Value g = arith::DivUIOp::create(b, loc, lane, index(b, kLaneTerms));
  Value firstTerm = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, index(b, kLaneTerms)),
      index(b, kLaneTerms));
  SmallVector<Value> units;
  for (int64_t s = 0; s < unitsAtOnce; ++s)
    units.push_back(warpUnit(b, slotUnit(b, slot, s)).index);
  mmaWeights.clear();
  for (auto [p, product] : llvm::enumerate(plan.products)) {
    auto &perTerm = mmaWeights.emplace_back();
    ArrayRef<int64_t> columns = neededColumns[p];
    auto count = int64_t(unitsAtOnce * columns.size());
    for (auto [t, weight] : llvm::enumerate(weights[p])) {
      int64_t depth = cast<MemRefType>(weight.getType())
                          .getDimSize(product.transposed ? 0 : 1);
      auto &perTile = perTerm.emplace_back();
      for (int64_t tile = 0; tile < mmaTiles(p); ++tile) {
        // The lane's weight row: the tile's column g.
        int64_t begin = tile * kMmaColumns;
        int64_t end = std::min(count, begin + kMmaColumns);
        Value column = arith::AddIOp::create(b, loc, g, index(b, begin));
        Value row;
        for (int64_t i = begin; i < end; ++i) {
          auto c = size_t(i) % columns.size();
          Value candidate =
              weightRow(b, weight, product.transposed,
                        units[i / int64_t(columns.size())], columns[c]);
          row =
              row ? arith::SelectOp::create(
                        b, loc,
                        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                              column, index(b, i)),
                        candidate, row)
                        .getResult()
                  : candidate;
        }
        Value used;
        if (end - begin < kMmaColumns)
          used = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                       column, index(b, count));
        auto &values = perTile.emplace_back();
        for (int64_t i = 0; i < warpChunks(depth); ++i) {
          bool partial = chunkMayPassDepth(i, depth);
          SmallVector<Value, kLaneTerms> terms;
          for (int64_t e = 0; e < kLaneTerms; ++e) {
            Value k = chunkTerm(b, firstTerm, part, i, e);
            Value kc =
                partial ? arith::MinUIOp::create(b, loc, k, index(b, depth - 1))
                        : k;
            SmallVector<Value, 2> at{row, kc};
            if (product.transposed)
              std::swap(at[0], at[1]);
            Value w = weightAt(b, loc, p, t, weight, at);
            if (partial)
              w = arith::SelectOp::create(
                  b, loc,
                  arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, k,
                                        index(b, depth)),
                  w, zero);
            if (used)
              w = arith::SelectOp::create(b, loc, used, w, zero);
            terms.push_back(w);
          }
          if (bf16Operands) {
            values.push_back(roundToBF16Pair(b, loc, terms[0], terms[1]));
            values.push_back(roundToBF16Pair(b, loc, terms[2], terms[3]));
          } else if (splitTF32) {
            // Split at each use (buildMmaProduct): the registers hold one
            // value a weight, as in TF32.
            for (Value w : terms)
              values.push_back(
                  arith::BitcastOp::create(b, loc, b.getI32Type(), w));
          } else {
            for (Value w : terms)
              values.push_back(roundToTF32(b, loc, w));
          }
        }
      }
    }
  }
}

SmallVector<SmallVector<Value>>
PersistentKernelBuilder::buildMmaProduct(OpBuilder &b, unsigned p, Value rowLow,
                                         Value rowHigh, Value lane,
                                         Value part) {
  const Product &product = plan.products[p];
  int64_t tiles = mmaTiles(p);
  Value zero =
      arith::ConstantFloatOp::create(b, loc, b.getF32Type(), APFloat(0.0f));
  Value firstTerm = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, lane, index(b, kLaneTerms)),
      index(b, kLaneTerms));
  // kMmaChains accumulators a tile, the instructions dealt out in turn:
  // that many chains of dependent instructions in flight. With one, a
  // step at batch 1 waited for each instruction's latency in turn (two
  // layers of H = 512: 0.32 ms against 0.23 with the dot products).
  // Char-rnn's stack kernel (512 threads) spilled 72 bytes with 4, 28 with
  // 2 (ptxas -v).
  // A depth split divides the weights' registers by as much.
  int64_t chains = blockSize <= kFewerThreads || depthSplit > 1
                       ? kMmaChains
                       : kMmaChainsManyThreads;
  SmallVector<SmallVector<Value>> sums[kMmaChains];
  for (auto &chain : sums)
    chain.assign(tiles, SmallVector<Value>(4, zero));
  int64_t issued = 0;
  // Under splitTF32, the mask its splits take (opaqueTF32Mask), once a
  // product.
  Value tf32Mask;
  auto quad = VectorType::get({kLaneTerms}, b.getF32Type());
  for (auto [t, term] : llvm::enumerate(product.terms)) {
    int64_t depth = inputWidth(term.first);
    int64_t stride = stagedStride(term.first);
    Value staged = stagedFor(term.first);
    auto rowBase = [&](Value row) -> Value {
      return arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, row, index(b, stride)),
          firstTerm);
    };
    Value low = rowBase(rowLow), high = rowBase(rowHigh);
    int64_t chunks = divCeil(depth, kMmaDepth);
    for (int64_t i = 0; i < warpChunks(depth); ++i) {
      bool partial = chunkMayPassDepth(i, depth);
      // The chunk's first term, from the row's start: 16q (a constant
      // without a depth split); a warp's chunk past the last (the depth
      // split unevenly) reads the last and takes zeros.
      Value chunkStart;
      if (depthSplit == 1) {
        chunkStart = index(b, i * kMmaDepth);
      } else {
        Value q = arith::AddIOp::create(b, loc, part, index(b, i * depthSplit));
        if ((i + 1) * depthSplit > chunks)
          q = arith::MinUIOp::create(b, loc, q, index(b, chunks - 1));
        chunkStart = arith::MulIOp::create(b, loc, q, index(b, kMmaDepth));
      }
      // The lane's terms of rows g and g + 8; past K (the padding of the
      // staged rows, never written) zeros.
      auto termsOf = [&](Value base) {
        Value loaded = vector::LoadOp::create(
            b, loc, quad, staged,
            ValueRange{arith::AddIOp::create(b, loc, base, chunkStart)},
            /*nontemporal=*/false,
            llvm::MaybeAlign(kLaneTerms * sizeof(float)));
        SmallVector<Value, kLaneTerms> terms;
        for (int64_t e = 0; e < kLaneTerms; ++e) {
          Value v = vector::ExtractOp::create(b, loc, loaded, e);
          if (partial)
            v = arith::SelectOp::create(
                b, loc,
                arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                      chunkTerm(b, firstTerm, part, i, e),
                                      index(b, depth)),
                v, zero);
          terms.push_back(v);
        }
        return terms;
      };
      SmallVector<Value, kLaneTerms> lo = termsOf(low), hi = termsOf(high);
      SmallVector<SmallVector<Value>> aFragments, aSmall;
      if (bf16Operands) {
        aFragments.push_back({roundToBF16Pair(b, loc, lo[0], lo[1]),
                              roundToBF16Pair(b, loc, hi[0], hi[1]),
                              roundToBF16Pair(b, loc, lo[2], lo[3]),
                              roundToBF16Pair(b, loc, hi[2], hi[3])});
      } else if (splitTF32) {
        if (!tf32Mask)
          tf32Mask = opaqueTF32Mask(b, loc);
        for (int64_t half = 0; half < 2; ++half) {
          SmallVector<Value> &big = aFragments.emplace_back();
          SmallVector<Value> &small = aSmall.emplace_back();
          for (Value v : {lo[2 * half], hi[2 * half], lo[2 * half + 1],
                          hi[2 * half + 1]}) {
            auto [vBig, vSmall] = splitTF32Bits(
                b, loc, arith::BitcastOp::create(b, loc, b.getI32Type(), v),
                tf32Mask);
            big.push_back(vBig);
            small.push_back(vSmall);
          }
        }
      } else {
        for (int64_t half = 0; half < 2; ++half)
          aFragments.push_back({roundToTF32(b, loc, lo[2 * half]),
                                roundToTF32(b, loc, hi[2 * half]),
                                roundToTF32(b, loc, lo[2 * half + 1]),
                                roundToTF32(b, loc, hi[2 * half + 1])});
      }
      // Each instruction's B fragment: two of the lane's registers. Under
      // splitTF32 they are split here, where they are used, and each of
      // the three instructions (the cross terms, then big · big; small ·
      // small, 2^-22 of the product, is dropped) goes to the next chain.
      for (auto [half, a] : llvm::enumerate(aFragments)) {
        int64_t at = bf16Operands ? 2 * i : 4 * i + 2 * int64_t(half);
        SmallVector<SmallVector<Value>> bBig, bSmall;
        for (int64_t tile = 0; tile < tiles; ++tile) {
          ArrayRef<Value> fragment =
              ArrayRef<Value>(mmaWeights[p][t][tile]).slice(at, 2);
          bBig.emplace_back(fragment);
          if (!splitTF32)
            continue;
          bSmall.emplace_back();
          for (Value &w : bBig.back()) {
            auto [wBig, wSmall] = splitTF32Bits(b, loc, w, tf32Mask);
            w = wBig;
            bSmall.back().push_back(wSmall);
          }
        }
        auto issue = [&](ArrayRef<Value> aFragment,
                         ArrayRef<SmallVector<Value>> bFragments) {
          SmallVector<SmallVector<Value>> &chain = sums[issued++ % chains];
          for (int64_t tile = 0; tile < tiles; ++tile)
            chain[tile] = mmaSync(b, loc, bf16Operands, aFragment,
                                  bFragments[tile], chain[tile]);
        };
        if (splitTF32) {
          issue(aSmall[half], bBig);
          issue(a, bSmall);
        }
        issue(a, bBig);
      }
    }
  }
  // The chains' sums, pairwise.
  for (int64_t width = 1; width < std::min(issued, chains); width *= 2)
    for (int64_t c = 0; c + width < std::min(issued, chains); c += 2 * width)
      for (int64_t tile = 0; tile < tiles; ++tile)
        for (int64_t i = 0; i < 4; ++i)
          sums[c][tile][i] = arith::AddFOp::create(b, loc, sums[c][tile][i],
                                                   sums[c + width][tile][i]);
  return sums[0];
}
