//===- GpuTargetOptions.h - The GPU target's options -----------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The GPU target's option types and defaults, defined once and used by
// lstm-gemm-to-cublas, the --lstm-to-nvvm pipeline, the compiler library,
// the tools (lstm-compile, lstm-run), the C API and through it lstmc: the
// GEMM arithmetic as an enum (parsed by llvm::cl through
// gemmComputeTypeValues(), by string APIs through symbolizeGemmComputeType)
// and the default chip and PTX features.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_CONVERSION_UTILS_GPUTARGETOPTIONS_H
#define LSTM_CONVERSION_UTILS_GPUTARGETOPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <cstdint>
#include <optional>

namespace mlir::lstm {

/// The GPU architecture and PTX features compiled for by default (sm_90
/// needs PTX 7.8 or later; kernel parameters above 4352 bytes, as a
/// persistent kernel of a stack of three peephole layers with gradients
/// takes, need PTX 8.1 and a CUDA 12.1 driver).
inline constexpr llvm::StringLiteral kDefaultGpuChip = "sm_90";
inline constexpr llvm::StringLiteral kDefaultPtxFeatures = "+ptx81";

/// The arithmetic of the GEMMs on the GPU. The values are the runtime's
/// codes (LSTMRuntimeComputeType in lstm/Runtime/CudaRuntime.h), which the
/// generated calls pass on.
enum class GemmComputeType : int32_t {
  /// fp32 operands, fp32 arithmetic (no TF32).
  fp32 = 0,
  /// fp32 operands, TF32 tensor-core arithmetic.
  tf32 = 1,
  /// bf16 operands (rounded from fp32), fp32 accumulation.
  bf16 = 2,
};

/// The option spelling of `type`: "fp32", "tf32" or "bf16".
llvm::StringRef stringifyGemmComputeType(GemmComputeType type);

/// The compute type spelt `name`, or nullopt.
std::optional<GemmComputeType> symbolizeGemmComputeType(llvm::StringRef name);

/// "fp32, tf32 or bf16", for messages about a misspelt name.
llvm::StringRef gemmComputeTypeSpellings();

/// The version of an "sm_XY" (or "sm_XYa") chip, XY; 0 if it is not of
/// that form.
int gpuChipVersion(llvm::StringRef chip);

/// The values of a GemmComputeType command-line or pass option, with their
/// descriptions (pass as the option's modifier).
llvm::cl::ValuesClass gemmComputeTypeValues();

} // namespace mlir::lstm

#endif // LSTM_CONVERSION_UTILS_GPUTARGETOPTIONS_H
