//===- LSTMToLinalg.h - Lower the lstm dialect to linalg --------*- C++ -*-===//

#ifndef LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H
#define LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class RewritePatternSet;

namespace lstm {

#define GEN_PASS_DECL_CONVERTLSTMTOLINALGPASS
#include "lstm/Conversion/Passes.h.inc"

/// Patterns that lower `lstm.layer` to `scf.for`, and `lstm.gate` and
/// `lstm.one_minus` to `linalg.generic`.
void populateLSTMToLinalgPatterns(RewritePatternSet &patterns);

} // namespace lstm
} // namespace mlir

#endif // LSTM_CONVERSION_LSTMTOLINALG_LSTMTOLINALG_H
