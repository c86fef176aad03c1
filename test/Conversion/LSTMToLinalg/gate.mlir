// RUN: lstm-opt %s --convert-lstm-to-linalg --canonicalize --split-input-file | FileCheck %s

// One contraction per (input, weight) pair, accumulated from zero, then one
// pointwise epilogue: biases, peephole, activation.
// CHECK-DAG: #[[IN:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[ACC:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ROW:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[VEC:.*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-LABEL: func.func @sigmoid_peephole
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[H:.*]]: tensor<2x8xf32>, %[[WX:.*]]: tensor<8x4xf32>, %[[WH:.*]]: tensor<8x8xf32>, %[[B1:.*]]: tensor<8xf32>, %[[B2:.*]]: tensor<8xf32>, %[[P:.*]]: tensor<8xf32>, %[[C:.*]]: tensor<2x8xf32>)
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[A1:.*]] = linalg.generic {indexing_maps = [#[[IN]], #[[W]], #[[ACC]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[WX]] : {{.*}}) outs(%[[ZERO]] : {{.*}})
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: %[[A2:.*]] = linalg.generic {{.*}} ins(%[[H]], %[[WH]] : {{.*}}) outs(%[[A1]] : {{.*}})
// CHECK: linalg.generic {indexing_maps = [#[[ROW]], #[[VEC]], #[[VEC]], #[[VEC]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "parallel"]} ins(%[[A2]], %[[B1]], %[[B2]], %[[P]], %[[C]] : {{.*}})
// CHECK: ^bb0(%[[A:.*]]: f32, %[[BA:.*]]: f32, %[[BB:.*]]: f32, %[[PP:.*]]: f32, %[[CC:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[S1:.*]] = arith.addf %[[A]], %[[BA]]
// CHECK:   %[[S2:.*]] = arith.addf %[[S1]], %[[BB]]
// CHECK:   %[[PC:.*]] = arith.mulf %[[PP]], %[[CC]]
// CHECK:   %[[S3:.*]] = arith.addf %[[S2]], %[[PC]]
// CHECK:   %[[N:.*]] = arith.negf %[[S3]]
// CHECK:   %[[E:.*]] = math.exp %[[N]]
// CHECK:   %[[D:.*]] = arith.addf %[[E]], %{{.*}}
// CHECK:   %[[R:.*]] = arith.divf %{{.*}}, %[[D]]
// CHECK:   linalg.yield %[[R]]
func.func @sigmoid_peephole(%x: tensor<2x4xf32>, %h: tensor<2x8xf32>,
    %Wx: tensor<8x4xf32>, %Wh: tensor<8x8xf32>, %b1: tensor<8xf32>,
    %b2: tensor<8xf32>, %p: tensor<8xf32>, %c: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %g = lstm.gate sigmoid (%x, %h : tensor<2x4xf32>, tensor<2x8xf32>)
      weights(%Wx, %Wh : tensor<8x4xf32>, tensor<8x8xf32>)
      bias(%b1, %b2 : tensor<8xf32>, tensor<8xf32>)
      peephole(%p, %c : tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @relu
// CHECK: %[[Z:.*]] = arith.constant 0.000000e+00 : f64
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK:   arith.maximumf %{{.*}}, %[[Z]] : f64
func.func @relu(%x: tensor<?x4xf64>, %W: tensor<8x4xf64>) -> tensor<?x8xf64> {
  %g = lstm.gate relu (%x : tensor<?x4xf64>) weights(%W : tensor<8x4xf64>) -> tensor<?x8xf64>
  return %g : tensor<?x8xf64>
}

// -----

// identity adds no activation (the copy-only epilogue folds away); a dynamic
// weight gets a run-time shape check.
// CHECK-LABEL: func.func @identity_dynamic_weight
// CHECK: cf.assert %{{.*}}, "lstm.gate: weight #0 has a different number of columns than input #0 has features
// CHECK: %[[R:.*]] = linalg.generic
// CHECK-NOT: linalg.generic
// CHECK-NOT: math.
// CHECK: return %[[R]]
func.func @identity_dynamic_weight(%x: tensor<2x?xf32>, %W: tensor<8x?xf32>) -> tensor<2x8xf32> {
  %g = lstm.gate identity (%x : tensor<2x?xf32>) weights(%W : tensor<8x?xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @one_minus
// CHECK: linalg.generic
// CHECK: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK:   %[[R:.*]] = arith.subf %{{.*}}, %[[IN]]
// CHECK:   linalg.yield %[[R]]
func.func @one_minus(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = lstm.one_minus %x : tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}

// -----

// Addends are summed in the epilogue; with no products the accumulator is
// only the zero fill, and the extents come from the first addend.
// CHECK-LABEL: func.func @addends_only
// CHECK-SAME: (%[[A:.*]]: tensor<?x8xf32>, %[[B:.*]]: tensor<?x8xf32>, %[[BIAS:.*]]: tensor<8xf32>)
// CHECK: cf.assert %{{.*}}, "lstm.gate: addend #1 does not match the gate's batch size
// CHECK: %[[ACC:.*]] = linalg.fill
// CHECK-NOT: reduction
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %[[A]], %[[B]], %[[BIAS]] : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>)
// CHECK: ^bb0(%[[VACC:.*]]: f32, %[[VA:.*]]: f32, %[[VB:.*]]: f32, %[[VBIAS:.*]]: f32, %{{.*}}: f32):
// CHECK: %[[S1:.*]] = arith.addf %[[VACC]], %[[VA]] : f32
// CHECK: %[[S2:.*]] = arith.addf %[[S1]], %[[VB]] : f32
// CHECK: arith.addf %[[S2]], %[[VBIAS]] : f32
func.func @addends_only(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>, %bias: tensor<8xf32>) -> tensor<?x8xf32> {
  %g = lstm.gate sigmoid add(%a, %b : tensor<?x8xf32>, tensor<?x8xf32>) bias(%bias : tensor<8xf32>) -> tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}

// -----

// The batched gate: each product is one linalg.batch_matmul reading the
// weights [L, H, K] transposed; biases and the peephole weight are indexed
// by (group, feature) in the epilogue.
// CHECK-DAG: #[[BIN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BW:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[BACC:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[VEC3:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[X:.*]]: tensor<3x2x4xf32>, %[[H:.*]]: tensor<3x2x8xf32>, %[[WX:.*]]: tensor<3x8x4xf32>, %[[WH:.*]]: tensor<3x8x8xf32>, %[[B:.*]]: tensor<3x8xf32>)
// CHECK: %[[ZERO:.*]] = linalg.fill {{.*}} -> tensor<3x2x8xf32>
// CHECK: %[[A1:.*]] = linalg.batch_matmul indexing_maps = [#[[BIN]], #[[BW]], #[[BACC]]] ins(%[[X]], %[[WX]] : tensor<3x2x4xf32>, tensor<3x8x4xf32>) outs(%[[ZERO]] : tensor<3x2x8xf32>)
// CHECK: %[[A2:.*]] = linalg.batch_matmul indexing_maps = [#[[BIN]], #[[BW]], #[[BACC]]] ins(%[[H]], %[[WH]] : tensor<3x2x8xf32>, tensor<3x8x8xf32>) outs(%[[A1]] : tensor<3x2x8xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[ROW3]], #[[VEC3]], #[[ROW3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[A2]], %[[B]] : tensor<3x2x8xf32>, tensor<3x8xf32>)
// CHECK:   math.tanh
func.func @batched(%x: tensor<3x2x4xf32>, %h: tensor<3x2x8xf32>, %Wx: tensor<3x8x4xf32>,
                   %Wh: tensor<3x8x8xf32>, %b: tensor<3x8xf32>) -> tensor<3x2x8xf32> {
  %g = lstm.gate tanh (%x, %h : tensor<3x2x4xf32>, tensor<3x2x8xf32>)
      weights(%Wx, %Wh : tensor<3x8x4xf32>, tensor<3x8x8xf32>)
      bias(%b : tensor<3x8xf32>) -> tensor<3x2x8xf32>
  return %g : tensor<3x2x8xf32>
}

// -----

// A gate with only a peephole term (the backward pass scales cotangents by a
// peephole weight so): p ⊙ s, extents from the state.
// CHECK-LABEL: func.func @peephole_only
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
func.func @peephole_only(%p: tensor<8xf32>, %s: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %g = lstm.gate identity peephole(%p, %s : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}
