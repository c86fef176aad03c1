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

// A strided or rank-reducing slice: left alone.
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
