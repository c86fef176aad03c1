// lstm-fuse-pointwise-generics: pointwise producers fuse into pointwise
// consumers, never into a contraction (the GEMM stays a GEMM for cuBLAS and
// the producer is not recomputed per reduction step).
// RUN: lstm-opt %s -split-input-file -lstm-fuse-pointwise-generics | FileCheck %s
// Upstream's pass, for contrast, fuses the sigmoid into the GEMM.
// RUN: lstm-opt %s -split-input-file -linalg-fuse-elementwise-ops | FileCheck %s --check-prefix=UPSTREAM

#pw = affine_map<(d0, d1) -> (d0, d1)>
#a = affine_map<(d0, d1, d2) -> (d0, d2)>
#b = affine_map<(d0, d1, d2) -> (d1, d2)>
#c = affine_map<(d0, d1, d2) -> (d0, d1)>

// Cho's GRU: n reads R_n (sigmoid(r) * h).
// CHECK-LABEL: func.func @into_gemm
// CHECK: %[[RH:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: math.exp
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} ins(%[[RH]], %{{.*}} :
// CHECK-NOT: math.exp
// CHECK: linalg.yield
// UPSTREAM-LABEL: func.func @into_gemm
// UPSTREAM: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// UPSTREAM: math.exp
func.func @into_gemm(%r: tensor<4x8xf32>, %h: tensor<4x8xf32>, %R: tensor<8x8xf32>, %acc: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %one = arith.constant 1.0 : f32
  %rh = linalg.generic {indexing_maps = [#pw, #pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%r, %h : tensor<4x8xf32>, tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %n = arith.negf %x : f32
    %e = math.exp %n : f32
    %d = arith.addf %e, %one : f32
    %s = arith.divf %one, %d : f32
    %m = arith.mulf %s, %y : f32
    linalg.yield %m : f32
  } -> tensor<4x8xf32>
  %g = linalg.generic {indexing_maps = [#a, #b, #c], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%rh, %R : tensor<4x8xf32>, tensor<8x8xf32>) outs(%acc : tensor<4x8xf32>) {
  ^bb0(%x: f32, %w: f32, %o: f32):
    %p = arith.mulf %x, %w : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  return %g : tensor<4x8xf32>
}

// -----

#pw = affine_map<(d0, d1) -> (d0, d1)>

// Two pointwise generics: one.
// CHECK-LABEL: func.func @pointwise
// CHECK: linalg.generic
// CHECK: math.exp
// CHECK: math.tanh
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @pointwise(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %init = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.exp %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  %t = linalg.generic {indexing_maps = [#pw, #pw], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<4x8xf32>) outs(%init : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = math.tanh %a : f32
    linalg.yield %v : f32
  } -> tensor<4x8xf32>
  return %t : tensor<4x8xf32>
}
