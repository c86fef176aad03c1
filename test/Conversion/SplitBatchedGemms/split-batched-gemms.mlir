// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-split-batched-gemms -split-input-file | FileCheck %s --check-prefixes=CHECK,FUSED
// RUN: lstm-opt %s "--lstm-split-batched-gemms=splits=4 fused-depth-ratio=1.5" -split-input-file | FileCheck %s --check-prefix=FOUR
// RUN: lstm-opt %s --lstm-split-batched-gemms=fused-depth-ratio=1.5 -split-input-file | FileCheck %s --check-prefix=UNSPLIT

// A backward stack's link product at appleyard's sizes (L = 4, K = 2048,
// N = 1024) with a dynamic batch: X sliced to [L·8, B, 256] where it is
// multiplied, W right after its definition (here the function's argument),
// the 32 partial products summed into the accumulator by one elementwise
// generic (each element's 8 terms in order after the accumulator's value);
// below 8 rows the product stays whole.
// CHECK-LABEL: func.func @link_product
// CHECK-SAME: (%[[X:.*]]: tensor<4x?x2048xf32>, %[[W:.*]]: tensor<4x1024x2048xf32>, %[[ACC:.*]]: tensor<4x?x1024xf32>)
// CHECK: %[[WE:.*]] = tensor.expand_shape %[[W]] {{\[}}[0], [1], [2, 3]] output_shape [4, 1024, 8, 256]
// CHECK: %[[WT:.*]] = linalg.transpose ins(%[[WE]] : tensor<4x1024x8x256xf32>) outs(%{{.*}} : tensor<4x8x1024x256xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[WS:.*]] = tensor.collapse_shape %[[WT]] {{\[}}[0, 1], [2], [3]] : tensor<4x8x1024x256xf32> into tensor<32x1024x256xf32>
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK: %[[ENOUGH:.*]] = arith.cmpi sge, %[[B]], %c8
// CHECK: %[[R:.*]] = scf.if %[[ENOUGH]] -> (tensor<4x?x1024xf32>) {
// CHECK: %[[XE:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [4, %{{.*}}, 8, 256]
// CHECK: %[[XT:.*]] = linalg.transpose ins(%[[XE]] : tensor<4x?x8x256xf32>) outs(%{{.*}} : tensor<4x8x?x256xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[XS:.*]] = tensor.collapse_shape %[[XT]] {{\[}}[0, 1], [2], [3]] : tensor<4x8x?x256xf32> into tensor<32x?x256xf32>
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<32x?x1024xf32>)
// CHECK: %[[P:.*]] = linalg.batch_matmul indexing_maps = [#[[$XMAP:.*]], #[[$WMAP:.*]], #[[$CMAP:.*]]] ins(%[[XS]], %[[WS]] : tensor<32x?x256xf32>, tensor<32x1024x256xf32>) outs(%[[ZEROS]] : tensor<32x?x1024xf32>)
// CHECK: %[[PG:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2], [3]] output_shape [4, 8, %{{.*}}, 1024]
// CHECK: %[[P0:.*]] = tensor.extract_slice %[[PG]][0, 0, 0, 0] [4, 1, %{{.*}}, 1024] [1, 1, 1, 1] : tensor<4x8x?x1024xf32> to tensor<4x?x1024xf32>
// CHECK-COUNT-7: tensor.extract_slice %[[PG]][0, {{[1-7]}}, 0, 0] [4, 1, %{{.*}}, 1024]
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[P0]], {{.*}} outs(%[[ACC]] : tensor<4x?x1024xf32>)
// CHECK-NEXT: ^bb0(%[[T0:[^:]*]]: f32, {{.*}}, %[[C:[^:]*]]: f32):
// CHECK-NEXT: %[[S0:.*]] = arith.addf %[[C]], %[[T0]]
// CHECK-COUNT-7: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK: scf.yield %[[SUM]]
// CHECK: } else {
// CHECK: %[[WHOLE:.*]] = linalg.batch_matmul {{.*}} ins(%[[X]], %[[W]] : tensor<4x?x2048xf32>, tensor<4x1024x2048xf32>)
// CHECK: scf.yield %[[WHOLE]]
// CHECK: return %[[R]]
// FOUR-LABEL: func.func @link_product
// FOUR: tensor<16x1024x512xf32>
// FOUR: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x?x512xf32>, tensor<16x1024x512xf32>)
func.func @link_product(%x: tensor<4x?x2048xf32>, %w: tensor<4x1024x2048xf32>,
                        %acc: tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32> {
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x, %w : tensor<4x?x2048xf32>, tensor<4x1024x2048xf32>)
      outs(%acc : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
  return %r : tensor<4x?x1024xf32>
}

// -----

// 1.5 times as deep as wide: Cho's GRU's backward diagonal at appleyard's
// sizes, its recurrent product R_rzᵀ and the links' as one
// (`[4, B, 1536] × [4, 1024, 1536]`), split in 8 slices of 192 (measured
// faster split in fp32: docs/benchmarks.md).
// CHECK-LABEL: func.func @gru_link_product
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<32x?x192xf32>, tensor<32x1024x192xf32>)
func.func @gru_link_product(%x: tensor<4x?x1536xf32>, %w: tensor<4x1024x1536xf32>,
                            %acc: tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32> {
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x, %w : tensor<4x?x1536xf32>, tensor<4x1024x1536xf32>)
      outs(%acc : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
  return %r : tensor<4x?x1024xf32>
}

// -----

// The usual accumulator, zeros: the sum starts from the first term and does
// not read them, the whole product's branch fills its own, and the fill
// before the branch is gone.
// CHECK-LABEL: func.func @zero_filled
// CHECK: %[[E:.*]] = tensor.empty(%{{.*}}) : tensor<4x?x1024xf32>
// CHECK-NOT: linalg.fill {{.*}} tensor<4x?x1024xf32>
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4x?x1024xf32>)
// CHECK-NEXT: ^bb0(%[[T0:[^:]*]]: f32, %[[T1:[^:]*]]: f32,
// CHECK-NEXT: arith.addf %[[T0]], %[[T1]]
// CHECK: } else {
// CHECK-NEXT: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<4x?x1024xf32>)
// CHECK-NEXT: linalg.batch_matmul {{.*}} outs(%[[Z]] : tensor<4x?x1024xf32>)
func.func @zero_filled(%x: tensor<4x?x2048xf32>, %w: tensor<4x1024x2048xf32>)
    -> tensor<4x?x1024xf32> {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %x, %c1 : tensor<4x?x2048xf32>
  %e = tensor.empty(%b) : tensor<4x?x1024xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x, %w : tensor<4x?x2048xf32>, tensor<4x1024x2048xf32>)
      outs(%acc : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
  return %r : tensor<4x?x1024xf32>
}

