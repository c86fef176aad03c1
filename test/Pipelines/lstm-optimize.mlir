// --lstm-optimize runs the four passes, each switchable; its output is lstm
// IR that both lowerings accept.
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-optimize | FileCheck %s --check-prefix=ALL
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-optimize=fuse=false | FileCheck %s --check-prefix=NOFUSE
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-optimize="combine=false hoist=false fuse=false wavefront=false" | FileCheck %s --check-prefix=NONE
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm-stack3.mlir --lstm-optimize | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm-stack3.mlir --lstm-optimize=wavefront=false | FileCheck %s --check-prefix=NOWAVE
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-optimize --lstm-to-cpu | FileCheck %s --check-prefix=LOWERED
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm-stack3.mlir --lstm-optimize --lstm-to-nvvm | FileCheck %s --check-prefix=LOWERED

// The LSTM: one hoisted GEMM over all T·B rows of x (combined and hoisted),
// a layer reading its projection, one GEMM on h and one fused region per
// step.
// ALL: tensor.collapse_shape
// ALL: lstm.gate identity({{.*}} : tensor<?x4xf32>) weights({{.*}} : tensor<32x4xf32>) {{.*}}-> tensor<?x32xf32>
// ALL: tensor.expand_shape
// ALL: lstm.layer forward ins(%{{.*}} : tensor<?x?x32xf32>)
// ALL: lstm.gate identity({{.*}} : tensor<?x8xf32>) weights({{.*}} : tensor<32x8xf32>) -> tensor<?x32xf32>
// ALL-COUNT-1: lstm.pointwise ins
// ALL-NOT: lstm.pointwise ins
// ALL-NOT: lstm.gate sigmoid
// ALL: lstm.yield

// NOFUSE: lstm.layer forward ins(%{{.*}} : tensor<?x?x32xf32>)
// NOFUSE-NOT: lstm.pointwise
// NOFUSE: lstm.gate sigmoid

// NONE: lstm.layer forward ins(%{{.*}} : tensor<?x?x4xf32>)
// NONE-COUNT-3: lstm.gate sigmoid
// NONE-NOT: lstm.pointwise

// The stack: no lstm.layer is left, one loop over the diagonals whose
// batched cell is fused into one lstm.pointwise over [L, B, N], with the
// layers' biases as [L, N].
// STACK-NOT: lstm.layer {{forward|reverse}}
// STACK: scf.for
// STACK-NOT: lstm.layer {{forward|reverse}}
// STACK: lstm.gate identity({{.*}} : tensor<3x?x8xf32>) weights({{.*}} : tensor<3x32x8xf32>) -> tensor<3x?x32xf32>
// STACK-NOT: lstm.gate sigmoid
// STACK: lstm.pointwise ins({{.*}} : tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<3x8xf32>,
// STACK-NOT: lstm.pointwise ins
// STACK-NOT: arith.mulf {{.*}} : tensor
// STACK: scf.yield

// Without the wavefront: three layers, each combined, hoisted and fused.
// NOWAVE-COUNT-3: lstm.pointwise ins
// NOWAVE-NOT: scf.for

// LOWERED: llvm.func @forward
