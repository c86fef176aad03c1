//===- JitRunner.h - JIT-compile a module and call it -----------*- C++ -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Lowers a tensor-level module with the `lstm-to-cpu` or `lstm-to-nvvm`
// pipeline, JIT-compiles it with mlir::ExecutionEngine and calls one of its
// functions on host arrays (copied to the GPU and back for CUDA). Behind
// `lstm-run`.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_RUNNER_JITRUNNER_H
#define LSTM_RUNNER_JITRUNNER_H

#include "lstm/Pipelines/Pipelines.h"
#include "lstm/Runner/Npy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <memory>

namespace mlir {
class ExecutionEngine;

namespace lstm {

/// One argument or result of the entry function: element type and shape,
/// `ShapedType::kDynamic` where the extent is only known at call time.
struct TensorSpec {
  DType dtype;
  std::vector<int64_t> shape;
  /// Prints like an MLIR tensor type ("tensor<?x64xf32>").
  std::string str() const;
};

struct Signature {
  std::vector<TensorSpec> args;
  std::vector<TensorSpec> results;
};

/// The signature of function `entry` in `module`. Fails, with a diagnostic at
/// the function (or the module), when the function is missing or takes or
/// returns anything but ranked tensors of f32, f64, i32 or i64.
FailureOr<Signature> getSignature(ModuleOp module, StringRef entry);

/// Checks `inputs` against `sig` (count, dtype, rank, static extents); the
/// message names the offending argument.
llvm::Error checkInputs(const Signature &sig, llvm::ArrayRef<Array> inputs,
                        llvm::ArrayRef<std::string> names = {});

/// Runs the textual pass pipeline `pipeline` (on builtin.module; nothing
/// when empty) on `module`: what `--pre-passes` does before the lowering,
/// and before the entry is looked up (lstm-differentiate adds entries). The
/// error says whether the pipeline did not parse or failed (the passes'
/// diagnostics go to the context's handler).
llvm::Error runPrePasses(ModuleOp module, StringRef pipeline);

/// Where a compiled function runs.
enum class Device { CPU, CUDA };

/// How CompiledFunction::compile lowers a module.
struct JitOptions {
  Device device = Device::CPU;
  /// Passes run on the lstm IR before the lowering, as a textual pipeline on
  /// builtin.module (e.g. "lstm-optimize"); empty for none.
  std::string prePasses;
  /// The GPU lowering (Device::CUDA only).
  LSTMToNVVMOptions nvvm;
  /// The CPU lowering (Device::CPU only; its runtimeChecks field is ignored
  /// for the one below).
  LSTMToCPUOptions cpu;
  /// Threads of the CPU's products (oneDNN, OpenBLAS); below 1: one per core.
  int threads = 0;
  /// Whether the generated code checks the dynamic extents of the tensor ops
  /// (LSTMToCPUOptions::runtimeChecks, for either device).
  bool runtimeChecks = true;
  /// LLVM's optimisation and code generation level of the host code, 0-3
  /// (as upstream's mlir-runner -O0 .. -O3). 3 is what lstm-compile builds;
  /// lower levels compile faster and suit runs whose speed does not matter.
  unsigned optLevel = 3;
  /// The project's CUDA runtime, liblstm_cuda_runtime.so (Device::CUDA
  /// only): the JIT-compiled code calls its `mgpu*` entry points.
  std::string cudaRuntimePath;
};

/// Loads the CUDA driver (libcuda.so.1) into the process; the error says that
/// CUDA needs an NVIDIA GPU and its driver. Does not initialise CUDA.
llvm::Error loadCudaDriver();

/// Loads the CUDA driver (loadCudaDriver) and the project's CUDA runtime at
/// `runtimePath` into the process, with their symbols global so that the JIT
/// resolves the runtime's entry points. Does not initialise CUDA: a process
/// may fork after it. Loads each library once per process; the error says
/// which library is missing and where it was looked for.
llvm::Error loadCudaRuntime(StringRef runtimePath);

/// A module compiled for the host CPU or for CUDA.
class CompiledFunction {
public:
  /// Lowers `module` in place and JIT-compiles it. Diagnostics of a failing
  /// pass go to the context's handler. For CUDA, loads the runtime first
  /// (loadCudaRuntime); compiling does not initialise CUDA (see initialize).
  static llvm::Expected<std::unique_ptr<CompiledFunction>>
  compile(ModuleOp module, StringRef entry, const JitOptions &options = {});
  ~CompiledFunction();

  const Signature &getSignature() const { return sig; }
  Device getDevice() const { return device; }

  /// Readies the compiled code to run: for CUDA, checks that there is a
  /// device and runs the module's global constructors (which load the
  /// kernels onto it), initialising CUDA in this process. The first call()
  /// does it when it has not been done; calling it first keeps that one-time
  /// work out of the call's time.
  llvm::Error initialize();

  /// Calls the function. `inputs` must have passed checkInputs. For CUDA the
  /// inputs are copied to the device and the results back, and the call
  /// waits for the GPU; a CUDA failure is an error naming the failed call.
  llvm::Expected<std::vector<Array>> call(llvm::ArrayRef<Array> inputs);

private:
  CompiledFunction() = default;
  llvm::Expected<std::vector<Array>> callOnCuda(llvm::ArrayRef<Array> inputs);

  Signature sig;
  Device device = Device::CPU;
  bool initialized = false;
  std::unique_ptr<ExecutionEngine> engine;
  void (*packed)(void **) = nullptr;
};

} // namespace lstm
} // namespace mlir

#endif // LSTM_RUNNER_JITRUNNER_H
