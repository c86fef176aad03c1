// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-optimize=wavefront=false --lstm-to-persistent=always=true | FileCheck %s
// RUN: lstm-opt %s --lstm-optimize=wavefront=false "--lstm-schedule-report=persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: lstm-opt %S/../../../examples/varlen.mlir --lstm-differentiate --lstm-optimize=wavefront=false "--lstm-schedule-report=persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=VARLEN

// Layers with lengths (packed sequences) run as persistent kernels: a step
// t >= lengths[b] keeps row b's states and writes zeros to its outputs, as
// the per-step lowering's masks do. Two layers with the same lengths form a
// chain: one kernel, each layer's stores masked by its own step. A reverse
// layer compares the step's own index, T - 1 - t, with the lengths.

// REPORT: @two_layers layer 0 (forward): {{.*}} persistent=B<={{[0-9]+}}{{.*}} stack=0-1
// REPORT: @two_layers layer 1 (forward): {{.*}} persistent=B<={{[0-9]+}}{{.*}} stack=0-1
// VARLEN: @forward layer 0 (forward): {{.*}} persistent=B<=
// VARLEN: @forward_train layer 0 (forward): {{.*}} persistent=B<=
// VARLEN: @forward_backward layer 0 (reverse): {{.*}} persistent=B<=

// CHECK-LABEL: func.func @two_layers
// CHECK-SAME: %[[LENGTHS:[a-z0-9]+]]: tensor<?xi64>
// Each layer checks that its lengths have the batch's extent (the second
// against the stack's batch, before the shared kernel).
// CHECK: cf.assert %{{.*}}, "lstm.layer: lengths has a different size than the batch (at {{.*}}lengths.mlir:{{[0-9]+}}
// CHECK: %[[LENBUF:.*]] = bufferization.to_buffer %[[LENGTHS]] read_only
// CHECK: %[[H0:.*]] = memref.alloc(%{{.*}}) : memref<2x?x16xf32>
// CHECK: %[[Y0:.*]] = memref.alloc(%{{.*}}) : memref<?x?x16xf32>
// CHECK: cf.assert %{{.*}}, "lstm.layer: lengths has a different size than the batch (at {{.*}}lengths.mlir:{{[0-9]+}}
// CHECK: %[[H1:.*]] = memref.alloc(%{{.*}}) : memref<2x?x16xf32>
// CHECK: %[[Y1:.*]] = memref.alloc(%{{.*}}) : memref<?x?x16xf32>
// CHECK: gpu.launch
// Layer 0: the output zero, the state the old one where the step is past
// the row's length.
// CHECK: %[[LEN:.*]] = memref.load %[[LENBUF]][%[[ROW:.*]]] : memref<?xi64
// CHECK: %[[STEP:.*]] = arith.index_cast %[[T:.*]] : index to i64
// CHECK: %[[LIVE:.*]] = arith.cmpi slt, %[[STEP]], %[[LEN]] : i64
// CHECK: %[[OUT:.*]] = arith.select %[[LIVE]], %[[NEW:.*]], %cst
// CHECK: memref.store %[[OUT]], %[[Y0]][%[[T]], %[[ROW]], %[[UNIT:.*]]]
// CHECK: %[[OLD:.*]] = memref.load %[[H0]][%[[CUR:.*]], %[[ROW]], %[[UNIT]]]
// CHECK: %[[KEPT:.*]] = arith.select %[[LIVE]], %[[NEW]], %[[OLD]]
// CHECK: memref.store %[[KEPT]], %[[H0]][%{{.*}}, %[[ROW]], %[[UNIT]]]
// Layer 1: the same masks, at its own step.
// CHECK: memref.load %[[LENBUF]]
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: memref.store %{{.*}}, %[[Y1]]
// CHECK: memref.load %[[H1]]
// CHECK: arith.select
// CHECK: memref.store %{{.*}}, %[[H1]]
// CHECK: gpu.terminator
func.func @two_layers(%x: tensor<?x?x8xf32>, %lengths: tensor<?xi64>,
    %h0: tensor<?x16xf32>, %h1: tensor<?x16xf32>,
    %W0: tensor<16x8xf32>, %R0: tensor<16x16xf32>, %b0: tensor<16xf32>,
    %W1: tensor<16x16xf32>, %R1: tensor<16x16xf32>, %b1: tensor<16xf32>)
    -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x8xf32>)
      init(%h0 : tensor<?x16xf32>) lengths(%lengths : tensor<?xi64>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x16xf32>):
    %n = lstm.gate tanh (%xt, %h : tensor<?x8xf32>, tensor<?x16xf32>)
        weights(%W0, %R0 : tensor<16x8xf32>, tensor<16x16xf32>)
        bias(%b0 : tensor<16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%n : tensor<?x16xf32>) state(%n : tensor<?x16xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x16xf32>)
      init(%h1 : tensor<?x16xf32>) lengths(%lengths : tensor<?xi64>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %n = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%W1, %R1 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%b1 : tensor<16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%n : tensor<?x16xf32>) state(%n : tensor<?x16xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}

// REPORT: @reverse layer 0 (reverse): {{.*}} persistent=B<=
// CHECK-LABEL: func.func @reverse
// CHECK-SAME: %[[RLENGTHS:[a-z0-9]+]]: tensor<?xi32>
// CHECK: %[[RLENBUF:.*]] = bufferization.to_buffer %[[RLENGTHS]] read_only
// CHECK: gpu.launch
// CHECK: scf.for %[[I:[a-z0-9]+]] =
// CHECK: %[[LAST:.*]] = arith.subi %{{.*}}, %c1
// CHECK: %[[STEP:.*]] = arith.subi %[[LAST]], %[[I]]
// CHECK: %[[LEN:.*]] = memref.load %[[RLENBUF]]
// CHECK: %[[STEPI:.*]] = arith.index_cast %[[STEP]] : index to i32
// CHECK: arith.cmpi slt, %[[STEPI]], %[[LEN]] : i32
func.func @reverse(%x: tensor<?x?x8xf32>, %lengths: tensor<?xi32>,
    %h0: tensor<?x16xf32>, %W0: tensor<16x8xf32>, %R0: tensor<16x16xf32>,
    %b0: tensor<16xf32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>) {
  %y0, %hT0 = lstm.layer reverse ins(%x : tensor<?x?x8xf32>)
      init(%h0 : tensor<?x16xf32>) lengths(%lengths : tensor<?xi32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x16xf32>):
    %n = lstm.gate tanh (%xt, %h : tensor<?x8xf32>, tensor<?x16xf32>)
        weights(%W0, %R0 : tensor<16x8xf32>, tensor<16x16xf32>)
        bias(%b0 : tensor<16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%n : tensor<?x16xf32>) state(%n : tensor<?x16xf32>)
  }
  return %y0, %hT0 : tensor<?x?x16xf32>, tensor<?x16xf32>
}
