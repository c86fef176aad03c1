//===-- lstm-c/Compiler.h - Compile a module to a shared library --*- C -*-===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// Ahead-of-time compilation from C: what lstm-compile does, in-process, on a
// module that the caller parsed or built (lstm/Compiler/Compiler.h).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_C_COMPILER_H
#define LSTM_C_COMPILER_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The options of lstmCompileToSharedLibrary. Strings are not owned; an
/// empty string (length 0) means the default that lstmCompileOptionsDefault
/// describes.
typedef struct {
  /// "cpu" or "cuda" (default).
  MlirStringRef target;
  /// GPU architecture and PTX features (cuda): default "sm_90", "+ptx81".
  MlirStringRef chip;
  MlirStringRef features;
  /// The CUDA toolkit with ptxas and libdevice; default: the one found when
  /// the project was configured.
  MlirStringRef cudaPath;
  /// The directory of libcuda.so to link against (the driver or its stub);
  /// default: the configured toolkit's stubs.
  MlirStringRef cudaLibDir;
  /// The directory with the target's runtime (liblstm_cuda_runtime_static.a
  /// or liblstm_cpu_runtime_static.a); default: the build tree's lib/.
  MlirStringRef runtimeLibDir;
  /// Passes on the lstm IR before the lowering, a textual pipeline such as
  /// "lstm-combine-gate-gemms"; default: none.
  MlirStringRef prePasses;
  /// The GEMM arithmetic on the GPU: "fp32" (default, no TF32), "tf32" or
  /// "bf16" (GEMM operands rounded to bf16, fp32 accumulation); another name
  /// is an error.
  MlirStringRef computeType;
  /// Whether GEMMs go to cuBLAS (default true), from this m*n*k*batch up.
  bool cublas;
  int64_t cublasMinSize;
  /// Keep OUTPUT.o next to the library.
  bool keepObject;
  /// Add and export the gradient functions NAME_grad, NAME_train and
  /// NAME_backward of every public function with layers (lstm-differentiate,
  /// after lstm-combine-gate-gemms, before the pre-passes); default false.
  bool gradients;
  /// Run the layers that lstm-to-persistent handles as persistent kernels
  /// where its cost model expects them to be faster (cuda, any compute
  /// type: the kernels' products are fp32 multiply-adds, and run on tensor
  /// cores from batches of 16 under tf32, 4 under bf16 and, under fp32, as
  /// 3xTF32 from where the dot products' kernel stops (at 64 at the
  /// latest); the pre-passes should be lstm-optimize{persistent=true});
  /// default false.
  bool persistent;
  /// With `persistent`: the per-step lowering beside each kernel for the
  /// batches and GPUs the kernel does not run at (default true); false
  /// compiles faster, and a run that would need it fails with a message
  /// saying so (lstmRuntimeNeedsPerStepFallback() nonzero).
  bool perStepFallback;
  /// With `gradients`: also NAME_grad (the training forward and the backward
  /// in one function); false exports only NAME_train and NAME_backward, what
  /// a training step calls (less to compile); default true.
  bool gradFunction;
  /// With `gradients`: NAME becomes a call of NAME_train that drops the
  /// saved activations (the recurrence compiled twice, not three times;
  /// inference then stores the activations); default false.
  bool forwardThroughTrain;
  /// The CPU's hoisted input projections computed this many bytes of steps
  /// a thread at a time, just before those steps
  /// (lstm-chunk-hoisted-projections); 0 (the default) leaves them whole.
  int64_t chunkBytes;
  /// The least number of threads at run time that runs the CPU's hoisted
  /// input projections hoisted; fewer compute them in the steps
  /// (lstm-hoist-by-threads); 1 or less: always hoisted; default 3.
  int64_t hoistMinThreads;
  /// Each CPU layer whose rows are independent runs on parts of its batch,
  /// a thread each, for the whole sequence (lstm-split-batch); default true.
  bool splitBatch;
  /// With `persistent`: the kernels' products on tensor cores (sm_80 and
  /// later; 3xTF32 under fp32) from the batch the cost model starts them
  /// at; default true; false keeps fp32 multiply-adds at every batch
  /// (lstm-compile --persistent-tensor-cores).
  bool persistentTensorCores;
  /// With the kernels on tensor cores, how many warps split each tile's
  /// depth: -1 (the default) chosen; 0 only where a warp's weights would
  /// not fit its registers otherwise; a power of two up to 32 (1: none)
  /// (lstm-compile --persistent-split-depth; another value fails the
  /// compile, saying so).
  int64_t persistentSplitDepth;
  /// Under the fp32 compute type (cuda), a sequence's products (hoisted
  /// input projections, the backward's products through the weights and
  /// the weight gradients) on TF32 tensor cores with each operand split
  /// into two TF32 values (3xTF32, within fp32's tolerance); default true;
  /// false keeps fp32 FMAs (lstm-compile --split-tf32-gemms).
  bool splitTF32Gemms;
  /// Verify the IR after every pass of the lowering, as lstm-opt does;
  /// default false: once after each stage (lstm-compile --verify-each).
  bool verifyEachPass;
} LstmCompileOptions;

/// Options with every field at its default (target "cuda").
MLIR_CAPI_EXPORTED LstmCompileOptions lstmCompileOptionsDefault(void);

/// Lowers `module` in place (it ends in the LLVM dialect), translates it to
/// LLVM IR, emits an object file and links the shared library `output`, which
/// exports `_mlir_ciface_NAME` for every public function. On failure returns
/// failure and reports why as error diagnostics on the module's context (an
/// unknown target, a malformed pre-pass pipeline, a pass that fails, a failed
/// link). Needs lstmRegisterAllPasses() first when prePasses names passes.
MLIR_CAPI_EXPORTED MlirLogicalResult lstmCompileToSharedLibrary(
    MlirModule module, MlirStringRef output, const LstmCompileOptions *options);

#ifdef __cplusplus
}
#endif

#endif // LSTM_C_COMPILER_H
