//===- MergeGPUModules.h - All kernels into one gpu.module ------*- C++ -*-===//

#ifndef LSTM_CONVERSION_MERGEGPUMODULES_MERGEGPUMODULES_H
#define LSTM_CONVERSION_MERGEGPUMODULES_MERGEGPUMODULES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
namespace lstm {

#define GEN_PASS_DECL_MERGEGPUMODULESPASS
#include "lstm/Conversion/Passes.h.inc"

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_MERGEGPUMODULES_MERGEGPUMODULES_H
