//===- CudaApi.h - The CUDA driver and runtime, loaded at run time -*- C++
//-*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The runner links neither the CUDA driver nor the project's CUDA runtime:
// the CPU path runs where there is no GPU and no CUDA toolkit was found at
// build time. For CUDA both are opened with RTLD_GLOBAL (CudaApi.cpp),
// since ExecutionEngine resolves the external symbols of the JIT-compiled
// code (mgpuModuleLoad, lstmRuntimeGemm, ...) in the process's global
// scope; the functions the runner calls itself are these. Private to
// lib/Runner.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_RUNNER_CUDAAPI_H
#define LSTM_RUNNER_CUDAAPI_H

#include "lstm/Runtime/CudaRuntime.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace mlir::lstm::runner {

/// CUresult; cuda.h is not needed to build the runner.
using CudaResult = int;

struct CudaApi {
  // The driver.
  CudaResult (*cuInit)(unsigned) = nullptr;
  CudaResult (*cuDeviceGetCount)(int *) = nullptr;
  CudaResult (*cuGetErrorName)(CudaResult, const char **) = nullptr;
  CudaResult (*cuGetErrorString)(CudaResult, const char **) = nullptr;
  // The runtime: the mgpu* ABI of gpu-to-llvm (CUstream is a pointer) and
  // CudaRuntime.h.
  void *(*mgpuStreamCreate)() = nullptr;
  void *(*mgpuMemAlloc)(uint64_t, void *, bool) = nullptr;
  void (*mgpuMemcpy)(void *, void *, size_t, void *) = nullptr;
  decltype(&::lstmRuntimeSynchronize) lstmRuntimeSynchronize = nullptr;
  decltype(&::lstmRuntimeLastError) lstmRuntimeLastError = nullptr;
  decltype(&::lstmRuntimeClearError) lstmRuntimeClearError = nullptr;
  decltype(&::lstmRuntimeFree) lstmRuntimeFree = nullptr;
};

/// The functions loadCudaRuntime resolved (null before).
const CudaApi &cudaApi();

/// "call failed: CUDA_ERROR_NAME (text)" for a driver call the runner made.
std::string cudaFailure(const char *call, CudaResult status);

/// The failure the runtime recorded, as an error of `what`, or success. The
/// record is cleared, so that the next call starts clean.
llvm::Error takeRuntimeFailure(const llvm::Twine &what);

} // namespace mlir::lstm::runner

#endif // LSTM_RUNNER_CUDAAPI_H
