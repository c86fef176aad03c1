//===- LSTMDialect.cpp - The lstm dialect ---------------------------------===//

#include "lstm/Dialect/LSTM/IR/LSTMDialect.h"
#include "lstm/Dialect/LSTM/IR/LSTMOps.h"

using namespace mlir;
using namespace mlir::lstm;

#include "lstm/Dialect/LSTM/IR/LSTMOpsDialect.cpp.inc"

void LSTMDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "lstm/Dialect/LSTM/IR/LSTMOps.cpp.inc"
      >();
}
