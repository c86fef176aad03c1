//===- Registration.cpp - Register the project from C ---------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm-c/Registration.h"

#include "lstm/Registration.h"
#include "mlir/CAPI/IR.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void lstmRegisterAllDialects(MlirDialectRegistry registry) {
  lstm::registerLSTMDialect(*unwrap(registry));
  lstm::registerLSTMExtensions(*unwrap(registry));
}

void lstmRegisterAllPasses(void) {
  // MLIR built with assertions rejects a pipeline name registered twice;
  // bindings may well call this more than once.
  static const bool registered = [] {
    lstm::registerLSTMPasses();
    lstm::registerLSTMPipelines();
    return true;
  }();
  (void)registered;
}

void lstmRegisterTransformsPasses(void) {
  static const bool registered = [] {
    registerTransformsPasses();
    return true;
  }();
  (void)registered;
}
