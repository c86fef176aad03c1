//===- PersistentSizes.h - A persistent kernel's sizes and bounds -*- C++ -*-//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The constants of lstm-to-persistent's kernels: warp and tile sizes, the
// registers a lane gives its weights, and the cost model's bounds with the
// measurements they come from.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSIZES_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSIZES_H

#include "lstm/Conversion/NarrowKernelIndices/NarrowKernelIndices.h"

#include <cstdint>

namespace mlir::lstm::persistent {

/// The threads of a warp, which split a step's dot products.
inline constexpr int32_t kLanes = 32;
/// How many of a lane's terms of a dot product are loaded at once when the
/// weights are read from global memory.
inline constexpr int64_t kUnrollFactor = 4;
/// Most weights (floats per lane) a warp keeps in registers. With the
/// block's 512 threads an SM has 128 registers per thread.
inline constexpr int64_t kRegisterWeights = 64;
/// The same with blocks of kFewerThreads or fewer, whose lanes may use 255
/// registers.
inline constexpr int64_t kRegisterWeightsFewerThreads = 128;
/// Threads per block where lstm-to-persistent chooses (block-size 0), and
/// where a warp's weights fill more than half of kRegisterWeights.
inline constexpr int64_t kDefaultBlockSize = 512;
inline constexpr int64_t kFewerThreads = 256;
/// Most rows a warp works on at once (fewer where their dot products would
/// take more than kMaxAccumulators registers; one where its weights take
/// more than half of kRegisterWeights: two would spill).
inline constexpr int64_t kMaxGroupRows = 4;
/// Most partial sums a lane accumulates at once.
inline constexpr int64_t kMaxAccumulators = 32;
/// Product columns a staged value feeds that make a warp take no more units
/// at once (an LSTM's four gates: one unit).
inline constexpr int64_t kColumnsAtOnce = 4;
/// Elements each thread copies at once when staging the states.
inline constexpr int64_t kStageUnroll = 8;
/// Consecutive terms of a dot product that a lane reads from shared memory
/// in one 16-byte load, where its weights are in registers and the terms
/// split evenly (K a multiple of kLanes · kVectorTerms).
inline constexpr int64_t kVectorTerms = 4;
/// A tensor-core tile (`mma.sync`): kMmaRows batch rows by kMmaColumns
/// weight rows, the depth taken kMmaDepth at a time (two m16n8k8 TF32
/// instructions or one m16n8k16 bf16 one).
inline constexpr int64_t kMmaRows = 16;
inline constexpr int64_t kMmaColumns = 8;
inline constexpr int64_t kMmaDepth = 16;
/// Terms of K a lane holds per kMmaDepth, contiguous
/// (PersistentTensorCores.cpp): lane 4g + t holds those of row g.
inline constexpr int64_t kLaneTerms = 4;
/// The cost model's bound on a step's multiply-adds (B · N · Σ columns ·
/// K): above it the per-step lowering's GEMMs (or the wavefront's) are
/// faster than the warps' dot products. Measured on the H100
/// (docs/benchmarks.md, "The cost model's bounds, measured again"):
/// appleyard's layers (H = 512) beat the wavefront at B = 16 (2^24) and
/// lose at 32; H = 1024 in registers beats the per-step lowering at B = 4
/// (2^24) and 8.
inline constexpr int64_t kMaxStepWork = int64_t{16} << 20;
/// The same where a warp's weights do not fit in its registers in either
/// block size and it reads them from memory at every step: H = 2048 beats
/// the per-step lowering to B = 4 (2^26) and ties at 8, H = 1024 (512
/// threads) to B = 16 (2^26) and ties at 32 (docs/benchmarks.md).
inline constexpr int64_t kMaxStepWorkFromMemory = int64_t{64} << 20;
/// The same for a kernel on tensor cores, and its bound on the floats a
/// block stages a step (B · the staged rows' widths), which every block
/// reads from L2: measured on the H200 (docs/benchmarks.md, "The cost
/// model's bounds on tensor cores"), deepbench's layer (2^22 multiply-adds
/// and 1024 staged floats a row) beats the per-step GEMMs to B = 32 and
/// loses at 64, the latency stack's (2^21 and 1024 in its second layer)
/// beats the wavefront to 96 and loses at 128. (A stack's bound is its
/// layers' own kernels': the link the stack's kernel stages in the second
/// layer's step is not counted, which gives the latency stack 128.)
inline constexpr int64_t kMaxStepWorkTensorCores = int64_t{128} << 20;
inline constexpr int64_t kMaxStagedTensorCores = int64_t{64} << 10;
/// Under splitTF32, the batch the tensor cores start at where the dot
/// products run further (tensorCoreMinBatch).
inline constexpr int64_t kSplitTF32MaxFromBatch = 64;
/// Under splitTF32, the rows a warp of the dot products' kernel takes in
/// turn beyond which the kernel of 3xTF32 is faster, one at a time and in
/// groups. The 3xTF32 kernel's step costs about the same from 1 to 16 rows
/// of a tile; the dot products' grows by about one row's dot product for
/// each row a warp takes one at a time, less in groups. Measured on the
/// H200 (docs/benchmarks.md, "Where the 3xTF32 kernel starts"), one at a
/// time they lost from 4 to 5 rows a warp (the latency stack and
/// deepbench's layer from B = 5, layers of H = 384 and 512 in two tiles of
/// rows from about 7 and 9), in groups of four from 6 to 12 (three layers
/// of H = 256, one tile, from 12; char-rnn's stack near B = 50 and a layer
/// of H = 256 near 64, 8 tiles and row groups): the larger, where starting
/// early costs more (char-rnn's training step lost 6% at B = 50).
inline constexpr int64_t kDotsRowsInTurn = 4;
inline constexpr int64_t kDotsRowsInGroups = 12;
/// The chunk of a phase that stages nothing: more rows than any batch the
/// kernel runs at (its buffers span fewer than kNarrowIndexLimit elements),
/// and an index its 32-bit arithmetic holds (lstm-narrow-kernel-indices).
inline constexpr int64_t kWholeBatch = kNarrowIndexLimit - 1;

/// ceil(a / b) for positive a and b.
inline int64_t divCeil(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSIZES_H
