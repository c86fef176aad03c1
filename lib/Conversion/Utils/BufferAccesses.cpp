//===- BufferAccesses.cpp - What host-level ops read and write ------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Conversion/Utils/BufferAccesses.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace mlir::lstm;

/// Whether `v` is defined inside `root` (in one of its regions).
static bool definedInside(Value v, Operation *root) {
  Region *region = v.getParentRegion();
  return region && root->isAncestor(region->getParentOp());
}

FailureOr<SmallVector<BufferAccess>>
lstm::collectBufferAccesses(Operation *root) {
  SmallVector<BufferAccess> accesses;
  WalkResult walk = root->walk([&](Operation *op) {
    // Assertions only stop the program.
    if (isa<cf::AssertOp>(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      // Loops and branches: their ops are visited in turn.
      return op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &effect : list) {
      Value value = effect.getValue();
      if (!value)
        return WalkResult::interrupt();
      // To the memref defined outside, through the views taken inside.
      while (Operation *def = value.getDefiningOp()) {
        if (!root->isAncestor(def))
          break;
        auto view = dyn_cast<ViewLikeOpInterface>(def);
        if (!view)
          break;
        value = view.getViewSource();
      }
      if (definedInside(value, root))
        continue; // the op's own memory
      if (isa<MemoryEffects::Allocate>(effect.getEffect()))
        continue; // the op's results: new buffers
      accesses.push_back(
          {value, !isa<MemoryEffects::Read>(effect.getEffect())});
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return accesses;
}

bool lstm::touchesNoMemory(Operation *op) {
  if (isa<cf::AssertOp>(op))
    return true;
  if (auto effects = dyn_cast<MemoryEffectOpInterface>(op)) {
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    if (!llvm::all_of(list, [](const MemoryEffects::EffectInstance &e) {
          return isa<MemoryEffects::Allocate>(e.getEffect());
        }))
      return false;
  } else if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>()) {
    return false;
  }
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps())
      if (!touchesNoMemory(&nested))
        return false;
  return true;
}

Value lstm::viewRoot(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether `a` is (a view of) a buffer allocated after `b` is defined:
/// `b`'s buffer is live then (the ops access it later), so the allocation
/// cannot return any of its memory. Alias analysis does not see this where
/// `b` is a loop's iteration argument, which may be a buffer an earlier
/// iteration allocated at the same op (a wavefront's gather buffer and the
/// links it reads).
static bool allocatedAfter(Value a, Value b, DominanceInfo &dominance) {
  Operation *alloc = viewRoot(a).getDefiningOp();
  if (!isa_and_present<memref::AllocOp, gpu::AllocOp>(alloc))
    return false;
  return dominance.properlyDominates(viewRoot(b), alloc);
}

/// Whether two slices of one memref select disjoint indices in some
/// dimension by their static offsets, sizes and strides.
static bool disjointSlices(memref::SubViewOp sliceA, memref::SubViewOp sliceB) {
  if (sliceA.getSource() != sliceB.getSource())
    return false;
  for (auto [offsetA, sizeA, strideA, offsetB, sizeB, strideB] :
       llvm::zip(sliceA.getStaticOffsets(), sliceA.getStaticSizes(),
                 sliceA.getStaticStrides(), sliceB.getStaticOffsets(),
                 sliceB.getStaticSizes(), sliceB.getStaticStrides())) {
    if (ShapedType::isDynamic(offsetA) || ShapedType::isDynamic(sizeA) ||
        ShapedType::isDynamic(strideA) || ShapedType::isDynamic(offsetB) ||
        ShapedType::isDynamic(sizeB) || ShapedType::isDynamic(strideB))
      continue;
    if (sizeA == 0 || sizeB == 0)
      return true;
    // The indices each selects span [low, high] whatever the stride's
    // sign.
    int64_t endA = offsetA + (sizeA - 1) * strideA;
    int64_t endB = offsetB + (sizeB - 1) * strideB;
    if (std::max(offsetA, endA) < std::min(offsetB, endB) ||
        std::max(offsetB, endB) < std::min(offsetA, endA))
      return true;
  }
  return false;
}

bool lstm::mayOverlap(Value a, Value b, AliasAnalysis &aliases,
                      DominanceInfo &dominance) {
  if (allocatedAfter(a, b, dominance) || allocatedAfter(b, a, dominance))
    return false;
  // A slice of a slice lies within the outer one: disjoint outer slices
  // have disjoint contents.
  for (auto sliceA = a.getDefiningOp<memref::SubViewOp>(); sliceA;
       sliceA = sliceA.getSource().getDefiningOp<memref::SubViewOp>())
    for (auto sliceB = b.getDefiningOp<memref::SubViewOp>(); sliceB;
         sliceB = sliceB.getSource().getDefiningOp<memref::SubViewOp>())
      if (disjointSlices(sliceA, sliceB))
        return false;
  return !aliases.alias(a, b).isNo();
}

bool lstm::independentAccesses(ArrayRef<BufferAccess> a,
                               ArrayRef<BufferAccess> b, AliasAnalysis &aliases,
                               DominanceInfo &dominance) {
  for (const BufferAccess &x : a)
    for (const BufferAccess &y : b)
      if ((x.write || y.write) &&
          mayOverlap(x.memref, y.memref, aliases, dominance))
        return false;
  return true;
}
