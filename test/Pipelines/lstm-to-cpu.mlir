// The CPU pipeline leaves nothing but the LLVM dialect.
// RUN: lstm-opt %S/../Runner/Inputs/rnn.mlir --lstm-to-cpu | FileCheck %s
// RUN: lstm-opt %examples/lstm.mlir --lstm-to-cpu | FileCheck %s
// RUN: lstm-opt %examples/varlen.mlir --lstm-to-cpu | FileCheck %s
// RUN: lstm-opt %examples/bidirectional.mlir --lstm-to-cpu | FileCheck %s

// CHECK: llvm.func @forward
// CHECK-NOT: {{ (lstm|linalg|tensor|memref|scf|arith|math|cf|bufferization|func)\.}}
