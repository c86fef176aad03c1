// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-share-assembled-columns -split-input-file | FileCheck %s

// Cho's GRU's backward step (batched over 3 layers, hidden 4): the gates'
// gradients dG = [dr dz dn] and [dr dz], the operand of the recurrent
// product, assembled from the same pieces. [dr dz] becomes dG's first
// eight columns; dG's last insert moves up to the product, its own
// assembly goes.
// CHECK-LABEL: func.func @gru_step
// CHECK-SAME: (%[[DR:.*]]: tensor<3x?x4xf32>, %[[DZ:.*]]: tensor<3x?x4xf32>, %[[DN:.*]]: tensor<3x?x4xf32>, %[[R:.*]]: tensor<3x4x8xf32>, %[[B:.*]]: index)
// CHECK: %[[E:.*]] = tensor.empty(%[[B]]) : tensor<3x?x12xf32>
// CHECK-NOT: tensor<3x?x8xf32>
// CHECK: %[[G0:.*]] = tensor.insert_slice %[[DN]] into %[[E]][0, 0, 8]
// CHECK: %[[G1:.*]] = tensor.insert_slice %[[DZ]] into %[[G0]][0, 0, 4]
// CHECK: %[[G:.*]] = tensor.insert_slice %[[DR]] into %[[G1]][0, 0, 0]
// CHECK: %[[RZ:.*]] = tensor.extract_slice %[[G]][0, 0, 0] [3, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x12xf32> to tensor<3x?x8xf32>
// CHECK: %[[P:.*]] = linalg.batch_matmul {{.*}}ins(%[[RZ]], %[[R]] :
// CHECK: return %[[G]], %[[P]]
func.func @gru_step(%dr: tensor<3x?x4xf32>, %dz: tensor<3x?x4xf32>, %dn: tensor<3x?x4xf32>,
                    %r: tensor<3x4x8xf32>, %B: index) -> (tensor<3x?x12xf32>, tensor<3x?x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %e12 = tensor.empty(%B) : tensor<3x?x12xf32>
  %e8 = tensor.empty(%B) : tensor<3x?x8xf32>
  %p0 = tensor.insert_slice %dz into %e8[0, 0, 4] [3, %B, 4] [1, 1, 1] : tensor<3x?x4xf32> into tensor<3x?x8xf32>
  %g0 = tensor.insert_slice %dn into %e12[0, 0, 8] [3, %B, 4] [1, 1, 1] : tensor<3x?x4xf32> into tensor<3x?x12xf32>
  %g1 = tensor.insert_slice %dz into %g0[0, 0, 4] [3, %B, 4] [1, 1, 1] : tensor<3x?x4xf32> into tensor<3x?x12xf32>
  %p1 = tensor.insert_slice %dr into %p0[0, 0, 0] [3, %B, 4] [1, 1, 1] : tensor<3x?x4xf32> into tensor<3x?x8xf32>
  %eo = tensor.empty(%B) : tensor<3x?x4xf32>
  %z = linalg.fill ins(%zero : f32) outs(%eo : tensor<3x?x4xf32>) -> tensor<3x?x4xf32>
  %prod = linalg.batch_matmul
      indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, affine_map<(b, m, n, k) -> (b, n, k)>,
                       affine_map<(b, m, n, k) -> (b, m, n)>]
      ins(%p1, %r : tensor<3x?x8xf32>, tensor<3x4x8xf32>) outs(%z : tensor<3x?x4xf32>) -> tensor<3x?x4xf32>
  %g = tensor.insert_slice %dr into %g1[0, 0, 0] [3, %B, 4] [1, 1, 1] : tensor<3x?x4xf32> into tensor<3x?x12xf32>
  return %g, %prod : tensor<3x?x12xf32>, tensor<3x?x4xf32>
}

// -----

