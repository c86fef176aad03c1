// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --resolve-ranked-shaped-type-result-dims | FileCheck %s

// lstm.layer says its results' extents from its operands
// (ReifyRankedShapedTypeOpInterface): an output sequence's length and batch
// are its first input's, a final state's extents its initial state's. The
// dims of the results then no longer wait for the layer.
// CHECK-LABEL: func.func @extents
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[H0:.*]]: tensor<?x4xf32>)
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK-DAG: %[[BH:.*]] = tensor.dim %[[H0]], %c0
// CHECK: return %[[T]], %[[B]], %[[BH]]
func.func @extents(%x: tensor<?x?x8xf32>, %h0: tensor<?x4xf32>) -> (index, index, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x4xf32>):
    %s = arith.addf %h, %h : tensor<?x4xf32>
    lstm.yield out(%s : tensor<?x4xf32>) state(%s : tensor<?x4xf32>)
  }
  %t = tensor.dim %y, %c0 : tensor<?x?x4xf32>
  %b = tensor.dim %y, %c1 : tensor<?x?x4xf32>
  %bh = tensor.dim %hT, %c0 : tensor<?x4xf32>
  return %t, %b, %bh : index, index, index
}
