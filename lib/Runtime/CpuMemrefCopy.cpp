//===- CpuMemrefCopy.cpp - memrefCopy for generated CPU code --------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The memref lowering turns a copy between non-contiguous memrefs into a
// call of memrefCopy, which MLIR defines in libmlir_c_runner_utils.so. That
// library needs libMLIR.so; the CPU runtime defines the function itself (as
// upstream's CRunnerUtils.cpp does), so that a compiled network needs no
// MLIR library where it runs.
//
//===----------------------------------------------------------------------===//

#include "lstm/Runtime/CpuRuntime.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
/// The descriptor of a ranked memref of any rank (the memref lowering's
/// layout): base and aligned pointers, offset, sizes[rank], strides[rank].
struct Descriptor {
  char *base;
  char *data;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

/// An unranked memref: its rank and a pointer to its descriptor.
struct Unranked {
  int64_t rank;
  Descriptor *descriptor;
};
} // namespace

extern "C" void memrefCopy(int64_t elemSize, void *srcArg, void *dstArg) {
  const Unranked &srcMemref = *static_cast<Unranked *>(srcArg);
  const Unranked &dstMemref = *static_cast<Unranked *>(dstArg);
  int64_t rank = srcMemref.rank;
  const Descriptor &src = *srcMemref.descriptor;
  const Descriptor &dst = *dstMemref.descriptor;
  const int64_t *sizes = src.sizesAndStrides;
  const int64_t *srcStridesIn = src.sizesAndStrides + rank;
  const int64_t *dstStridesIn = dst.sizesAndStrides + rank;

  // An empty shape: nothing to copy.
  for (int64_t axis = 0; axis < rank; ++axis)
    if (sizes[axis] == 0)
      return;

  char *srcPtr = src.data + src.offset * elemSize;
  char *dstPtr = dst.data + dst.offset * elemSize;
  if (rank == 0) {
    std::memcpy(dstPtr, srcPtr, elemSize);
    return;
  }

  // The trailing axes along which both sides are contiguous form one block
  // (a whole row, or all of a dense memref): one memcpy each, not one per
  // element.
  int64_t outerRank = rank, blockBytes = elemSize;
  // An axis of one element is contiguous whatever its stride.
  auto contiguous = [&](int64_t axis) {
    return sizes[axis] == 1 || (srcStridesIn[axis] * elemSize == blockBytes &&
                                dstStridesIn[axis] * elemSize == blockBytes);
  };
  while (outerRank > 0 && contiguous(outerRank - 1)) {
    blockBytes *= sizes[outerRank - 1];
    --outerRank;
  }
  if (outerRank == 0) {
    std::memmove(dstPtr, srcPtr, blockBytes);
    return;
  }

  std::vector<int64_t> indices(outerRank, 0), srcStrides(outerRank),
      dstStrides(outerRank);
  for (int64_t axis = 0; axis < outerRank; ++axis) {
    srcStrides[axis] = srcStridesIn[axis] * elemSize;
    dstStrides[axis] = dstStridesIn[axis] * elemSize;
  }
  int64_t readIndex = 0, writeIndex = 0;
  for (;;) {
    std::memcpy(dstPtr + writeIndex, srcPtr + readIndex, blockBytes);
    // The next index, innermost outer axis first.
    for (int64_t axis = outerRank - 1; axis >= 0; --axis) {
      int64_t next = ++indices[axis];
      readIndex += srcStrides[axis];
      writeIndex += dstStrides[axis];
      if (next != sizes[axis])
        break;
      if (axis == 0)
        return;
      indices[axis] = 0;
      readIndex -= sizes[axis] * srcStrides[axis];
      writeIndex -= sizes[axis] * dstStrides[axis];
    }
  }
}