// -----

// A static batch of 64 needs no branch; W is defined before the loop and
// transposed there once, X (the step's value) in the loop; two products
// on the same weight share its transposition. K = 1536 (Cho's GRU's
// link, 3N, onto an input of 512): 8 slices of 192.
// CHECK-LABEL: func.func @in_loop
// CHECK: %[[W:.*]] = linalg.fill
// CHECK-NEXT: tensor.expand_shape %[[W]]
// CHECK-NEXT: tensor.empty() : tensor<2x8x512x192xf32>
// CHECK-NEXT: linalg.transpose
// CHECK-NEXT: %[[WS:.*]] = tensor.collapse_shape
// CHECK-NOT: linalg.transpose {{.*}} tensor<2x512x8x192xf32>
// CHECK: scf.for
// CHECK-NOT: scf.if
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %[[WS]] : tensor<16x64x192xf32>, tensor<16x512x192xf32>)
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %[[WS]] : tensor<16x64x192xf32>, tensor<16x512x192xf32>)
func.func @in_loop(%x: tensor<2x64x1536xf32>, %acc: tensor<2x64x512xf32>, %n: index)
    -> tensor<2x64x512xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x512x1536xf32>
  %w = linalg.fill ins(%one : f32) outs(%e : tensor<2x512x1536xf32>) -> tensor<2x512x1536xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %acc) -> (tensor<2x64x512xf32>) {
    %p = linalg.batch_matmul
        indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                         affine_map<(l, b, h, k) -> (l, h, k)>,
                         affine_map<(l, b, h, k) -> (l, b, h)>]
        ins(%x, %w : tensor<2x64x1536xf32>, tensor<2x512x1536xf32>)
        outs(%a : tensor<2x64x512xf32>) -> tensor<2x64x512xf32>
    %q = linalg.batch_matmul
        indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                         affine_map<(l, b, h, k) -> (l, h, k)>,
                         affine_map<(l, b, h, k) -> (l, b, h)>]
        ins(%x, %w : tensor<2x64x1536xf32>, tensor<2x512x1536xf32>)
        outs(%p : tensor<2x64x512xf32>) -> tensor<2x64x512xf32>
    scf.yield %q : tensor<2x64x512xf32>
  }
  return %r : tensor<2x64x512xf32>
}

