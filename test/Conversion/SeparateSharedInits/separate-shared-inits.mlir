// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-separate-shared-inits -split-input-file | FileCheck %s

// Two products accumulating into one zero fill (as CSE leaves the
// lowering's) and two pointwise ops writing one empty tensor: each writer
// gets its own, made right before it, and the originals go.
// CHECK-LABEL: func.func @shared
// CHECK-SAME: (%[[A:.*]]: tensor<?x4xf32>, %[[W:.*]]: tensor<4x4xf32>, %[[B:.*]]: index)
// CHECK-NEXT: %[[ZERO:.*]] = arith.constant 0.0
// CHECK-NEXT: %[[E1:.*]] = tensor.empty(%[[B]]) : tensor<?x4xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E1]] : tensor<?x4xf32>)
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[W]] : {{.*}}) outs(%[[F1]] :
// CHECK-NEXT: %[[E2:.*]] = tensor.empty(%[[B]]) : tensor<?x4xf32>
// CHECK-NEXT: %[[G:.*]] = linalg.generic {{.*}} ins(%[[P]] : tensor<?x4xf32>) outs(%[[E2]] : tensor<?x4xf32>)
// CHECK: %[[E3:.*]] = tensor.empty(%[[B]]) : tensor<?x4xf32>
// CHECK-NEXT: %[[F3:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E3]] : tensor<?x4xf32>)
// CHECK-NEXT: %[[Q:.*]] = linalg.matmul ins(%[[G]], %[[W]] : {{.*}}) outs(%[[F3]] :
// CHECK-NEXT: %[[E4:.*]] = tensor.empty(%[[B]]) : tensor<?x4xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[Q]], %[[P]] : tensor<?x4xf32>, tensor<?x4xf32>) outs(%[[E4]] : tensor<?x4xf32>)
// CHECK-NOT: tensor.empty
// CHECK: return
func.func @shared(%a: tensor<?x4xf32>, %w: tensor<4x4xf32>, %B: index) -> tensor<?x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%B) : tensor<?x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<?x4xf32>) -> tensor<?x4xf32>
  %p = linalg.matmul ins(%a, %w : tensor<?x4xf32>, tensor<4x4xf32>) outs(%z : tensor<?x4xf32>) -> tensor<?x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    linalg.yield %t : f32
  } -> tensor<?x4xf32>
  %q = linalg.matmul ins(%g, %w : tensor<?x4xf32>, tensor<4x4xf32>) outs(%z : tensor<?x4xf32>) -> tensor<?x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>,
                                        affine_map<(b, n) -> (b, n)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%q, %p : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %t = arith.addf %x, %y : f32
    linalg.yield %t : f32
  } -> tensor<?x4xf32>
  return %s : tensor<?x4xf32>
}

// -----

// Left alone: a fill with one writer; an empty tensor that a value is
// assembled in (inserts, and a slice that is written) stays one tensor; a
// fill of a function argument is not a fresh tensor.
// CHECK-LABEL: func.func @alone
// CHECK-COUNT-1: linalg.fill
// CHECK-COUNT-1: tensor.empty() : tensor<2x8xf32>
// CHECK: %[[H:.*]] = tensor.extract_slice %[[E:.*]][0, 0] [2, 4]
// CHECK: tensor.insert_slice %{{.*}} into %[[E]][0, 0]
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%arg1 : tensor<2x4xf32>)
// CHECK-NOT: linalg.fill
func.func @alone(%a: tensor<2x4xf32>, %acc: tensor<2x4xf32>, %w: tensor<4x4xf32>)
    -> (tensor<2x4xf32>, tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e4 = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e4 : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p = linalg.matmul ins(%a, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %e8 = tensor.empty() : tensor<2x8xf32>
  %half = tensor.extract_slice %e8[0, 0] [2, 4] [1, 1] : tensor<2x8xf32> to tensor<2x4xf32>
  %c = linalg.copy ins(%a : tensor<2x4xf32>) outs(%half : tensor<2x4xf32>) -> tensor<2x4xf32>
  %i0 = tensor.insert_slice %c into %e8[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %i1 = tensor.insert_slice %p into %i0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %za = linalg.fill ins(%zero : f32) outs(%acc : tensor<2x4xf32>) -> tensor<2x4xf32>
  %q = linalg.matmul ins(%a, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%za : tensor<2x4xf32>) -> tensor<2x4xf32>
  return %p, %i1, %q, %za : tensor<2x4xf32>, tensor<2x8xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// A zero fill that a product accumulates into and an elementwise op
// overwrites without reading it: the product gets a fill, the other op an
// empty tensor (a fill there would be a kernel whose zeros nothing reads).
// CHECK-LABEL: func.func @fill_not_read
// CHECK: %[[E1:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT: %[[F1:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E1]] : tensor<2x4xf32>)
// CHECK-NEXT: %[[P:.*]] = linalg.matmul ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[F1]] :
// CHECK-NEXT: %[[E2:.*]] = tensor.empty() : tensor<2x4xf32>
// CHECK-NEXT: linalg.generic {{.*}} ins(%[[P]] : tensor<2x4xf32>) outs(%[[E2]] : tensor<2x4xf32>)
// CHECK-NOT: linalg.fill
// CHECK: return
func.func @fill_not_read(%a: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<2x4xf32>) -> tensor<2x4xf32>
  %p = linalg.matmul ins(%a, %w : tensor<2x4xf32>, tensor<4x4xf32>) outs(%z : tensor<2x4xf32>) -> tensor<2x4xf32>
  %g = linalg.generic {indexing_maps = [affine_map<(b, n) -> (b, n)>, affine_map<(b, n) -> (b, n)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<2x4xf32>) outs(%z : tensor<2x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %t = math.tanh %x : f32
    linalg.yield %t : f32
  } -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}
