// RUN: lstm-opt %s --lstm-collapse-before-slice -split-input-file | FileCheck %s

// A layer's output sequence (slots 1..T of the [T+1, B, H] sequence its
// loop wrote) collapsed to [T·B, H] for the next layer's projection: the
// whole sequence is collapsed, rows B .. (T+1)·B sliced.
// CHECK-LABEL: func.func @sequence_below
// CHECK-SAME: (%[[SEQ:.*]]: tensor<?x?x128xf32>, %[[T:.*]]: index)
// CHECK: %[[B:.*]] = tensor.dim %[[SEQ]], %c1
// CHECK: %[[ROWS:.*]] = arith.muli %[[T]], %[[B]]
// CHECK: %[[WHOLE:.*]] = tensor.collapse_shape %[[SEQ]] {{\[}}[0, 1], [2]] : tensor<?x?x128xf32> into tensor<?x128xf32>
// CHECK: %[[SLICE:.*]] = tensor.extract_slice %[[WHOLE]][%[[B]], 0] [%[[ROWS]], 128] [1, 1]
// CHECK: return %[[SLICE]]
func.func @sequence_below(%seq: tensor<?x?x128xf32>, %t: index) -> tensor<?x128xf32> {
  %c1 = arith.constant 1 : index
  %b = tensor.dim %seq, %c1 : tensor<?x?x128xf32>
  %s = tensor.extract_slice %seq[1, 0, 0] [%t, %b, 128] [1, 1, 1] : tensor<?x?x128xf32> to tensor<?x?x128xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<?x?x128xf32> into tensor<?x128xf32>
  return %c : tensor<?x128xf32>
}

// -----

// Static extents fold: rows 2·4 .. 7·4; a dimension outside the group
// (the last) may be sliced too.
// CHECK-LABEL: func.func @static_extents
// CHECK: %[[WHOLE:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1], [2]] : tensor<10x4x8xf32> into tensor<40x8xf32>
// CHECK: tensor.extract_slice %[[WHOLE]][8, 2] [20, 6] [1, 1] : tensor<40x8xf32> to tensor<20x6xf32>
func.func @static_extents(%x: tensor<10x4x8xf32>) -> tensor<20x6xf32> {
  %s = tensor.extract_slice %x[2, 0, 2] [5, 4, 6] [1, 1, 1] : tensor<10x4x8xf32> to tensor<5x4x6xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<5x4x6xf32> into tensor<20x6xf32>
  return %c : tensor<20x6xf32>
}

// -----

// An inner dimension of the group sliced: the rows are not contiguous in
// the collapsed tensor; left alone.
// CHECK-LABEL: func.func @inner_dimension_sliced
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[2, 1, 0] [5, 2, 8]
// CHECK: tensor.collapse_shape %[[S]]
func.func @inner_dimension_sliced(%x: tensor<10x4x8xf32>) -> tensor<10x8xf32> {
  %s = tensor.extract_slice %x[2, 1, 0] [5, 2, 8] [1, 1, 1] : tensor<10x4x8xf32> to tensor<5x2x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<5x2x8xf32> into tensor<10x8xf32>
  return %c : tensor<10x8xf32>
}

// -----

// An inner extent that is not known to be whole (a size that is not the
// source's dim): left alone.
// CHECK-LABEL: func.func @inner_extent_unknown
// CHECK: %[[S:.*]] = tensor.extract_slice
// CHECK: tensor.collapse_shape %[[S]]
func.func @inner_extent_unknown(%x: tensor<?x?x8xf32>, %t: index, %b: index) -> tensor<?x8xf32> {
  %s = tensor.extract_slice %x[1, 0, 0] [%t, %b, 8] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x?x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

// A strided slice, or a rank-reducing one whose rows are not contiguous (the
// dropped dimension, inside the collapsed group, sliced at 1 of 3): left
// alone.
// CHECK-LABEL: func.func @strided
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 0, 0] [5, 4, 8] [2, 1, 1]
// CHECK: tensor.collapse_shape %[[S]]
func.func @strided(%x: tensor<10x4x8xf32>) -> tensor<20x8xf32> {
  %s = tensor.extract_slice %x[0, 0, 0] [5, 4, 8] [2, 1, 1] : tensor<10x4x8xf32> to tensor<5x4x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<5x4x8xf32> into tensor<20x8xf32>
  return %c : tensor<20x8xf32>
}
// CHECK-LABEL: func.func @rank_reducing
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[0, 1, 0, 0] [5, 1, 4, 8] [1, 1, 1, 1] : tensor<10x3x4x8xf32> to tensor<5x4x8xf32>
// CHECK: tensor.collapse_shape %[[S]]
func.func @rank_reducing(%x: tensor<10x3x4x8xf32>) -> tensor<20x8xf32> {
  %s = tensor.extract_slice %x[0, 1, 0, 0] [5, 1, 4, 8] [1, 1, 1, 1] : tensor<10x3x4x8xf32> to tensor<5x4x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<5x4x8xf32> into tensor<20x8xf32>
  return %c : tensor<20x8xf32>
}