// -----

// Left alone: a forward step's product (K = 512 below the width 2048), one
// less than 1.5 times as deep as wide (K = 1024, width 1024), a shallow one
// (K = 256 < min-depth), a static batch of 1, the default maps (W as
// [L, K, N]).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: linalg.transpose
// CHECK-NOT: scf.if
// CHECK: return
func.func @left_alone(%x: tensor<4x?x512xf32>, %w: tensor<4x2048x512xf32>,
                      %acc: tensor<4x?x2048xf32>,
                      %x2: tensor<4x?x256xf32>, %w2: tensor<4x64x256xf32>,
                      %acc2: tensor<4x?x64xf32>,
                      %x3: tensor<4x1x2048xf32>, %w3: tensor<4x512x2048xf32>,
                      %acc3: tensor<4x1x512xf32>,
                      %w4: tensor<4x2048x512xf32>, %acc4: tensor<4x1x512xf32>,
                      %x5: tensor<4x?x1024xf32>, %w5: tensor<4x1024x1024xf32>,
                      %acc5: tensor<4x?x1024xf32>)
    -> (tensor<4x?x2048xf32>, tensor<4x?x64xf32>, tensor<4x1x512xf32>, tensor<4x1x512xf32>, tensor<4x?x1024xf32>) {
  %r = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x, %w : tensor<4x?x512xf32>, tensor<4x2048x512xf32>)
      outs(%acc : tensor<4x?x2048xf32>) -> tensor<4x?x2048xf32>
  %r2 = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x2, %w2 : tensor<4x?x256xf32>, tensor<4x64x256xf32>)
      outs(%acc2 : tensor<4x?x64xf32>) -> tensor<4x?x64xf32>
  %r3 = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x3, %w3 : tensor<4x1x2048xf32>, tensor<4x512x2048xf32>)
      outs(%acc3 : tensor<4x1x512xf32>) -> tensor<4x1x512xf32>
  %r4 = linalg.batch_matmul
      ins(%x3, %w4 : tensor<4x1x2048xf32>, tensor<4x2048x512xf32>)
      outs(%acc4 : tensor<4x1x512xf32>) -> tensor<4x1x512xf32>
  %r5 = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x5, %w5 : tensor<4x?x1024xf32>, tensor<4x1024x1024xf32>)
      outs(%acc5 : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
  return %r, %r2, %r3, %r4, %r5 : tensor<4x?x2048xf32>, tensor<4x?x64xf32>, tensor<4x1x512xf32>, tensor<4x1x512xf32>, tensor<4x?x1024xf32>
}

