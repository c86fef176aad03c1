//===- LSTMPlugin.cpp - The lstm dialect and passes for mlir-opt ----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// One shared object with both plugin entry points, loaded by the stock tool:
//
//   mlir-opt --load-dialect-plugin=LSTMPlugin.so \
//            --load-pass-plugin=LSTMPlugin.so in.mlir \
//            --pass-pipeline='builtin.module(lstm-to-cpu)'
//
// The dialect hook adds to the tool's registry what registerLSTMDialect()
// and registerLSTMExtensions() add; the pass hook registers the passes and
// the pipelines. They are kept apart so that, given both flags, the tool
// registers nothing twice (MLIR built with assertions rejects a pipeline
// name registered twice).
// mlir-opt makes its pass flags before it loads plugins: name the passes in
// --pass-pipeline='builtin.module(lstm-to-cpu)', not as --lstm-to-cpu.
//
//===----------------------------------------------------------------------===//

#include "lstm/Registration.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "llvm/Config/llvm-config.h"

using namespace mlir;

extern "C" LLVM_ATTRIBUTE_WEAK DialectPluginLibraryInfo
mlirGetDialectPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "LSTM", LLVM_VERSION_STRING,
          [](DialectRegistry *registry) {
            lstm::registerLSTMDialect(*registry);
            lstm::registerLSTMExtensions(*registry);
          }};
}

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "LSTMPasses", LLVM_VERSION_STRING, []() {
            lstm::registerLSTMPasses();
            lstm::registerLSTMPipelines();
          }};
}
