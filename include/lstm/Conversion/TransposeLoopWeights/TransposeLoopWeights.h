//===- TransposeLoopWeights.h - A loop's weights reduction-major -*- C++
//-*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_TRANSPOSELOOPWEIGHTS_TRANSPOSELOOPWEIGHTS_H
#define LSTM_CONVERSION_TRANSPOSELOOPWEIGHTS_TRANSPOSELOOPWEIGHTS_H

#include "lstm/Conversion/Utils/GpuTargetOptions.h"
#include "mlir/Pass/Pass.h"

namespace mlir::lstm {

#define GEN_PASS_DECL_TRANSPOSELOOPWEIGHTSPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_TRANSPOSELOOPWEIGHTS_TRANSPOSELOOPWEIGHTS_H