// Options that cannot be meant are refused, naming them.
// RUN: not lstm-opt %s --lstm-split-batched-gemms=splits=0 2>&1 | FileCheck %s --check-prefix=SPLITS
// RUN: not lstm-opt %s --lstm-split-batched-gemms=min-rows=-1 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not lstm-opt %s --lstm-split-batched-gemms=fused-depth-ratio=0 2>&1 | FileCheck %s --check-prefix=RATIO
// SPLITS: error: lstm-split-batched-gemms: splits (0), min-depth (512), depth-ratio (1.5) and fused-depth-ratio (1) must be positive, min-rows (8) not negative
// ROWS: error: lstm-split-batched-gemms: splits (8), min-depth (512), depth-ratio (1.5) and fused-depth-ratio (1) must be positive, min-rows (-1) not negative
// RATIO: error: lstm-split-batched-gemms: splits (8), min-depth (512), depth-ratio (1.5) and fused-depth-ratio (0) must be positive, min-rows (8) not negative

// -----

#id = affine_map<(l, b, n) -> (l, b, n)>

// A backward diagonal's dG assembled from the four gate gradients that one
// generic computes (appleyard's sizes): split at the gates (S = 4, not 8)
// without transposing dG. The generic also computes each gate into its
// matrices of the split operand [4, 4, B, 512], made before it; dG itself
// is still assembled (a diagonal stores it for the weight gradients).
// CHECK-LABEL: func.func @gate_pieces
// CHECK-SAME: (%[[A:[^:]*]]: tensor<4x?x512xf32>, %[[W:[^:]*]]: tensor<4x1024x2048xf32>, %[[B:[^:]*]]: index)
// CHECK: %[[WT:.*]] = linalg.transpose ins(%{{.*}} : tensor<4x1024x4x512xf32>) outs(%{{.*}} : tensor<4x4x1024x512xf32>) permutation = [0, 2, 1, 3]
// CHECK: %[[WS:.*]] = tensor.collapse_shape %[[WT]] {{\[}}[0, 1], [2], [3]] : tensor<4x4x1024x512xf32> into tensor<16x1024x512xf32>
// CHECK: %[[E:.*]] = tensor.empty(%[[B]]) : tensor<4x?x512xf32>
// CHECK: %[[SE:.*]] = tensor.empty(%{{.*}}) : tensor<4x4x?x512xf32>
// CHECK-DAG: %[[S0:.*]] = tensor.extract_slice %[[SE]][0, 0, 0, 0] [4, 1, %{{.*}}, 512] [1, 1, 1, 1] : tensor<4x4x?x512xf32> to tensor<4x?x512xf32>
// CHECK-DAG: %[[S3:.*]] = tensor.extract_slice %[[SE]][0, 3, 0, 0] [4, 1, %{{.*}}, 512] [1, 1, 1, 1] : tensor<4x4x?x512xf32> to tensor<4x?x512xf32>
// CHECK: %[[G:.*]]:8 = linalg.generic {{.*}} ins(%[[A]] : tensor<4x?x512xf32>) outs(%[[E]], %[[E]], %[[E]], %[[E]], %[[S0]], %{{.*}}, %{{.*}}, %[[S3]] :
// CHECK: linalg.yield %[[V0:.*]], %[[V1:.*]], %[[V2:.*]], %[[V3:.*]], %[[V0]], %[[V1]], %[[V2]], %[[V3]] :
// CHECK: %[[I0:.*]] = tensor.insert_slice %[[G]]#4 into %[[SE]][0, 0, 0, 0] [4, 1, %{{.*}}, 512]
// CHECK: %[[I1:.*]] = tensor.insert_slice %[[G]]#5 into %[[I0]][0, 1, 0, 0]
// CHECK: %[[I2:.*]] = tensor.insert_slice %[[G]]#6 into %[[I1]][0, 2, 0, 0]
// CHECK: %[[I3:.*]] = tensor.insert_slice %[[G]]#7 into %[[I2]][0, 3, 0, 0]
// CHECK: %[[XS:.*]] = tensor.collapse_shape %[[I3]] {{\[}}[0, 1], [2], [3]] : tensor<4x4x?x512xf32> into tensor<16x?x512xf32>
// CHECK: %[[DG:.*]] = tensor.insert_slice %[[G]]#0 into %{{.*}}[0, 0, 0]
// CHECK-NOT: linalg.transpose
// CHECK: linalg.batch_matmul {{.*}} ins(%[[XS]], %[[WS]] : tensor<16x?x512xf32>, tensor<16x1024x512xf32>) outs(%{{.*}} : tensor<16x?x1024xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<4x?x1024xf32>, tensor<4x?x1024xf32>, tensor<4x?x1024xf32>, tensor<4x?x1024xf32>)
// CHECK: linalg.batch_matmul {{.*}} ins(%[[DG]], %[[W]] :
// CHECK: return %{{.*}}, %[[DG]]
func.func @gate_pieces(%a: tensor<4x?x512xf32>, %w: tensor<4x1024x2048xf32>, %b: index)
    -> (tensor<4x?x1024xf32>, tensor<4x?x2048xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%b) : tensor<4x?x512xf32>
  %g:4 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id],
                         iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<4x?x512xf32>) outs(%e, %e, %e, %e : tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32, %o2: f32, %o3: f32):
    %t = math.tanh %in : f32
    %s = arith.mulf %in, %in : f32
    %u = arith.subf %t, %s : f32
    %v = arith.addf %t, %s : f32
    linalg.yield %t, %s, %u, %v : f32, f32, f32, f32
  } -> (tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>)
  %de = tensor.empty(%b) : tensor<4x?x2048xf32>
  %d0 = tensor.insert_slice %g#3 into %de[0, 0, 1536] [4, %b, 512] [1, 1, 1] : tensor<4x?x512xf32> into tensor<4x?x2048xf32>
  %d1 = tensor.insert_slice %g#2 into %d0[0, 0, 1024] [4, %b, 512] [1, 1, 1] : tensor<4x?x512xf32> into tensor<4x?x2048xf32>
  %d2 = tensor.insert_slice %g#1 into %d1[0, 0, 512] [4, %b, 512] [1, 1, 1] : tensor<4x?x512xf32> into tensor<4x?x2048xf32>
  %dg = tensor.insert_slice %g#0 into %d2[0, 0, 0] [4, %b, 512] [1, 1, 1] : tensor<4x?x512xf32> into tensor<4x?x2048xf32>
  %pe = tensor.empty(%b) : tensor<4x?x1024xf32>
  %pz = linalg.fill ins(%zero : f32) outs(%pe : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
  %p = linalg.batch_matmul indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>, affine_map<(l, b, h, k) -> (l, h, k)>, affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%dg, %w : tensor<4x?x2048xf32>, tensor<4x1024x2048xf32>)
      outs(%pz : tensor<4x?x1024xf32>) -> tensor<4x?x1024xf32>
  return %p, %dg : tensor<4x?x1024xf32>, tensor<4x?x2048xf32>
}

