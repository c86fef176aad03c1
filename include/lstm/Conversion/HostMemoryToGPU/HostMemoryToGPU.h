//===- HostMemoryToGPU.h - Move host buffers to the GPU ---------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#ifndef LSTM_CONVERSION_HOSTMEMORYTOGPU_HOSTMEMORYTOGPU_H
#define LSTM_CONVERSION_HOSTMEMORYTOGPU_HOSTMEMORYTOGPU_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace func {
class FuncOp;
} // namespace func

namespace lstm {

#define GEN_PASS_DECL_CONVERTHOSTMEMORYTOGPUPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_HOSTMEMORYTOGPU_HOSTMEMORYTOGPU_H
