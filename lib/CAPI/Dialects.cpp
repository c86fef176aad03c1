//===- Dialects.cpp - C API of the lstm dialect ---------------------------===//

#include "lstm-c/Dialects.h"

#include "lstm/Dialect/LSTM/IR/LSTMDialect.h"
#include "mlir/CAPI/Registration.h"

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(LSTM, lstm, mlir::lstm::LSTMDialect)