// -----

#ew = affine_map<(l, b, n) -> (l, b, n)>

// Cho's GRU's dG: [dr dz] from one generic, dn from a later one (its phase
// reads a product of the first's result). With splits=4, split at the
// three pieces: the split operand is made before the first generic, each
// generic computes its pieces into it, and the inserts follow the second.
// With the default 8, three pieces would be fewer than half the slices
// (12 matrices where 32 measured faster, transposition included): X is
// transposed into 8 slices of 192. (The FOUR run keeps the first generic's
// own product, as deep as wide, whole: fused-depth-ratio=1.5.)
// CHECK-LABEL: func.func @pieces_of_two_generics
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x?x8x192xf32>)
// CHECK: linalg.batch_matmul {{.*}} ins(%{{.*}}, %{{.*}} : tensor<16x?x192xf32>, tensor<16x1024x192xf32>)
// FOUR-LABEL: func.func @pieces_of_two_generics
// FOUR: %[[SE:.*]] = tensor.empty(%{{.*}}) : tensor<2x3x?x512xf32>
// FOUR-DAG: %[[S0:.*]] = tensor.extract_slice %[[SE]][0, 0, 0, 0]
// FOUR-DAG: %[[S1:.*]] = tensor.extract_slice %[[SE]][0, 1, 0, 0]
// FOUR-DAG: %[[S2:.*]] = tensor.extract_slice %[[SE]][0, 2, 0, 0]
// FOUR: %[[G1:.*]]:4 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}}, %[[S1]], %[[S2]] :
// FOUR: %[[P:.*]] = linalg.batch_matmul {{.*}} ins(%[[G1]]#0,
// FOUR: %[[G2:.*]]:2 = linalg.generic {{.*}} ins(%[[P]] : tensor<2x?x512xf32>) outs(%{{.*}}, %[[S0]] :
// FOUR: %[[I0:.*]] = tensor.insert_slice %[[G2]]#1 into %[[SE]][0, 0, 0, 0]
// FOUR: %[[I1:.*]] = tensor.insert_slice %[[G1]]#2 into %[[I0]][0, 1, 0, 0]
// FOUR: %[[I2:.*]] = tensor.insert_slice %[[G1]]#3 into %[[I1]][0, 2, 0, 0]
// FOUR: %[[XS:.*]] = tensor.collapse_shape %[[I2]] {{\[}}[0, 1], [2], [3]] : tensor<2x3x?x512xf32> into tensor<6x?x512xf32>
// FOUR-NOT: linalg.transpose ins(%{{.*}} : tensor<2x?x3x512xf32>)
// FOUR: linalg.batch_matmul {{.*}} ins(%[[XS]], %{{.*}} : tensor<6x?x512xf32>, tensor<6x1024x512xf32>)
func.func @pieces_of_two_generics(%a: tensor<2x?x512xf32>, %rn: tensor<2x512x512xf32>,
                                  %w: tensor<2x1024x1536xf32>, %b: index) -> tensor<2x?x1024xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty(%b) : tensor<2x?x512xf32>
  %g:2 = linalg.generic {indexing_maps = [#ew, #ew, #ew], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<2x?x512xf32>) outs(%e, %e : tensor<2x?x512xf32>, tensor<2x?x512xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32):
    %t = math.tanh %in : f32
    %s = arith.mulf %in, %in : f32
    linalg.yield %t, %s : f32, f32
  } -> (tensor<2x?x512xf32>, tensor<2x?x512xf32>)
  %pz = linalg.fill ins(%zero : f32) outs(%e : tensor<2x?x512xf32>) -> tensor<2x?x512xf32>
  %p = linalg.batch_matmul indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>, affine_map<(l, b, h, k) -> (l, h, k)>, affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%g#0, %rn : tensor<2x?x512xf32>, tensor<2x512x512xf32>)
      outs(%pz : tensor<2x?x512xf32>) -> tensor<2x?x512xf32>
  %n = linalg.generic {indexing_maps = [#ew, #ew], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<2x?x512xf32>) outs(%e : tensor<2x?x512xf32>) {
  ^bb0(%in: f32, %o: f32):
    %t = math.tanh %in : f32
    linalg.yield %t : f32
  } -> tensor<2x?x512xf32>
  %de = tensor.empty(%b) : tensor<2x?x1536xf32>
  %d0 = tensor.insert_slice %g#0 into %de[0, 0, 512] [2, %b, 512] [1, 1, 1] : tensor<2x?x512xf32> into tensor<2x?x1536xf32>
  %d1 = tensor.insert_slice %g#1 into %d0[0, 0, 1024] [2, %b, 512] [1, 1, 1] : tensor<2x?x512xf32> into tensor<2x?x1536xf32>
  %dg = tensor.insert_slice %n into %d1[0, 0, 0] [2, %b, 512] [1, 1, 1] : tensor<2x?x512xf32> into tensor<2x?x1536xf32>
  %qe = tensor.empty(%b) : tensor<2x?x1024xf32>
  %qz = linalg.fill ins(%zero : f32) outs(%qe : tensor<2x?x1024xf32>) -> tensor<2x?x1024xf32>
  %q = linalg.batch_matmul indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>, affine_map<(l, b, h, k) -> (l, h, k)>, affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%dg, %w : tensor<2x?x1536xf32>, tensor<2x1024x1536xf32>)
      outs(%qz : tensor<2x?x1024xf32>) -> tensor<2x?x1024xf32>
  return %q : tensor<2x?x1024xf32>
}

