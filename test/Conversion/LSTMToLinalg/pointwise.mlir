// RUN: lstm-opt %s --convert-lstm-to-linalg --canonicalize --cse --split-input-file | FileCheck %s

// One linalg.generic per lstm.pointwise: [B, N] operands at (b, n), [N]
// operands broadcast along the batch, the region as its body; one output per
// result, sized from the first [B, N] operand.
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[VEC:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @two_results
// CHECK-SAME: (%[[A:.*]]: tensor<?x8xf32>, %[[B:.*]]: tensor<?x8xf32>, %[[BIAS:.*]]: tensor<8xf32>)
// CHECK: %[[BATCH:.*]] = tensor.dim %[[A]], %{{.*}}
// CHECK: cf.assert %{{.*}}, "lstm.pointwise: operand #1 has a different batch size than the others
// CHECK: %[[E:.*]] = tensor.empty(%[[BATCH]]) : tensor<?x8xf32>
// CHECK: %[[R:.*]]:2 = linalg.generic {indexing_maps = [#[[ROW]], #[[ROW]], #[[VEC]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "parallel"]} ins(%[[A]], %[[B]], %[[BIAS]] : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) outs(%[[E]], %[[E]] : tensor<?x8xf32>, tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %[[Z:.*]]: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT:   %[[S:.*]] = arith.addf %[[X]], %[[Y]] : f32
// CHECK-NEXT:   %[[T:.*]] = arith.addf %[[S]], %[[Z]] : f32
// CHECK-NEXT:   %[[H:.*]] = math.tanh %[[T]] : f32
// CHECK-NEXT:   linalg.yield %[[T]], %[[H]] : f32, f32
// CHECK-NOT: linalg.generic
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @two_results(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>, %bias: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %r:2 = lstm.pointwise ins(%a, %b, %bias : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>, tensor<?x8xf32> {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %z : f32
    %u = math.tanh %t : f32
    lstm.pointwise_yield %t, %u : f32, f32
  }
  return %r#0, %r#1 : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Static shapes need no run-time checks; a rank-1 operand may come first.
// CHECK-LABEL: func.func @static
// CHECK-NOT: cf.assert
// CHECK: %[[E:.*]] = tensor.empty() : tensor<2x8xf64>
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<8xf64>, tensor<2x8xf64>) outs(%[[E]] : tensor<2x8xf64>)
// CHECK:   arith.mulf
func.func @static(%p: tensor<8xf64>, %a: tensor<2x8xf64>) -> tensor<2x8xf64> {
  %r = lstm.pointwise ins(%p, %a : tensor<8xf64>, tensor<2x8xf64>) -> tensor<2x8xf64> {
  ^bb0(%x: f64, %y: f64):
    %m = arith.mulf %x, %y : f64
    lstm.pointwise_yield %m : f64
  }
  return %r : tensor<2x8xf64>
}

// -----

// A dynamic bias is checked against the columns at run time.
// CHECK-LABEL: func.func @dynamic_bias
// CHECK: cf.assert %{{.*}}, "lstm.pointwise: operand #1 does not have the others' number of columns
func.func @dynamic_bias(%a: tensor<?x?xf32>, %b: tensor<?xf32>) -> tensor<?x?xf32> {
  %r = lstm.pointwise ins(%a, %b : tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    lstm.pointwise_yield %s : f32
  }
  return %r : tensor<?x?xf32>
}

// -----

// The batched cell of a wavefront: one generic over [L, B, N], the per-layer
// biases read at (l, n), the layer extent checked at run time.
// CHECK-DAG: #[[FULL:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BCAST:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @layers
// CHECK: cf.assert %{{.*}}, "lstm.pointwise: operand #1 does not have the others' number of layers
// CHECK: linalg.generic {indexing_maps = [#[[FULL]], #[[BCAST]], #[[FULL]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %{{.*}} : tensor<?x?x8xf32>, tensor<?x8xf32>)
func.func @layers(%a: tensor<?x?x8xf32>, %b: tensor<?x8xf32>) -> tensor<?x?x8xf32> {
  %r = lstm.pointwise ins(%a, %b : tensor<?x?x8xf32>, tensor<?x8xf32>) -> tensor<?x?x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    lstm.pointwise_yield %s : f32
  }
  return %r : tensor<?x?x8xf32>
}
