// RUN: lstm-opt %s --convert-lstm-to-linalg --canonicalize --cse --split-input-file | FileCheck %s

// A forward layer is a loop over t = 0 .. T-1; the cell is inlined. A
// state that is also an output (h here) is not carried: it lives in a stack
// of T + 1 rows, the initial state in row 0, and step t reads row t and
// writes row t + 1 (in place, no copy of the state into the output). The
// output is rows 1 .. T, the final state row T.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x4xf32>, %[[H0:.*]]: tensor<?x8xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK: %[[HB:.*]] = tensor.dim %[[H0]], %[[C0]]
// CHECK: %[[SAME:.*]] = arith.cmpi eq, %[[HB]], %[[B]]
// CHECK: cf.assert %[[SAME]], "lstm.layer: initial state #0 has a different batch size than the input
// CHECK: %[[ROWS:.*]] = arith.addi %[[T]], %[[C1]]
// CHECK: %[[S0:.*]] = bufferization.alloc_tensor(%[[ROWS]], %[[B]]) : tensor<?x?x8xf32>
// CHECK: %[[S1:.*]] = tensor.insert_slice %[[H0]] into %[[S0]][0, 0, 0]
// CHECK: %[[LOOP:.*]] = scf.for %[[IV:.*]] = %[[C0]] to %[[T]] step %[[C1]] iter_args(%[[S:.*]] = %[[S1]])
// CHECK:   %[[NEXT:.*]] = arith.addi %[[IV]], %[[C1]]
// CHECK:   %[[XT:.*]] = tensor.extract_slice %[[X]][%[[IV]], 0, 0] [1, %[[B]], 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
// CHECK:   %[[H:.*]] = tensor.extract_slice %[[S]][%[[IV]], 0, 0]
// CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[XT]], %{{.*}} : tensor<?x4xf32>, tensor<8x4xf32>)
// CHECK:   linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[H]], %{{.*}} : tensor<?x8xf32>, tensor<8x8xf32>)
// CHECK:   %[[HN:.*]] = linalg.generic
// CHECK:     math.tanh
// CHECK:   %[[SN:.*]] = tensor.insert_slice %[[HN]] into %[[S]][%[[NEXT]], 0, 0]
// CHECK:   scf.yield %[[SN]]
// CHECK: %[[Y:.*]] = tensor.extract_slice %[[LOOP]][1, 0, 0] [%[[T]],
// CHECK: %[[HT:.*]] = tensor.extract_slice %[[LOOP]][%[[T]], 0, 0] [1,
// CHECK: return %[[Y]], %[[HT]]
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

// A reverse layer reads and writes step T-1-iv; its stack has the initial
// state in row T, and step t reads row t + 1.
// CHECK-LABEL: func.func @reverse
// CHECK: %[[T:.*]] = tensor.dim
// CHECK: %[[ROWS:.*]] = arith.addi %[[T]], %[[C1:.*]] :
// CHECK: %[[S0:.*]] = bufferization.alloc_tensor(%[[ROWS]])
// CHECK: tensor.insert_slice %{{.*}} into %[[S0]][%[[T]], 0, 0]
// CHECK: %[[LOOP:.*]] = scf.for %[[IV:.*]] = %{{.*}} to %[[T]]
// CHECK:   %[[LAST:.*]] = arith.subi %[[T]], %{{.*}}
// CHECK:   %[[TT:.*]] = arith.subi %[[LAST]], %[[IV]]
// CHECK:   tensor.extract_slice %{{.*}}[%[[TT]], 0, 0]
// CHECK:   tensor.insert_slice %{{.*}}[%[[TT]], 0, 0]
// CHECK: tensor.extract_slice %[[LOOP]][0, 0, 0] [%[[T]], 2, 8]
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

// -----

