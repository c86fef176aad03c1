// RUN: lstm-opt %s --convert-lstm-to-linalg --canonicalize --cse --split-input-file | FileCheck %s

// A forward layer is a loop over t = 0 .. T-1 carrying the state and the
// stacked output; the cell is inlined; each step writes its output at t.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4xf32>, %[[H0:.*]]: tensor<?x8xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK: %[[HB:.*]] = tensor.dim %[[H0]], %[[C0]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[HB]], %[[B]]
// CHECK: cf.assert %[[SAME]], "lstm.layer: initial state #0 has a different batch size than the input
// CHECK: %[[Y0:.*]] = tensor.empty(%[[T]], %[[B]]) : tensor<?x?x8xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[IV:.*]] = %[[C0]] to %[[T]] step %[[C1]] iter_args(%[[H:.*]] = %[[H0]], %[[Y:.*]] = %[[Y0]])
// CHECK:   %[[XT:.*]] = tensor.extract_slice %[[X]][%[[IV]], 0, 0] [1, %[[B]], 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
// CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[XT]], %{{.*}} : tensor<?x4xf32>, tensor<8x4xf32>)
// CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[H]], %{{.*}} : tensor<?x8xf32>, tensor<8x8xf32>)
// CHECK:   %[[HN:.*]] = linalg.generic
// CHECK:     math.tanh
// CHECK:   %[[YN:.*]] = tensor.insert_slice %[[HN]] into %[[Y]][%[[IV]], 0, 0]
// CHECK:   scf.yield %[[HN]], %[[YN]]
// CHECK: return %[[LOOP]]#1, %[[LOOP]]#0
func.func @forward(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                   %W: tensor<8x4xf32>, %R: tensor<8x8xf32>,
                   %b: tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x8xf32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%b : tensor<8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// A reverse layer reads and writes step T-1-iv.
// CHECK-LABEL: func.func @reverse
// CHECK: %[[T:.*]] = tensor.dim
// CHECK: scf.for %[[IV:.*]] = %{{.*}} to %[[T]]
// CHECK:   %[[LAST:.*]] = arith.subi %[[T]], %{{.*}}
// CHECK:   %[[TT:.*]] = arith.subi %[[LAST]], %[[IV]]
// CHECK:   tensor.extract_slice %{{.*}}[%[[TT]], 0, 0]
// CHECK:   tensor.insert_slice %{{.*}}[%[[TT]], 0, 0]
func.func @reverse(%x: tensor<?x2x4xf32>, %h0: tensor<2x8xf32>,
                   %W: tensor<8x4xf32>) -> tensor<?x2x8xf32> {
  %y, %hT = lstm.layer reverse ins(%x : tensor<?x2x4xf32>)
      init(%h0 : tensor<2x8xf32>) -> (tensor<?x2x8xf32>), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    %hn = lstm.gate sigmoid (%xt : tensor<2x4xf32>) weights(%W : tensor<8x4xf32>)
        -> tensor<2x8xf32>
    lstm.yield out(%hn : tensor<2x8xf32>) state(%hn : tensor<2x8xf32>)
  }
  return %y : tensor<?x2x8xf32>
}

// -----

// With lengths, the new state and the output are selected per row on
// t < lengths[b]: the old state or zeros otherwise.
// CHECK-LABEL: func.func @lengths
// CHECK-SAME: %[[LEN:[a-z0-9]+]]: tensor<2xi32>
// CHECK: scf.for %[[IV:.*]] = {{.*}} iter_args(%[[H:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}})
// CHECK:   linalg.generic {{.*}}"reduction"
// CHECK:   %[[HN:.*]] = linalg.generic
// CHECK:     math.tanh
// CHECK:   %[[T32:.*]] = arith.index_cast %[[IV]] : index to i32
// CHECK:   %[[KEEP:.*]] = linalg.generic {{.*}} ins(%[[LEN]], %[[HN]], %[[H]] : tensor<2xi32>, tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK:     %[[LIVE:.*]] = arith.cmpi slt, %[[T32]]
// CHECK:     arith.select %[[LIVE]]
// CHECK:   %[[OUT:.*]] = linalg.generic {{.*}} ins(%[[LEN]], %[[HN]] : tensor<2xi32>, tensor<2x8xf32>)
// CHECK:     arith.select
// CHECK:   %[[YN:.*]] = tensor.insert_slice %[[OUT]] into %[[Y]]
// CHECK:   scf.yield %[[KEEP]], %[[YN]]
func.func @lengths(%x: tensor<?x2x4xf32>, %len: tensor<2xi32>, %h0: tensor<2x8xf32>,
                   %W: tensor<8x4xf32>) -> tensor<?x2x8xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x2x4xf32>)
      init(%h0 : tensor<2x8xf32>) lengths(%len : tensor<2xi32>)
      -> (tensor<?x2x8xf32>), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    %hn = lstm.gate tanh (%xt : tensor<2x4xf32>) weights(%W : tensor<8x4xf32>)
        -> tensor<2x8xf32>
    lstm.yield out(%hn : tensor<2x8xf32>) state(%hn : tensor<2x8xf32>)
  }
  return %y : tensor<?x2x8xf32>
}
