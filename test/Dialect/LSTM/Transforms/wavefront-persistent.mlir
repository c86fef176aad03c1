// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-wavefront=persistent=true -split-input-file | FileCheck %s
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-optimize=persistent=true --lstm-schedule-report=persistent=true 2>&1 | FileCheck %s --check-prefix=STACK3

// lstm-wavefront{persistent=true}: a chain whose layers lstm-to-persistent's
// cost model runs as persistent kernels up to a batch size M (judged on the
// layers hoisted and fused, as lstm-optimize{wavefront=false} leaves them)
// stays a chain of layers up to M and becomes the wavefront above it. Here
// a step's product has 4 columns of depth 4 for each of the 4 units: 64
// multiply-adds a row, M = 2^24 / 16 = 1048576 rows.

// The pipeline: the threshold is what lstm-schedule-report says of the
// layers that lstm-optimize{persistent=true} leaves.
// STACK3: @forward layer 0 (forward): {{.*}} persistent=B<=65536
// STACK3: @forward layer 1 (forward): {{.*}} persistent=B<=65536
// STACK3: @forward layer 2 (forward): {{.*}} persistent=B<=65536
// STACK3: @forward wavefront of 3 layers (forward): {{.*}} persistent=no (a wavefront of layers, run where B>65536, the layers above where B<=65536)
// STACK3: %[[B:.*]] = tensor.dim %arg0, %c1
// STACK3: arith.cmpi ule, %[[B]], %c65536 : index

