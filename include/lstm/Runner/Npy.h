//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
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

  int64_t numElements() const;
  /// The shape written the way MLIR writes it ("4x8").
  std::string shapeString() const;
};

/// Reads `path`; fails with a message naming the file for anything that is not
/// a C-order little-endian array of a supported dtype.
llvm::Expected<Array> readNpy(llvm::StringRef path);

/// Writes `array` to `path` in format version 1.0.
llvm::Error writeNpy(llvm::StringRef path, const Array &array);

} // namespace mlir::lstm

#endif // LSTM_RUNNER_NPY_H
