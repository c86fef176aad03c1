//===- UndefinedRoots.h - Where a tensor was built from nothing -*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Passes that have a value computed in place of a temporary (a slice of the
// tensor it is then inserted into) trace the value back through the
// destination operands it was built in to the tensor without contents it
// started from; that operand can take the slice instead.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_UNDEFINEDROOTS_H
#define LSTM_CONVERSION_UTILS_UNDEFINEDROOTS_H

#include "mlir/IR/Value.h"

namespace mlir::lstm {

/// Whether `v` holds nothing defined: a tensor.empty, or a
/// bufferization.alloc_tensor without contents.
bool isUndefinedTensor(Value v);

/// The operand through which `v` was built in an undefined tensor: following
/// the destination of each tensor.insert_slice and the init of each linalg
/// op whose body does not read it, back to the operand that takes the
/// tensor.empty (or content-less alloc_tensor). Null if the chain ends
/// elsewhere, or if `singleUse` and a value on the way other than `v` has
/// other uses.
OpOperand *getUndefinedRoot(Value v, bool singleUse = false);

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_UTILS_UNDEFINEDROOTS_H
