//===-- lstm-c/Text.h - The compiler on IR text, for foreign callers -*- C -*-//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// The compiler for callers that hold no MLIR objects: IR crosses as text,
// options as strings, failures as the diagnostics text. Every function
// creates its own context (with the lstm dialects, its diagnostics
// collected), so that it needs no other call before it; the passes are
// registered on the first call. Plain C types only, so that an FFI (Python's
// ctypes, in lstmc) binds it without a compiled extension: the same library
// serves every version of the caller's language.
//
// Strings that these functions return are allocated with malloc; release
// them with lstmTextFree. On failure *error is set (when error is not null)
// to "WHAT:\nDIAGNOSTICS", one "LOCATION: error: MESSAGE" line per
// diagnostic, notes indented under it.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_C_TEXT_H
#define LSTM_C_TEXT_H

#include "mlir-c/Support.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Options of lstmTextCompile: a null or empty string takes the compiler's
/// default (lstmTextDefaultOptions; runtimeLibDir: the build tree's lib/).
typedef struct {
  const char *target;          // "cpu" or "cuda"
  const char *chip;            // e.g. "sm_90"
  const char *features;        // e.g. "+ptx81"
  const char *cudaPath;        // the CUDA toolkit (ptxas, libdevice)
  const char *cudaLibDir;      // the directory of libcuda.so to link against
  const char *runtimeLibDir;   // the runtimes (liblstm_*_runtime_static.a)
  const char *prePasses;       // a textual pipeline on the lstm IR
  const char *computeType;     // "fp32", "tf32" or "bf16"
  int gradients;               // 1: export NAME_grad/_train/_backward; 2:
                               // NAME_train/_backward only, NAME a call of
                               // NAME_train (lstm-compile --grad-function=false
                               // --forward-through-train); 0: none
  int persistent;              // non-zero: persistent kernels (lstm-compile
                               // --persistent)
  long long chunkBytes;        // cpu: hoisted input projections this many
                               // bytes of steps a thread at a time
                               // (lstm-compile --chunk-bytes); 0 or
                               // negative: whole
  int hoistMinThreads;         // cpu: the least number of threads that runs
                               // the hoisted input projections hoisted
                               // (lstm-compile --hoist-min-threads); 0: the
                               // default (3); 1 or negative: always hoisted
  int wholeBatch;              // cpu: non-zero keeps each layer's batch
                               // whole (lstm-compile --split-batch=false);
                               // 0: the default, layers with independent rows
                               // on parts of the batch, a thread each
  int noPerStepFallback;       // cuda, with persistent: non-zero compiles no
                               // per-step lowering beside the kernels
                               // (lstm-compile --per-step-fallback=false); a
                               // run that needs it fails, saying so
  int noPersistentTensorCores; // cuda, with persistent: non-zero keeps the
                               // kernels' products on fp32 multiply-adds
                               // (lstm-compile
                               // --persistent-tensor-cores=false)
  int setPersistentSplitDepth; // non-zero: persistentSplitDepth is read;
                               // 0: the default (chosen)
  int persistentSplitDepth;    // with tensor cores, lstm-compile
                               // --persistent-split-depth: -1 chosen, 0
                               // only where the weights would not fit, a
                               // power of two up to 32 (1: none)
  int noSplitTF32Gemms;        // cuda, fp32: non-zero keeps a sequence's
                               // products on fp32 FMAs (lstm-compile
                               // --split-tf32-gemms=false); 0: the
                               // default, 3xTF32 on tensor cores
} LstmTextCompileOptions;

/// Parses and verifies `ir` (`size` bytes); 0 on success.
MLIR_CAPI_EXPORTED int lstmTextVerify(const char *ir, size_t size,
                                      char **error);

/// Parses `ir`, runs the textual pass pipeline `pipeline` (on
/// builtin.module; empty: none) and sets *output to the printed module; 0
/// on success.
MLIR_CAPI_EXPORTED int lstmTextTransform(const char *ir, size_t size,
                                         const char *pipeline, char **output,
                                         char **error);

/// Compiles `ir` to the shared library `output` (lstm-compile in-process);
/// 0 on success.
MLIR_CAPI_EXPORTED int lstmTextCompile(const char *ir, size_t size,
                                       const char *output,
                                       const LstmTextCompileOptions *options,
                                       char **error);

/// The compiler's defaults, as JSON: {"target", "chip", "features",
/// "compute_type"}.
MLIR_CAPI_EXPORTED char *lstmTextDefaultOptions(void);

/// Releases a string returned by the functions above (null is ignored).
MLIR_CAPI_EXPORTED void lstmTextFree(char *str);

#ifdef __cplusplus
}
#endif

#endif // LSTM_C_TEXT_H
