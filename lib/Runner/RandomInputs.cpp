//===- RandomInputs.cpp - Random arguments for a signature ----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Runner/RandomInputs.h"

#include "mlir/IR/BuiltinTypeInterfaces.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

using namespace mlir;
using namespace mlir::lstm;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// The shapes of the arrays (dtype and shape, no data yet). Their sizes are
/// checked, alone and together, before anything is allocated.
static llvm::Expected<std::vector<Array>>
shapeRandomInputs(const Signature &sig, const RandomInputOptions &options) {
  std::vector<Array> arrays(sig.args.size());
  uint64_t total = 0;
  for (size_t i = 0; i < sig.args.size(); ++i) {
    const TensorSpec &spec = sig.args[i];
    Array &a = arrays[i];
    a.dtype = spec.dtype;
    if (i < options.shapes.size() && !options.shapes[i].empty()) {
      llvm::SmallVector<llvm::StringRef> dims;
      llvm::StringRef(options.shapes[i]).split(dims, 'x');
      for (llvm::StringRef d : dims) {
        int64_t v;
        if (d.getAsInteger(10, v) || v < 0)
          return makeError("malformed --shapes entry '" + options.shapes[i] +
                           "' (extents are integers from 0 to 2^63 - 1)");
        a.shape.push_back(v);
      }
    } else {
      for (int64_t d : spec.shape)
        a.shape.push_back(ShapedType::isDynamic(d) ? options.dynamicSize : d);
    }
    llvm::Expected<uint64_t> bytes = a.byteSize();
    if (!bytes)
      return makeError("argument #" + llvm::Twine(i) + " (--random-inputs): " +
                       llvm::toString(bytes.takeError()));
    // Each size is below 2^63 and the total stays below the limit: no
    // overflow.
    total += *bytes;
    if (total > memoryLimit())
      return makeError("the random inputs need " + formatBytes(total) +
                       " in all (argument #" + llvm::Twine(i) + " of shape " +
                       a.shapeString() + ": " + formatBytes(*bytes) +
                       "), more than the " + formatBytes(memoryLimit()) +
                       " of memory this process may have");
  }
  return arrays;
}

/// Allocates `a` and fills it from `rng`: floats from `uni`, integers from
/// `len`.
static llvm::Error fill(Array &a, size_t number, std::mt19937_64 &rng,
                        std::uniform_real_distribution<double> &uni,
                        std::uniform_int_distribution<int64_t> &len) {
  if (llvm::Error err =
          a.allocate("argument #" + llvm::Twine(number) + " (--random-inputs)"))
    return err;
  for (int64_t e = 0; e < a.numElements(); ++e) {
    char *p = a.data.data() + e * dtypeSize(a.dtype);
    switch (a.dtype) {
    case DType::f32: {
      float v = uni(rng);
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::f64: {
      double v = uni(rng);
      std::memcpy(p, &v, 8);
      break;
    }
    case DType::i32: {
      int32_t v = len(rng);
      std::memcpy(p, &v, 4);
      break;
    }
    case DType::i64: {
      int64_t v = len(rng);
      std::memcpy(p, &v, 8);
      break;
    }
    }
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<Array>>
mlir::lstm::drawRandomInputs(const Signature &sig,
                             const RandomInputOptions &options) {
  if (options.dynamicSize < 0)
    return makeError("--dynamic-size must be 0 or more, not " +
                     llvm::Twine(options.dynamicSize));
  llvm::Expected<std::vector<Array>> arrays = shapeRandomInputs(sig, options);
  if (!arrays)
    return arrays.takeError();
  // The shapes against the signature before drawing: a --shapes entry of
  // the wrong rank or static extent is an error at once, not after
  // gigabytes of random numbers.
  if (llvm::Error err = checkInputs(sig, *arrays))
    return std::move(err);
  std::mt19937_64 rng(options.seed);
  for (size_t i = 0; i < arrays->size(); ++i) {
    Array &a = (*arrays)[i];
    // Floats from U(-1/sqrt(n), 1/sqrt(n)), n the argument's last extent;
    // integers (sequence lengths) from [1, extent 0 of argument #0].
    int64_t n = a.shape.empty() ? 1 : std::max<int64_t>(1, a.shape.back());
    double k = 1.0 / std::sqrt(double(n));
    std::uniform_real_distribution<double> uni(-k, k);
    const Array &first = (*arrays)[0];
    int64_t maxLen =
        first.shape.empty() ? 1 : std::max<int64_t>(1, first.shape[0]);
    std::uniform_int_distribution<int64_t> len(1, maxLen);
    if (llvm::Error err = fill(a, i, rng, uni, len))
      return std::move(err);
  }
  return arrays;
}