// -----

// A layer's [T, B, N] sequence as a wavefront stores it: the view from
// step 3 of row 2 of an [L, T + L - 1, B, N] store, the row dropped. The
// dropped dimension (size 1) joins the collapsed group: rows
// 2·10·3 + 3·3 = 69 .. 69 + 5·3 of the store collapsed to [L·D·B, N].
// CHECK-LABEL: func.func @store_row_static
// CHECK: %[[WHOLE:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3]] : tensor<4x10x3x8xf32> into tensor<120x8xf32>
// CHECK: tensor.extract_slice %[[WHOLE]][69, 0] [15, 8] [1, 1] : tensor<120x8xf32> to tensor<15x8xf32>
func.func @store_row_static(%store: tensor<4x10x3x8xf32>) -> tensor<15x8xf32> {
  %s = tensor.extract_slice %store[2, 3, 0, 0] [1, 5, 3, 8] [1, 1, 1, 1] : tensor<4x10x3x8xf32> to tensor<5x3x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<5x3x8xf32> into tensor<15x8xf32>
  return %c : tensor<15x8xf32>
}

// -----

// The same with T and B dynamic: offset 2·D·B + 3·B, T·B rows.
// CHECK-LABEL: func.func @store_row_dynamic
// CHECK-SAME: (%[[STORE:.*]]: tensor<4x?x?x8xf32>, %[[T:.*]]: index)
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[STORE]], %c2
// CHECK-DAG: %[[D:.*]] = tensor.dim %[[STORE]], %c1
// CHECK-DAG: %[[THREE_B:.*]] = arith.muli %[[B]], %c3
// CHECK-DAG: %[[DB:.*]] = arith.muli %[[B]], %[[D]]
// CHECK-DAG: %[[TWO_DB:.*]] = arith.muli %[[DB]], %c2
// CHECK-DAG: %[[OFF:.*]] = arith.addi %[[THREE_B]], %[[TWO_DB]]
// CHECK-DAG: %[[ROWS:.*]] = arith.muli %[[T]], %[[B]]
// CHECK: %[[WHOLE:.*]] = tensor.collapse_shape %[[STORE]] {{\[}}[0, 1, 2], [3]] : tensor<4x?x?x8xf32> into tensor<?x8xf32>
// CHECK: tensor.extract_slice %[[WHOLE]][%[[OFF]], 0] [%[[ROWS]], 8] [1, 1]
func.func @store_row_dynamic(%store: tensor<4x?x?x8xf32>, %t: index) -> tensor<?x8xf32> {
  %c2 = arith.constant 2 : index
  %b = tensor.dim %store, %c2 : tensor<4x?x?x8xf32>
  %s = tensor.extract_slice %store[2, 3, 0, 0] [1, %t, %b, 8] [1, 1, 1, 1] : tensor<4x?x?x8xf32> to tensor<?x?x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

// A layer's start states [h0; y_0 .. y_{T-2}] (the backward's): T rows of
// a concatenation whose batch extent is given as the saved sequence's (the
// canonicaliser folds the concatenation's dim into an operand's): whole.
// CHECK-LABEL: func.func @start_states
// CHECK: %[[ALL:.*]] = tensor.concat
// CHECK: %[[WHOLE:.*]] = tensor.collapse_shape %[[ALL]] {{\[}}[0, 1], [2]]
// CHECK: tensor.extract_slice %[[WHOLE]][0, 0]
func.func @start_states(%h0: tensor<1x?x8xf32>, %ys: tensor<?x?x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %t = tensor.dim %ys, %c0 : tensor<?x?x8xf32>
  %b = tensor.dim %ys, %c1 : tensor<?x?x8xf32>
  %all = tensor.concat dim(0) %h0, %ys : (tensor<1x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
  %s = tensor.extract_slice %all[0, 0, 0] [%t, %b, 8] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x?x8xf32>
  %c = tensor.collapse_shape %s [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  return %c : tensor<?x8xf32>
}

// -----

// A collapse to rank 0 (one element of a 4x4 tensor): no group to slice in,
// left alone (it crashed the pass before).
// CHECK-LABEL: func.func @rank0
// CHECK: %[[S:.*]] = tensor.extract_slice %{{.*}}[1, 2] [1, 1] [1, 1]
// CHECK: tensor.collapse_shape %[[S]] []
func.func @rank0(%x: tensor<4x4xf32>) -> tensor<f32> {
  %s = tensor.extract_slice %x[1, 2] [1, 1] [1, 1] : tensor<4x4xf32> to tensor<1x1xf32>
  %c = tensor.collapse_shape %s [] : tensor<1x1xf32> into tensor<f32>
  return %c : tensor<f32>
}