// The old states as an output (a training forward's tape): c is not a new
// output, but its old values are, so it is stacked too, and the tape is the
// first T rows of its stack (the last T walking backwards). h is output
// both ways: both are views of one stack.
// CHECK-LABEL: func.func @tape
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[IV:.*]] = {{.*}} iter_args(%[[HS:.*]] = %{{.*}}, %[[CS:.*]] = %{{.*}}) -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>)
// CHECK:   %[[NEXT:.*]] = arith.addi %[[IV]], %{{.*}}
// CHECK:   %[[H:.*]] = tensor.extract_slice %[[HS]][%[[IV]], 0, 0]
// CHECK:   %[[C:.*]] = tensor.extract_slice %[[CS]][%[[IV]], 0, 0]
// CHECK:   %[[HN:.*]] = tensor.insert_slice %{{.*}} into %[[HS]][%[[NEXT]], 0, 0]
// CHECK:   %[[CN:.*]] = tensor.insert_slice %{{.*}} into %[[CS]][%[[NEXT]], 0, 0]
// CHECK:   scf.yield %[[HN]], %[[CN]]
// CHECK-DAG: %[[Y:.*]] = tensor.extract_slice %[[LOOP]]#0[1, 0, 0] [%[[T:.*]], 2, 8]
// CHECK-DAG: %[[HOLD:.*]] = tensor.extract_slice %[[LOOP]]#0[0, 0, 0] [%[[T]], 2, 8]
// CHECK-DAG: %[[COLD:.*]] = tensor.extract_slice %[[LOOP]]#1[0, 0, 0] [%[[T]], 2, 8]
// CHECK-DAG: %[[CT:.*]] = tensor.extract_slice %[[LOOP]]#1[%[[T]], 0, 0] [1, 2, 8]
// CHECK: return %[[Y]], %[[HOLD]], %[[COLD]], %[[CT]]
func.func @tape(%x: tensor<?x2x4xf32>, %h0: tensor<2x8xf32>, %c0: tensor<2x8xf32>,
                %W: tensor<8x4xf32>, %R: tensor<8x8xf32>)
    -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<2x8xf32>) {
  %y, %hold, %cold, %hT, %cT = lstm.layer forward ins(%x : tensor<?x2x4xf32>)
      init(%h0, %c0 : tensor<2x8xf32>, tensor<2x8xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>),
         (tensor<2x8xf32>, tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>, %c: tensor<2x8xf32>):
    %z = lstm.gate tanh (%xt, %h : tensor<2x4xf32>, tensor<2x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %cn = arith.addf %c, %z : tensor<2x8xf32>
    %hn = arith.mulf %cn, %z : tensor<2x8xf32>
    lstm.yield out(%hn, %h, %c : tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
        state(%hn, %cn : tensor<2x8xf32>, tensor<2x8xf32>)
  }
  return %y, %hold, %cold, %cT
      : tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<?x2x8xf32>, tensor<2x8xf32>
}

// -----

// Each sequence the loop fills starts from an allocation of its own, which
// CSE does not merge (equal tensor.empty ops it would: the loop's values
// would then start from one tensor, and one-shot bufferization gave all but
// one a buffer of its own and the loop's results strided types).
// CHECK-LABEL: func.func @two_outputs
// CHECK: %[[A:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x2x8xf32>
// CHECK: %[[B:.*]] = bufferization.alloc_tensor(%{{.*}}) : tensor<?x2x8xf32>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %[[A]], %{{.*}} = %[[B]])
func.func @two_outputs(%x: tensor<?x2x4xf32>, %h0: tensor<2x8xf32>,
                       %W: tensor<8x4xf32>, %R: tensor<8x8xf32>)
    -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>) {
  %u, %v, %hT = lstm.layer forward ins(%x : tensor<?x2x4xf32>)
      init(%h0 : tensor<2x8xf32>)
      -> (tensor<?x2x8xf32>, tensor<?x2x8xf32>), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    %z = lstm.gate tanh (%xt, %h : tensor<2x4xf32>, tensor<2x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
    %p = arith.mulf %z, %z : tensor<2x8xf32>
    %q = arith.addf %z, %h : tensor<2x8xf32>
    lstm.yield out(%p, %q : tensor<2x8xf32>, tensor<2x8xf32>)
        state(%z : tensor<2x8xf32>)
  }
  return %u, %v : tensor<?x2x8xf32>, tensor<?x2x8xf32>
}
