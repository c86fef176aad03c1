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

// -----

// Outputs that yield whole columns of a wider output at every step (as Cho's
// GRU's backward cell yields its gates' gradients whole and two slices of
// them) become views of the wider output's sequence: %d is the wide
// output's columns 0..3 (pieces %p at 0 and %q at 2, as the wide one has
// them), %q its columns 2..3. %e covers columns 0..1 with a value the wide
// output does not hold there, and %f leaves columns 2..3 undefined: both
// stay.
// CHECK-LABEL: func.func @slice_outputs
// CHECK: %[[L:.*]]:3, %{{.*}} = lstm.layer forward
// CHECK: lstm.yield out(%[[WIDE:.*]], %[[E:.*]], %[[F:.*]] : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
// CHECK: %[[T:.*]] = tensor.dim %[[L]]#0, %c0
// CHECK: %[[B:.*]] = tensor.dim %[[L]]#0, %c1
// CHECK: %[[D:.*]] = tensor.extract_slice %[[L]]#0[0, 0, 0] [%[[T]], %[[B]], 4] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x?x4xf32>
// CHECK: %[[Q:.*]] = tensor.extract_slice %[[L]]#0[0, 0, 2] [%{{.*}}, %{{.*}}, 2] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x?x2xf32>
// CHECK: return %[[L]]#0, %[[D]], %[[Q]], %[[L]]#1, %[[L]]#2
func.func @slice_outputs(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x2xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %w, %d, %q, %e, %f, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x2xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %c0 = arith.constant 0 : index
    %b = tensor.dim %h, %c0 : tensor<?x8xf32>
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    %p = tensor.extract_slice %s[0, 0] [%b, 2] [1, 1] : tensor<?x8xf32> to tensor<?x2xf32>
    %q = tensor.extract_slice %s[0, 2] [%b, 2] [1, 1] : tensor<?x8xf32> to tensor<?x2xf32>
    %r = tensor.extract_slice %s[0, 4] [%b, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %e8 = tensor.empty(%b) : tensor<?x8xf32>
    %w0 = tensor.insert_slice %r into %e8[0, 4] [%b, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
    %w1 = tensor.insert_slice %q into %w0[0, 2] [%b, 2] [1, 1] : tensor<?x2xf32> into tensor<?x8xf32>
    %wide = tensor.insert_slice %p into %w1[0, 0] [%b, 2] [1, 1] : tensor<?x2xf32> into tensor<?x8xf32>
    %e4 = tensor.empty(%b) : tensor<?x4xf32>
    %d0 = tensor.insert_slice %q into %e4[0, 2] [%b, 2] [1, 1] : tensor<?x2xf32> into tensor<?x4xf32>
    %dd = tensor.insert_slice %p into %d0[0, 0] [%b, 2] [1, 1] : tensor<?x2xf32> into tensor<?x4xf32>
    %ee = tensor.insert_slice %q into %d0[0, 0] [%b, 2] [1, 1] : tensor<?x2xf32> into tensor<?x4xf32>
    lstm.yield out(%wide, %dd, %q, %ee, %d0 : tensor<?x8xf32>, tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x4xf32>, tensor<?x4xf32>) state(%s : tensor<?x8xf32>)
  }
  return %w, %d, %q, %e, %f : tensor<?x?x8xf32>, tensor<?x?x4xf32>, tensor<?x?x2xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// An output that is an extract_slice of a wider output, whole but in its
// columns (Cho's GRU's [dr dz] once lstm-share-assembled-columns made it a
// slice of dG, its rows sized by dG's extent), becomes a view of the wider
// output's sequence too. %n takes only some rows of %s: it stays.
// CHECK-LABEL: func.func @extracted_outputs
// CHECK: %[[L:.*]]:2, %{{.*}} = lstm.layer forward
// CHECK: lstm.yield out(%[[S:.*]], %[[N:.*]] : tensor<?x8xf32>, tensor<1x3xf32>)
// CHECK: %[[D:.*]] = tensor.extract_slice %[[L]]#0[0, 0, 5] [%{{.*}}, %{{.*}}, 3] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x?x3xf32>
// CHECK: return %[[L]]#0, %[[D]], %[[L]]#1
func.func @extracted_outputs(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x3xf32>, tensor<?x1x3xf32>) {
  %w, %d, %n, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>, tensor<?x?x3xf32>, tensor<?x1x3xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %c0 = arith.constant 0 : index
    %b = tensor.dim %h, %c0 : tensor<?x8xf32>
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    %bs = tensor.dim %s, %c0 : tensor<?x8xf32>
    %dd = tensor.extract_slice %s[0, 5] [%bs, 3] [1, 1] : tensor<?x8xf32> to tensor<?x3xf32>
    %nn = tensor.extract_slice %s[0, 5] [1, 3] [1, 1] : tensor<?x8xf32> to tensor<1x3xf32>
    lstm.yield out(%s, %dd, %nn : tensor<?x8xf32>, tensor<?x3xf32>, tensor<1x3xf32>) state(%s : tensor<?x8xf32>)
  }
  return %w, %d, %n : tensor<?x?x8xf32>, tensor<?x?x3xf32>, tensor<?x1x3xf32>
}
