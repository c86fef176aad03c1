//===- Pipelines.cpp - Run the project's pipelines from C -----------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm-c/Pipelines.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

using namespace mlir;

MlirLogicalResult lstmRunPipeline(MlirModule module, MlirStringRef pipeline) {
  ModuleOp moduleOp = unwrap(module);
  StringRef text = unwrap(pipeline);
  PassManager pm(moduleOp.getContext(), ModuleOp::getOperationName());
  // The parser reports to a stream, as "<source>:1:1: error: <why>" plus a
  // caret line; C callers see diagnostics only, so the reason becomes one.
  std::string parserOutput;
  llvm::raw_string_ostream os(parserOutput);
  if (failed(parsePassPipeline(text, pm, os))) {
    StringRef reason = StringRef(parserOutput).split('\n').first;
    if (StringRef why = reason.split("error: ").second; !why.empty())
      reason = why;
    emitError(moduleOp.getLoc())
        << "invalid pass pipeline '" << text << "': " << reason;
    return mlirLogicalResultFailure();
  }
  return wrap(pm.run(moduleOp));
}