// Left alone: pieces at other relative columns (dz then dr), a part with a
// gap (an undefined column is no slice of a defined one), and a part that
// is a piece of the whole (read by the whole's own assembly).
// CHECK-LABEL: func.func @not_slices
// CHECK-NOT: tensor.extract_slice
// CHECK: return
func.func @not_slices(%dr: tensor<2x4xf32>, %dz: tensor<2x4xf32>, %dn: tensor<2x4xf32>)
    -> (tensor<2x12xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x16xf32>) {
  %e12 = tensor.empty() : tensor<2x12xf32>
  %g0 = tensor.insert_slice %dn into %e12[0, 8] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %g1 = tensor.insert_slice %dz into %g0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %g = tensor.insert_slice %dr into %g1[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %e8 = tensor.empty() : tensor<2x8xf32>
  %s0 = tensor.insert_slice %dr into %e8[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %swapped = tensor.insert_slice %dz into %s0[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %e8b = tensor.empty() : tensor<2x8xf32>
  %gap = tensor.insert_slice %dz into %e8b[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %e16 = tensor.empty() : tensor<2x16xf32>
  %w0 = tensor.insert_slice %swapped into %e16[0, 8] [2, 8] [1, 1] : tensor<2x8xf32> into tensor<2x16xf32>
  %w = tensor.insert_slice %dn into %w0[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x16xf32>
  return %g, %swapped, %gap, %w : tensor<2x12xf32>, tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x16xf32>
}

// -----

// Three assemblies, each the leading columns of the next: [dr dz] becomes
// a slice of dG first and goes; [dr] then becomes a slice of dG too (not of
// the assembly that is gone).
// CHECK-LABEL: func.func @nested
// CHECK-SAME: (%[[DR:.*]]: tensor<2x4xf32>, %[[DZ:.*]]: tensor<2x4xf32>, %[[DN:.*]]: tensor<2x4xf32>, %[[W8:.*]]: tensor<8x3xf32>, %[[W4:.*]]: tensor<4x3xf32>)
// CHECK-NOT: tensor<2x8xf32>
// CHECK: %[[G:.*]] = tensor.insert_slice %[[DR]] into %{{.*}}[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
// CHECK: %[[RZ:.*]] = tensor.extract_slice %[[G]][0, 0] [2, 8] [1, 1] : tensor<2x12xf32> to tensor<2x8xf32>
// CHECK: linalg.matmul ins(%[[RZ]], %[[W8]]
// CHECK: %[[R:.*]] = tensor.extract_slice %[[G]][0, 0] [2, 4] [1, 1] : tensor<2x12xf32> to tensor<2x4xf32>
// CHECK: linalg.matmul ins(%[[R]], %[[W4]]
// CHECK: return %[[G]],
func.func @nested(%dr: tensor<2x4xf32>, %dz: tensor<2x4xf32>, %dn: tensor<2x4xf32>,
                  %w8: tensor<8x3xf32>, %w4: tensor<4x3xf32>)
    -> (tensor<2x12xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e12 = tensor.empty() : tensor<2x12xf32>
  %g0 = tensor.insert_slice %dn into %e12[0, 8] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %g1 = tensor.insert_slice %dz into %g0[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %e8 = tensor.empty() : tensor<2x8xf32>
  %p0 = tensor.insert_slice %dz into %e8[0, 4] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %p = tensor.insert_slice %dr into %p0[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x8xf32>
  %e4 = tensor.empty() : tensor<2x4xf32>
  %a = tensor.insert_slice %dr into %e4[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x4xf32>
  %g = tensor.insert_slice %dr into %g1[0, 0] [2, 4] [1, 1] : tensor<2x4xf32> into tensor<2x12xf32>
  %eo = tensor.empty() : tensor<2x3xf32>
  %z = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x3xf32>) -> tensor<2x3xf32>
  %m8 = linalg.matmul ins(%p, %w8 : tensor<2x8xf32>, tensor<8x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
  %m4 = linalg.matmul ins(%a, %w4 : tensor<2x4xf32>, tensor<4x3xf32>) outs(%z : tensor<2x3xf32>) -> tensor<2x3xf32>
  return %g, %m8, %m4 : tensor<2x12xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}
