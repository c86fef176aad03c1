//===- PersistentCostModel.h - Which persistent kernels run, and when -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCOSTMODEL_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCOSTMODEL_H

#include "lstm/Conversion/LSTMToPersistent/LSTMToPersistent.h"

#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace mlir::lstm::persistent {

class PersistentKernelBuilder;
struct PersistentPlan;

/// `options` with the block size chosen where it is 0 (512 threads, or
/// 256 where a warp's weights want a lane's registers beyond 128).
PersistentOptions resolveBlockSize(RewriterBase &rewriter,
                                   const PersistentPlan &plan,
                                   PersistentOptions options);

/// Where `registers` (the kernel resolveBlockSize chose) keeps its weights
/// in registers only in 256-thread blocks: the options of a kernel of
/// 512-thread blocks that reads them from memory, if the cost model runs
/// it to a larger batch.
std::optional<PersistentOptions>
memoryWeightsKernel(RewriterBase &rewriter, const PersistentPlan &plan,
                    const PersistentOptions &options,
                    const PersistentKernelBuilder &registers);

/// Whether the kernel of `builders` (a layer's, or a stack's, of
/// `gridBlocks` blocks) runs at batch size `batch` (an index, at the
/// rewriter's insertion point, `at`'s module declaring the runtime's
/// queries): the batch is at most `maxBatch`, every block is resident at
/// once, the sequences fit the kernels' 32-bit indices, and the shared
/// memory the batch needs is what the GPU gives.
Value persistentKernelRuns(RewriterBase &rewriter, Operation *at,
                           ArrayRef<PersistentKernelBuilder *> builders,
                           int64_t gridBlocks, Value batch, int64_t maxBatch);

/// Whether a kernel on tensor cores runs rather than one of dot products
/// at batch size `batch`: batch >= `fromBatch` (tensorCoreMinBatch).
Value tensorCoresRun(RewriterBase &rewriter, Location loc, Value batch,
                     int64_t fromBatch);

/// The same for `builder`'s kernel of `layer`, built before it.
Value kernelRuns(RewriterBase &rewriter, LayerOp layer,
                 PersistentKernelBuilder &builder, Value batch,
                 int64_t maxBatch);

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTCOSTMODEL_H
