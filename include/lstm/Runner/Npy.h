//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The runner's exchange format. Only what the runner needs: little-endian
// C-order arrays of float32, float64, int32 and int64 (format versions 1-3).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_RUNNER_NPY_H
#define LSTM_RUNNER_NPY_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace mlir::lstm {

enum class DType { f32, f64, i32, i64 };

/// Bytes per element of `dtype`.
size_t dtypeSize(DType dtype);
/// NumPy's name of `dtype` ("float32", ...).
llvm::StringRef dtypeName(DType dtype);

/// A dense C-order array.
struct Array {
  DType dtype = DType::f32;
  std::vector<int64_t> shape;
  std::vector<char> data;

  /// The number of elements; only meaningful once byteSize() has succeeded
  /// (the product of the extents may overflow).
  int64_t numElements() const;
  /// The size of the data in bytes; fails, saying so, when an extent is
  /// negative or the size does not fit in 63 bits.
  llvm::Expected<uint64_t> byteSize() const;
  /// Sizes `data` for the shape. Fails with a message naming `what` (the
  /// argument) and the bytes asked for when the shape's size overflows, the
  /// process cannot have that much memory (its address-space or data limit,
  /// the machine's physical memory) or the allocation fails; never aborts.
  llvm::Error allocate(const llvm::Twine &what);
  /// The shape written the way MLIR writes it ("4x8").
  std::string shapeString() const;
};

/// `bytes` for a message: "12.8 GB (12800000000 bytes)".
std::string formatBytes(uint64_t bytes);

/// The most memory this process can hope to allocate: the smallest of its
/// address-space and data-segment limits and the machine's physical memory.
uint64_t memoryLimit();

/// Resizes `buffer` to `bytes`, or fails with a message that starts with
/// `what` and says how much was asked for (more than memoryLimit(), or the
/// allocation failed). Never aborts.
llvm::Error allocateBuffer(std::vector<char> &buffer, uint64_t bytes,
                           const llvm::Twine &what);

/// Reads `path`; fails with a message naming the file for anything that is not
/// a C-order little-endian array of a supported dtype.
llvm::Expected<Array> readNpy(llvm::StringRef path);

/// Writes `array` to `path` in format version 1.0.
llvm::Error writeNpy(llvm::StringRef path, const Array &array);

} // namespace mlir::lstm

#endif // LSTM_RUNNER_NPY_H
