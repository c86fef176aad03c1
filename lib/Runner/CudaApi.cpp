//===- CudaApi.cpp - The CUDA driver and runtime, loaded at run time -----===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "CudaApi.h"

#include "lstm/Runner/JitRunner.h"
#include "llvm/ADT/StringRef.h"

#include <dlfcn.h>

using namespace mlir;
using namespace mlir::lstm;
using namespace mlir::lstm::runner;

static llvm::Error makeError(const llvm::Twine &msg) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), msg);
}

/// Filled by loadCudaRuntime; `cudaApiLoaded` once every entry is resolved.
static CudaApi loadedApi;
static bool cudaApiLoaded = false;

template <typename Fn>
static llvm::Error resolve(void *library, StringRef libraryName,
                           const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (!fn)
    return makeError(libraryName + " lacks " + name +
                     " (is it the project's CUDA runtime of this build?)");
  return llvm::Error::success();
}

/// The driver's handle once loaded.
static void *cudaDriver = nullptr;

llvm::Error mlir::lstm::loadCudaDriver() {
  if (cudaDriver)
    return llvm::Error::success();
  cudaDriver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
  if (!cudaDriver)
    return makeError("--device=cuda needs an NVIDIA GPU and its driver: the "
                     "CUDA driver library libcuda.so.1 cannot be loaded (" +
                     llvm::Twine(dlerror()) + ")");
  return llvm::Error::success();
}

llvm::Error mlir::lstm::loadCudaRuntime(StringRef runtimePath) {
  if (cudaApiLoaded)
    return llvm::Error::success();
  // The driver first: without it the runtime (which needs it) cannot load
  // either, and "no driver" is the message that helps.
  if (llvm::Error err = loadCudaDriver())
    return err;
  void *driver = cudaDriver;
  void *runtime = dlopen(runtimePath.str().c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!runtime)
    return makeError("cannot load the CUDA runtime library " + runtimePath +
                     ": " + dlerror());
  CudaApi api;
#define LSTM_RESOLVE(library, libraryName, name)                               \
  if (llvm::Error err = resolve(library, libraryName, #name, api.name))        \
    return err;
  LSTM_RESOLVE(driver, "libcuda.so.1", cuInit)
  LSTM_RESOLVE(driver, "libcuda.so.1", cuDeviceGetCount)
  LSTM_RESOLVE(driver, "libcuda.so.1", cuGetErrorName)
  LSTM_RESOLVE(driver, "libcuda.so.1", cuGetErrorString)
  LSTM_RESOLVE(runtime, runtimePath, mgpuStreamCreate)
  LSTM_RESOLVE(runtime, runtimePath, mgpuMemAlloc)
  LSTM_RESOLVE(runtime, runtimePath, mgpuMemcpy)
  LSTM_RESOLVE(runtime, runtimePath, lstmRuntimeSynchronize)
  LSTM_RESOLVE(runtime, runtimePath, lstmRuntimeLastError)
  LSTM_RESOLVE(runtime, runtimePath, lstmRuntimeClearError)
  LSTM_RESOLVE(runtime, runtimePath, lstmRuntimeFree)
#undef LSTM_RESOLVE
  loadedApi = api;
  cudaApiLoaded = true;
  return llvm::Error::success();
}

std::string runner::cudaFailure(const char *call, CudaResult status) {
  const char *name = nullptr, *text = nullptr;
  loadedApi.cuGetErrorName(status, &name);
  loadedApi.cuGetErrorString(status, &text);
  // A driver that fails everything (the toolkit's stub) names nothing.
  std::string message = std::string(call) + " failed: " +
                        (name ? name : "CUDA error " + std::to_string(status));
  return text ? message + " (" + text + ")" : message;
}

llvm::Error runner::takeRuntimeFailure(const llvm::Twine &what) {
  const char *failure = loadedApi.lstmRuntimeLastError();
  if (!failure)
    return llvm::Error::success();
  std::string message = (what + ": " + failure).str();
  loadedApi.lstmRuntimeClearError();
  // The fatbin holds code for --chip only; the driver then finds nothing to
  // run on another architecture.
  if (StringRef(message).contains("CUDA_ERROR_NO_BINARY_FOR_GPU") ||
      StringRef(message).contains("CUDA_ERROR_UNSUPPORTED_PTX_VERSION"))
    message += " (does --chip match this GPU?)";
  return makeError(message);
}

const CudaApi &runner::cudaApi() { return loadedApi; }
