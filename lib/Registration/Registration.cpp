//===- Registration.cpp - Entry points to register the project ------------===//

#include "lstm/Registration.h"

#include "lstm/Conversion/Passes.h"
#include "lstm/Dialect/LSTM/IR/LSTMDialect.h"
#include "lstm/Dialect/LSTM/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

void lstm::registerLSTMDialect(DialectRegistry &registry) {
  registry.insert<LSTMDialect, linalg::LinalgDialect, scf::SCFDialect>();
}

void lstm::registerLSTMPasses() {
  registerLSTMConversionPasses();
  registerLSTMTransformsPasses();
}

void lstm::registerAllLSTM(DialectRegistry &registry) {
  registerLSTMDialect(registry);
  registerLSTMPasses();
  registerLSTMPipelines();
}