// A dynamic batch: both, chosen at run time. The ops from the first layer
// to the last go to both branches; what is used after them (the first
// layer's final, the last layer's results) is yielded.
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: %[[B:.*]] = tensor.dim %arg0, %c1 : tensor<?x?x4xf32>
// CHECK: %[[SMALL:.*]] = arith.cmpi ule, %[[B]], %c1048576 : index
// CHECK: %[[R:.*]]:3 = scf.if %[[SMALL]] -> (tensor<?x4xf32>, tensor<?x?x4xf32>, tensor<?x4xf32>) {
// CHECK: %[[Y0:.*]], %[[H0:.*]] = lstm.layer forward ins(%arg0 : tensor<?x?x4xf32>)
// CHECK: %[[Y1:.*]], %[[H1:.*]] = lstm.layer forward ins(%[[Y0]] : tensor<?x?x4xf32>)
// CHECK: scf.yield %[[H0]], %[[Y1]], %[[H1]]
// CHECK-NEXT: } else {
// CHECK-NOT: = lstm.layer
// CHECK: scf.for
// CHECK-NOT: = lstm.layer
// CHECK: scf.yield
// CHECK: return %[[R]]#1, %[[R]]#0, %[[R]]#2
func.func @dynamic_batch(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %h1: tensor<?x4xf32>,
                     %W0: tensor<4x4xf32>, %R0: tensor<4x4xf32>,
                     %W1: tensor<4x4xf32>, %R1: tensor<4x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %p = lstm.gate identity (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W0, %R0 : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    %hn = math.tanh %p : tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h1 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %p = lstm.gate identity (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W1, %R1 : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    %hn = math.tanh %p : tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A static batch up to M: the layers stay, for the persistent kernels.
// CHECK-LABEL: func.func @static_small_batch
// CHECK-NOT: scf.if
// CHECK-NOT: scf.for
// CHECK-COUNT-2: lstm.layer forward
// CHECK-NOT: scf.for
func.func @static_small_batch(%x: tensor<?x3x4xf32>, %h0: tensor<3x4xf32>, %h1: tensor<3x4xf32>,
                     %W0: tensor<4x4xf32>, %R0: tensor<4x4xf32>,
                     %W1: tensor<4x4xf32>, %R1: tensor<4x4xf32>)
    -> (tensor<?x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x3x4xf32>) init(%h0 : tensor<3x4xf32>)
      -> (tensor<?x3x4xf32>), (tensor<3x4xf32>) {
  ^bb0(%xt: tensor<3x4xf32>, %h: tensor<3x4xf32>):
    %p = lstm.gate identity (%xt, %h : tensor<3x4xf32>, tensor<3x4xf32>)
        weights(%W0, %R0 : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
    %hn = math.tanh %p : tensor<3x4xf32>
    lstm.yield out(%hn : tensor<3x4xf32>) state(%hn : tensor<3x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x3x4xf32>) init(%h1 : tensor<3x4xf32>)
      -> (tensor<?x3x4xf32>), (tensor<3x4xf32>) {
  ^bb0(%xt: tensor<3x4xf32>, %h: tensor<3x4xf32>):
    %p = lstm.gate identity (%xt, %h : tensor<3x4xf32>, tensor<3x4xf32>)
        weights(%W1, %R1 : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
    %hn = math.tanh %p : tensor<3x4xf32>
    lstm.yield out(%hn : tensor<3x4xf32>) state(%hn : tensor<3x4xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// A static batch above M: the wavefront.
// CHECK-LABEL: func.func @static_large_batch
// CHECK-NOT: scf.if
// CHECK-NOT: = lstm.layer
// CHECK: scf.for
// CHECK-NOT: = lstm.layer
func.func @static_large_batch(%x: tensor<?x2000000x4xf32>, %h0: tensor<2000000x4xf32>, %h1: tensor<2000000x4xf32>,
                     %W0: tensor<4x4xf32>, %R0: tensor<4x4xf32>,
                     %W1: tensor<4x4xf32>, %R1: tensor<4x4xf32>)
    -> (tensor<?x2000000x4xf32>, tensor<2000000x4xf32>, tensor<2000000x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x2000000x4xf32>) init(%h0 : tensor<2000000x4xf32>)
      -> (tensor<?x2000000x4xf32>), (tensor<2000000x4xf32>) {
  ^bb0(%xt: tensor<2000000x4xf32>, %h: tensor<2000000x4xf32>):
    %p = lstm.gate identity (%xt, %h : tensor<2000000x4xf32>, tensor<2000000x4xf32>)
        weights(%W0, %R0 : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2000000x4xf32>
    %hn = math.tanh %p : tensor<2000000x4xf32>
    lstm.yield out(%hn : tensor<2000000x4xf32>) state(%hn : tensor<2000000x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x2000000x4xf32>) init(%h1 : tensor<2000000x4xf32>)
      -> (tensor<?x2000000x4xf32>), (tensor<2000000x4xf32>) {
  ^bb0(%xt: tensor<2000000x4xf32>, %h: tensor<2000000x4xf32>):
    %p = lstm.gate identity (%xt, %h : tensor<2000000x4xf32>, tensor<2000000x4xf32>)
        weights(%W1, %R1 : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<2000000x4xf32>
    %hn = math.tanh %p : tensor<2000000x4xf32>
    lstm.yield out(%hn : tensor<2000000x4xf32>) state(%hn : tensor<2000000x4xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x2000000x4xf32>, tensor<2000000x4xf32>, tensor<2000000x4xf32>
}

// -----

// A cell lstm-to-persistent does not take (a projection of a value 6 wide,
// neither a multiple of the states' 4 nor narrower): the wavefront,
// whatever the batch.
// CHECK-LABEL: func.func @not_persistent
// CHECK-NOT: scf.if
// CHECK-NOT: = lstm.layer
// CHECK: scf.for
// CHECK-NOT: = lstm.layer
func.func @not_persistent(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %h1: tensor<?x4xf32>,
                     %W0: tensor<6x4xf32>, %R0: tensor<6x4xf32>, %P0: tensor<4x6xf32>,
                     %W1: tensor<6x4xf32>, %R1: tensor<6x4xf32>, %P1: tensor<4x6xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %c = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W0, %R0 : tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
    %hn = lstm.gate identity (%c : tensor<?x6xf32>) weights(%P0 : tensor<4x6xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h1 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %c = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W1, %R1 : tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<?x6xf32>
    %hn = lstm.gate identity (%c : tensor<?x6xf32>) weights(%P1 : tensor<4x6xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}
