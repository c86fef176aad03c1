//===- PersistentStackKernel.h - A stack's one persistent kernel -*- C++ -*-//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The builder of a stack's kernel (PersistentStack.cpp), for the
// conversion that chooses and places such kernels
// (PersistentStackConversion.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSTACKKERNEL_H
#define LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSTACKKERNEL_H

#include "PersistentChains.h"
#include "PersistentCostModel.h"
#include "PersistentFallback.h"
#include "PersistentKernelBuilder.h"

#include <memory>

namespace mlir::lstm::persistent {

/// Builds one chain's kernel.
class StackKernel {
public:
  StackKernel(RewriterBase &rewriter, Chain chain,
              const PersistentOptions &options)
      : rewriter(rewriter), chain(std::move(chain)), options(options) {}

  /// Plans the layers and splits the blocks; fails (saying why under
  /// -debug-only) where a layer has no kernel or the cost model rejects
  /// the stack.
  LogicalResult plan();
  /// The largest batch the cost model runs the kernel at.
  int64_t maxBatch() const { return mostBatch; }
  /// The kernel's grid: blocks, threads per block.
  int64_t gridBlocks() const { return totalBlocks; }
  int64_t threadsPerBlock() const {
    return builders.front()->threadsPerBlock();
  }
  /// The kernel's run-time conditions at batch size `batch`.
  Value runs(Value batch) {
    return persistentKernelRuns(
        rewriter, chain.layers.back(),
        llvm::map_to_vector(builders, [](auto &b) { return b.get(); }),
        totalBlocks, batch, mostBatch);
  }
  /// Replaces the chain's layers by the kernel, built before the last one.
  void build(StringRef kernelName, ArrayRef<Operation *> dead);
  /// Whether a layer's products run on tensor cores.
  bool usesTensorCores() const {
    return llvm::any_of(builders, [](auto &b) { return b->usesTensorCores(); });
  }
  /// The smallest batch its tensor cores run at: where the stack's kernel
  /// of dot products, which takes the batches below, stops, or is
  /// overtaken in the first of its layers to be (tensorCoreMinBatch);
  /// without such a kernel, the least of its layers' own.
  int64_t tensorCoresFrom() const;

private:
  RewriterBase &rewriter;
  Chain chain;
  PersistentOptions options;
  SmallVector<std::unique_ptr<PersistentKernelBuilder>> builders;
  int64_t totalBlocks = 0, mostBatch = 0;
};

/// Fails, saying under -debug-only why `first`'s stack is not one kernel.
LogicalResult rejectStack(LayerOp first, const Twine &why);

} // namespace mlir::lstm::persistent

#endif // LSTM_LIB_CONVERSION_LSTMTOPERSISTENT_PERSISTENTSTACKKERNEL_H
