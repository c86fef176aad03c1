// A syntax error is reported with its location.
// RUN: not lstm-run %s --random-inputs 2>&1 | FileCheck %s

func.func @forward(%x: tensor<?x?x4xf32>) -> tensor<?x?x4xf32> {
  // CHECK: syntax-error.mlir:[[@LINE+1]]:{{[0-9]+}}: error: use of undeclared SSA value name
  return %y : tensor<?x?x4xf32>
}