// -----

#pw = affine_map<(l, b, n) -> (l, b, n)>

// Cho's GRU's R_n (r ⊙ h) at appleyard's sizes: as deep as wide, so split
// under the default fused-depth-ratio (1; left whole with 1.5). The split
// needs no kernel of its own: the generic that computes r ⊙ h
// also writes it as the 32 slices [4, 8, B, 64] (reading its operands at
// (l, b, 64 s + j)) and still computes r ⊙ h for its other reader (the
// function's result); each of the two generics that read the product sums
// the 8 partial products itself, in order, before its own work. No scf.if
// on the dynamic batch, no transposition of X, no sum kernel.
// UNSPLIT-LABEL: func.func @fused_split
// UNSPLIT-NOT: tensor<32x
// UNSPLIT: return
// FUSED-DAG: #[[$SLICED:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1 * 64 + d3)>
// FUSED-DAG: #[[$ID4:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// FUSED-LABEL: func.func @fused_split
// FUSED-SAME: (%[[A:[^:]*]]: tensor<4x?x512xf32>, %[[H:[^:]*]]: tensor<4x?x512xf32>, %[[W:[^:]*]]: tensor<4x512x512xf32>, %[[G:[^:]*]]: tensor<4x?x512xf32>)
// FUSED: %[[WT:.*]] = linalg.transpose ins(%{{.*}} : tensor<4x512x8x64xf32>) outs(%{{.*}} : tensor<4x8x512x64xf32>)
// FUSED: %[[WS:.*]] = tensor.collapse_shape %[[WT]] {{\[}}[0, 1], [2], [3]] : tensor<4x8x512x64xf32> into tensor<32x512x64xf32>
// FUSED-NOT: scf.if
// FUSED: %[[RH:.*]]:2 = linalg.generic {indexing_maps = [#[[$SLICED]], #[[$SLICED]], #[[$SLICED]], #[[$ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[A]], %[[H]] : {{.*}}) outs(%{{.*}}, %{{.*}} : tensor<4x?x512xf32>, tensor<4x8x?x64xf32>)
// FUSED-NEXT: ^bb0(%[[X:[^:]*]]: f32, %[[Y:[^:]*]]: f32,
// FUSED-NEXT: %[[M:.*]] = arith.mulf %[[X]], %[[Y]]
// FUSED-NEXT: linalg.yield %[[M]], %[[M]]
// FUSED: %[[XS:.*]] = tensor.collapse_shape %[[RH]]#1 {{\[}}[0, 1], [2], [3]] : tensor<4x8x?x64xf32> into tensor<32x?x64xf32>
// FUSED: %[[P:.*]] = linalg.batch_matmul {{.*}} ins(%[[XS]], %[[WS]] : tensor<32x?x64xf32>, tensor<32x512x64xf32>) outs(%{{.*}} : tensor<32x?x512xf32>)
// FUSED: %[[PG:.*]] = tensor.expand_shape %[[P]]
// FUSED: %[[P0:.*]] = tensor.extract_slice %[[PG]][0, 0, 0, 0] [4, 1, %{{.*}}, 512]
// FUSED-COUNT-7: tensor.extract_slice %[[PG]][0, {{[1-7]}}, 0, 0]
// FUSED-NOT: linalg.transpose
// FUSED: %[[N:.*]] = linalg.generic {{.*}} ins(%[[P0]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[G]] :
// FUSED-NEXT: ^bb0(%[[T0:[^:]*]]: f32, %[[T1:[^:]*]]: f32, {{.*}}, %[[GV:[^:]*]]: f32, %{{[^:]*}}: f32):
// FUSED-NEXT: %[[S1:.*]] = arith.addf %[[T0]], %[[T1]]
// FUSED-COUNT-6: arith.addf
// FUSED-NEXT: %[[SG:.*]] = arith.addf %{{.*}}, %[[GV]]
// FUSED-NEXT: math.tanh %[[SG]]
// FUSED: %[[Q:.*]] = linalg.generic {{.*}} ins(%[[P0]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :
// FUSED-COUNT-7: arith.addf
// FUSED-NEXT: %[[SQ:.*]] = arith.mulf %[[SUM:.*]], %[[SUM]]
// FUSED: return %[[N]], %[[Q]], %[[RH]]#0
func.func @fused_split(%a: tensor<4x?x512xf32>, %h: tensor<4x?x512xf32>,
                       %w: tensor<4x512x512xf32>, %g: tensor<4x?x512xf32>)
    -> (tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %a, %c1 : tensor<4x?x512xf32>
  %e = tensor.empty(%b) : tensor<4x?x512xf32>
  %rh = linalg.generic {indexing_maps = [#pw, #pw, #pw], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a, %h : tensor<4x?x512xf32>, tensor<4x?x512xf32>) outs(%e : tensor<4x?x512xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %m = arith.mulf %x, %y : f32
    linalg.yield %m : f32
  } -> tensor<4x?x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x512xf32>) -> tensor<4x?x512xf32>
  %p = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%rh, %w : tensor<4x?x512xf32>, tensor<4x512x512xf32>)
      outs(%z : tensor<4x?x512xf32>) -> tensor<4x?x512xf32>
  %n = linalg.generic {indexing_maps = [#pw, #pw, #pw], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p, %g : tensor<4x?x512xf32>, tensor<4x?x512xf32>) outs(%e : tensor<4x?x512xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %t = math.tanh %s : f32
    linalg.yield %t : f32
  } -> tensor<4x?x512xf32>
  %q = linalg.generic {indexing_maps = [#pw, #pw], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%p : tensor<4x?x512xf32>) outs(%e : tensor<4x?x512xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.mulf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4x?x512xf32>
  return %n, %q, %rh : tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>
}

// -----

#pa = affine_map<(l, b, n) -> (l, b, n)>

// Not taken in: a product read by something other than an elementwise
// generic (here returned), one whose accumulator is not zeros, one whose X
// no generic computes. Each is left whole (as deep as wide).
// FUSED-LABEL: func.func @not_fused
// FUSED-NOT: tensor<32x
// FUSED: return
func.func @not_fused(%a: tensor<4x?x512xf32>, %x: tensor<4x?x512xf32>,
                     %w: tensor<4x512x512xf32>, %acc: tensor<4x?x512xf32>)
    -> (tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>) {
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %b = tensor.dim %a, %c1 : tensor<4x?x512xf32>
  %e = tensor.empty(%b) : tensor<4x?x512xf32>
  %sq = linalg.generic {indexing_maps = [#pa, #pa], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%a : tensor<4x?x512xf32>) outs(%e : tensor<4x?x512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %v : f32
    linalg.yield %m : f32
  } -> tensor<4x?x512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x512xf32>) -> tensor<4x?x512xf32>
  %returned = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%sq, %w : tensor<4x?x512xf32>, tensor<4x512x512xf32>)
      outs(%z : tensor<4x?x512xf32>) -> tensor<4x?x512xf32>
  %accumulated = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%sq, %w : tensor<4x?x512xf32>, tensor<4x512x512xf32>)
      outs(%acc : tensor<4x?x512xf32>) -> tensor<4x?x512xf32>
  %argument = linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%x, %w : tensor<4x?x512xf32>, tensor<4x512x512xf32>)
      outs(%z : tensor<4x?x512xf32>) -> tensor<4x?x512xf32>
  %t1 = linalg.generic {indexing_maps = [#pa, #pa], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%accumulated : tensor<4x?x512xf32>) outs(%e : tensor<4x?x512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x?x512xf32>
  %t2 = linalg.generic {indexing_maps = [#pa, #pa], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%argument : tensor<4x?x512xf32>) outs(%e : tensor<4x?x512xf32>) {
  ^bb0(%v: f32, %o: f32):
    %t = math.tanh %v : f32
    linalg.yield %t : f32
  } -> tensor<4x?x512xf32>
  return %returned, %t1, %t2 : tensor<4x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>
}
