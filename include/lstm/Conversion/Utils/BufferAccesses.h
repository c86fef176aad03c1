//===- BufferAccesses.h - What host-level ops read and write ----*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Passes that reorder or regroup the device work of bufferized host code
// (lstm-merge-gpu-launches, lstm-fork-independent-work) ask the same
// questions of it: which buffers an op reads and writes, whether an op
// touches memory at all, and whether two buffers may share an element.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_BUFFERACCESSES_H
#define LSTM_CONVERSION_UTILS_BUFFERACCESSES_H

#include "mlir/Analysis/AliasAnalysis.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Operation.h"

namespace mlir::lstm {

/// A memref defined outside an op that the op reads or writes.
struct BufferAccess {
  Value memref;
  bool write;
};

/// The memrefs defined outside `op` that it and the ops in its regions read
/// or write (frees count as writes), each traced through the views taken
/// inside `op` to the memref defined outside; its regions' own buffers are
/// left out. Failure where an effect names no value or an op declares no
/// effects (and has none of its nested ops' alone).
FailureOr<SmallVector<BufferAccess>> collectBufferAccesses(Operation *op);

/// Whether `op` touches no memory, looking into its regions: pure ops,
/// allocations, and assertions (which only stop the program).
bool touchesNoMemory(Operation *op);

/// The memref that `v` is a view of.
Value viewRoot(Value v);

/// Whether memrefs `a` and `b` may share an element: not where alias
/// analysis says they do not (distinct allocations, an allocation and an
/// argument), nor where one is allocated after the other is defined, nor
/// where they are within slices of one memref whose static offsets, sizes
/// and strides in some dimension select disjoint indices (the states of a
/// stack, [L, B, N], written a layer at a time; the two halves of a
/// concatenation, one of them filled through slices of its slice).
bool mayOverlap(Value a, Value b, AliasAnalysis &aliases,
                DominanceInfo &dominance);

/// Whether ops with accesses `a` and `b` may run in either order or at once:
/// neither writes an element the other reads or writes.
bool independentAccesses(ArrayRef<BufferAccess> a, ArrayRef<BufferAccess> b,
                         AliasAnalysis &aliases, DominanceInfo &dominance);

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_UTILS_BUFFERACCESSES_H
