//===- LSTMOps.h - Operations of the lstm dialect ---------------*- C++ -*-===//

#ifndef LSTM_DIALECT_LSTM_IR_LSTMOPS_H
#define LSTM_DIALECT_LSTM_IR_LSTMOPS_H

#include "lstm/Dialect/LSTM/IR/LSTMDialect.h"
#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "lstm/Dialect/LSTM/IR/LSTMOpsEnums.h.inc"

#define GET_OP_CLASSES
#include "lstm/Dialect/LSTM/IR/LSTMOps.h.inc"

#endif // LSTM_DIALECT_LSTM_IR_LSTMOPS_H
