// RUN: lstm-opt %s --canonicalize -split-input-file | FileCheck %s

// An output sequence nothing reads is dropped; one that yields the same value
// as an earlier output is replaced by it.
// CHECK-LABEL: func.func @outputs
// CHECK: %[[Y:.*]], %[[F:.*]] = lstm.layer forward {{.*}} -> (tensor<?x?x8xf32>), (tensor<?x8xf32>)
// CHECK: lstm.yield out(%[[V:.*]] : tensor<?x8xf32>) state(%[[V]] : tensor<?x8xf32>)
// CHECK: return %[[Y]], %[[Y]], %[[F]]
func.func @outputs(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %a, %b, %c, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    lstm.yield out(%s, %h, %s : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) state(%s : tensor<?x8xf32>)
  }
  return %a, %c, %hT : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// Nothing to drop: the layer stays as it is.
// CHECK-LABEL: func.func @kept
// CHECK: %{{.*}}:2, %{{.*}} = lstm.layer forward
func.func @kept(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %a, %b, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    lstm.yield out(%s, %h : tensor<?x8xf32>, tensor<?x8xf32>) state(%s : tensor<?x8xf32>)
  }
  return %a, %b, %hT : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// An input sequence after the first that the cell does not read is dropped
// (its slice argument with it); the first stays, unread or not: the layer's
// length and batch size come from it.
// CHECK-LABEL: func.func @unread_inputs
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[A:.*]]: tensor<?x?x8xf32>, %[[B:.*]]: tensor<?x?x4xf32>
// CHECK: lstm.layer reverse ins(%[[X]], %[[B]] : tensor<?x?x8xf32>, tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<?x8xf32>, %[[BT:.*]]: tensor<?x4xf32>, %[[H:.*]]: tensor<?x4xf32>):
// CHECK-NEXT: arith.addf %[[BT]], %[[H]]
func.func @unread_inputs(%x: tensor<?x?x8xf32>, %a: tensor<?x?x8xf32>, %b: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  %y, %hT = lstm.layer reverse ins(%x, %a, %b : tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %at: tensor<?x8xf32>, %bt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %s = arith.addf %bt, %h : tensor<?x4xf32>
    lstm.yield out(%s : tensor<?x4xf32>) state(%s : tensor<?x4xf32>)
  }
  return %y, %hT : tensor<?x?x4xf32>, tensor<?x4xf32>
}
