//===- Compiler.cpp - Compile a module to a shared library from C ---------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm-c/Compiler.h"
#include "lstm/Compiler/Compiler.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;

/// The C++ API's defaults, whose strings live as long as the program.
static const lstm::CompileOptions &cppDefaults() {
  static const lstm::CompileOptions defaults;
  return defaults;
}

static MlirStringRef wrapString(const std::string &s) {
  return mlirStringRefCreate(s.data(), s.size());
}

LstmCompileOptions lstmCompileOptionsDefault(void) {
  const lstm::CompileOptions &defaults = cppDefaults();
  LstmCompileOptions options;
  MlirStringRef empty = mlirStringRefCreate(nullptr, 0);
  options.target = wrapString(defaults.target);
  options.chip = wrapString(defaults.chip);
  options.features = wrapString(defaults.features);
  options.cudaPath = options.cudaLibDir = options.runtimeLibDir =
      options.prePasses = empty;
  options.computeType = wrap(stringifyGemmComputeType(defaults.computeType));
  options.cublas = defaults.cublas;
  options.cublasMinSize = defaults.cublasMinSize;
  options.keepObject = defaults.keepObject;
  options.gradients = defaults.gradients;
  options.persistent = defaults.persistent;
  options.perStepFallback = defaults.perStepFallback;
  options.gradFunction = defaults.gradFunction;
  options.forwardThroughTrain = defaults.forwardThroughTrain;
  options.chunkBytes = defaults.chunkBytes;
  options.hoistMinThreads = defaults.hoistMinThreads;
  options.splitBatch = defaults.splitBatch;
  options.persistentTensorCores = defaults.persistentTensorCores;
  options.persistentSplitDepth = defaults.persistentSplitDepth;
  options.splitTF32Gemms = defaults.splitTF32Gemms;
  options.verifyEachPass = defaults.verifyEachPass;
  return options;
}

/// `value`, or `fallback` where the caller left it empty.
static std::string orDefault(MlirStringRef value, StringRef fallback) {
  return value.length ? unwrap(value).str() : fallback.str();
}

MlirLogicalResult
lstmCompileToSharedLibrary(MlirModule module, MlirStringRef output,
                           const LstmCompileOptions *options) {
  LstmCompileOptions given = options ? *options : lstmCompileOptionsDefault();
  const lstm::CompileOptions &defaults = cppDefaults();
  lstm::CompileOptions o;
  o.target = orDefault(given.target, defaults.target);
  o.chip = orDefault(given.chip, defaults.chip);
  o.features = orDefault(given.features, defaults.features);
  o.cudaPath = orDefault(given.cudaPath, "");
  o.cudaLibDir = orDefault(given.cudaLibDir, "");
  o.runtimeLibDir = orDefault(given.runtimeLibDir, "");
  o.prePasses = orDefault(given.prePasses, "");
  ModuleOp moduleOp = unwrap(module);
  if (given.computeType.length) {
    std::optional<lstm::GemmComputeType> computeType =
        lstm::symbolizeGemmComputeType(unwrap(given.computeType));
    if (!computeType) {
      emitError(moduleOp.getLoc())
          << "unknown compute type '" << unwrap(given.computeType)
          << "' (expected " << lstm::gemmComputeTypeSpellings() << ")";
      return mlirLogicalResultFailure();
    }
    o.computeType = *computeType;
  }
  o.cublas = given.cublas;
  o.cublasMinSize = given.cublasMinSize;
  o.keepObject = given.keepObject;
  o.gradients = given.gradients;
  o.persistent = given.persistent;
  o.perStepFallback = given.perStepFallback;
  o.gradFunction = given.gradFunction;
  o.forwardThroughTrain = given.forwardThroughTrain;
  o.chunkBytes = given.chunkBytes;
  o.hoistMinThreads = given.hoistMinThreads;
  o.splitBatch = given.splitBatch;
  o.persistentTensorCores = given.persistentTensorCores;
  o.persistentSplitDepth = given.persistentSplitDepth;
  o.splitTF32Gemms = given.splitTF32Gemms;
  o.verifyEachPass = given.verifyEachPass;

  // C callers see diagnostics only: the pipeline parser's message becomes
  // part of the error.
  std::string parserOutput;
  llvm::raw_string_ostream parserStream(parserOutput);
  llvm::Error err =
      lstm::compileToSharedLibrary(moduleOp, unwrap(output), o, parserStream);
  if (!err)
    return mlirLogicalResultSuccess();
  InFlightDiagnostic diag = emitError(moduleOp.getLoc())
                            << llvm::toString(std::move(err));
  StringRef reason = StringRef(parserOutput).split('\n').first;
  if (StringRef why = reason.split("error: ").second; !why.empty())
    diag << ": " << why;
  return mlirLogicalResultFailure();
}
