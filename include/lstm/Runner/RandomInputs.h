//===- RandomInputs.h - Random arguments for a signature --------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// What `lstm-run --random-inputs` calls the entry function with: arrays of
// the entry's argument types, drawn from a seeded generator, so that a run
// needs no input files and is the same from one run to the next.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_RUNNER_RANDOMINPUTS_H
#define LSTM_RUNNER_RANDOMINPUTS_H

#include "lstm/Runner/JitRunner.h"
#include "lstm/Runner/Npy.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace mlir::lstm {

/// How drawRandomInputs shapes and draws the arrays.
struct RandomInputOptions {
  /// The seed of the generator (std::mt19937_64).
  unsigned seed = 0;
  /// The extent of every dynamic (`?`) extent, 0 or more.
  int64_t dynamicSize = 4;
  /// Argument i's full shape as "50x32x64" where shapes[i] is given and not
  /// empty; the signature's shape, `dynamicSize` for each `?`, otherwise.
  std::vector<std::string> shapes;
};

/// Random arrays for the arguments of `sig`: floats from U(-1/sqrt(n),
/// 1/sqrt(n)) with n the last extent (PyTorch's initialisation), integers
/// (sequence lengths) from [1, extent 0 of argument #0]. Fails before
/// drawing anything when `dynamicSize` is negative, a shape is malformed or
/// does not match the signature (checkInputs), or the arrays would need more
/// memory than the process may have (memoryLimit); the messages name
/// lstm-run's options (--dynamic-size, --shapes, --random-inputs).
llvm::Expected<std::vector<Array>>
drawRandomInputs(const Signature &sig, const RandomInputOptions &options);

} // namespace mlir::lstm

#endif // LSTM_RUNNER_RANDOMINPUTS_H
