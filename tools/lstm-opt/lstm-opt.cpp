//===- lstm-opt.cpp - mlir-opt with the lstm dialect and passes -----------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception

#include "lstm/Registration.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#ifdef LSTM_INCLUDE_TESTS
namespace mlir::lstm::test {
void registerTestLSTMTransformsPass();
} // namespace mlir::lstm::test
#endif

int main(int argc, char **argv) {
  mlir::registerAllPasses();
#ifdef LSTM_INCLUDE_TESTS
  mlir::lstm::test::registerTestLSTMTransformsPass();
#endif
  mlir::DialectRegistry registry;
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::lstm::registerAllLSTM(registry);
  // gpu-module-to-binary translates kernels to LLVM IR inside the pipeline.
  mlir::registerAllToLLVMIRTranslations(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "LSTM optimizer driver\n", registry));
}
