// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --loop-invariant-code-motion -split-input-file | FileCheck %s

// lstm.layer is a LoopLikeOpInterface: upstream's loop-invariant code motion
// hoists the work of the cell that reads only values defined above it (here
// the per-gate weight slices and the sum of the two biases) and leaves what
// reads the step's slice or the state.
// CHECK-LABEL: func.func @invariant_slices_and_bias_sum
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4xf32>, %[[H0:.*]]: tensor<?x8xf32>, %[[W:.*]]: tensor<16x4xf32>, %[[R:.*]]: tensor<16x8xf32>, %[[BW:.*]]: tensor<8xf32>, %[[BR:.*]]: tensor<8xf32>)
// CHECK-DAG: %[[WA:.*]] = tensor.extract_slice %[[W]][0, 0] [8, 4] [1, 1]
// CHECK-DAG: %[[RA:.*]] = tensor.extract_slice %[[R]][0, 0] [8, 8] [1, 1]
// CHECK-DAG: %[[WB:.*]] = tensor.extract_slice %[[W]][8, 0] [8, 4] [1, 1]
// CHECK-DAG: %[[B:.*]] = arith.addf %[[BW]], %[[BR]] : tensor<8xf32>
// CHECK: lstm.layer forward
// CHECK-NEXT: ^bb0(%[[XT:.*]]: tensor<?x4xf32>, %[[H:.*]]: tensor<?x8xf32>):
// CHECK-NEXT: %[[A:.*]] = lstm.gate tanh(%[[XT]], %[[H]] : {{.*}}) weights(%[[WA]], %[[RA]] : {{.*}}) bias(%[[B]] : tensor<8xf32>)
// CHECK-NEXT: %[[G:.*]] = lstm.gate sigmoid(%[[XT]] : {{.*}}) weights(%[[WB]] : {{.*}})
// CHECK-NEXT: %[[HN:.*]] = arith.mulf %[[A]], %[[G]]
// CHECK-NEXT: lstm.yield out(%[[HN]] : tensor<?x8xf32>) state(%[[HN]] : tensor<?x8xf32>)
func.func @invariant_slices_and_bias_sum(
    %x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %W: tensor<16x4xf32>,
    %R: tensor<16x8xf32>, %bW: tensor<8xf32>, %bR: tensor<8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %Wa = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
    %Ra = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
    %b = arith.addf %bW, %bR : tensor<8xf32>
    %a = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wa, %Ra : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%b : tensor<8xf32>) -> tensor<?x8xf32>
    %Wb = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
    %g = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%Wb : tensor<8x4xf32>)
        -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// A gate of weights and biases only (no step slice, no state) is invariant
// too, and is hoisted whole; the state-dependent product stays.
// CHECK-LABEL: func.func @invariant_gate
// CHECK: %[[C:.*]] = lstm.gate sigmoid add(%{{.*}} : tensor<3x8xf32>) bias(%{{.*}} : tensor<8xf32>)
// CHECK: lstm.layer forward
// CHECK-NOT: add(
// CHECK: %[[P:.*]] = lstm.gate identity(%{{.*}} : tensor<3x8xf32>)
// CHECK: arith.addf %[[P]], %[[C]]
func.func @invariant_gate(%x: tensor<5x3x8xf32>, %h0: tensor<3x8xf32>,
                          %R: tensor<8x8xf32>, %a: tensor<3x8xf32>,
                          %b: tensor<8xf32>)
    -> (tensor<5x3x8xf32>, tensor<3x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<5x3x8xf32>)
      init(%h0 : tensor<3x8xf32>)
      -> (tensor<5x3x8xf32>), (tensor<3x8xf32>) {
  ^bb0(%xt: tensor<3x8xf32>, %h: tensor<3x8xf32>):
    %c = lstm.gate sigmoid add(%a : tensor<3x8xf32>) bias(%b : tensor<8xf32>)
        -> tensor<3x8xf32>
    %p = lstm.gate identity (%h : tensor<3x8xf32>) weights(%R : tensor<8x8xf32>)
        -> tensor<3x8xf32>
    %s = arith.addf %p, %c : tensor<3x8xf32>
    %hn = arith.addf %s, %xt : tensor<3x8xf32>
    lstm.yield out(%hn : tensor<3x8xf32>) state(%hn : tensor<3x8xf32>)
  }
  return %y, %hT : tensor<5x3x8xf32>, tensor<3x8xf32>
}
