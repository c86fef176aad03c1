// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/Inputs/wavefront-gru3-square.mlir --lstm-combine-gate-gemms --lstm-differentiate --lstm-share-assembled-columns --lstm-wavefront="side-output-max-product=1000000 product-links" --canonicalize | FileCheck %s
// RUN: lstm-opt %S/Inputs/wavefront-gru3-square.mlir --lstm-combine-gate-gemms --lstm-differentiate --lstm-wavefront="side-output-max-product=1000000 product-links" --canonicalize | FileCheck %s --check-prefix=APART

// The backward of a 3-layer Cho GRU (H = 8) as a reverse wavefront linked
// through products. Its link output is the gates' gradients
// dG = [dr dz dn] `[3, B, 24]`; the recurrent product R_rzᵀ reads their
// leading columns [dr dz] `[3, B, 16]`, a slice of dG once
// lstm-share-assembled-columns has run. That product and the links' are one:
// dG · [R_rz 0; W]ᵀ, the recurrent weights `[3, 8, 16]` padded with zero
// columns for dn to `[3, 8, 24]`, the links' `[2, 8, 24]` with zeros for
// the last layer, `[3, 16, 24]` in all. Its first 8 columns are the
// recurrent product, the other 8 the next diagonal's link products, which
// the loop carries (not dG), gathered with the output gradient into the
// next diagonal's inputs at the end of the diagonal (gathersAhead). The layers' [dr dz] output is a view of dG's
// (the layer canonicalisation takes an extract_slice as a slice): one store.

// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[OWNZ:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x8x8xf32>)
// CHECK: %[[OWN:.*]] = tensor.concat dim(2) %{{.*}}, %[[OWNZ]] : (tensor<3x8x16xf32>, tensor<3x8x8xf32>) -> tensor<3x8x24xf32>
// CHECK: %[[LINKZ:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x8x24xf32>)
// CHECK: %[[LINK:.*]] = tensor.concat dim(0) %{{.*}}, %[[LINKZ]] : (tensor<2x8x24xf32>, tensor<1x8x24xf32>) -> tensor<3x8x24xf32>
// CHECK: %[[W:.*]] = tensor.concat dim(1) %[[OWN]], %[[LINK]] : (tensor<3x8x24xf32>, tensor<3x8x24xf32>) -> tensor<3x16x24xf32>
// The first diagonal's inputs, gathered before the loop where it runs:
// the output gradient at the last step, then zeros.
// CHECK: %[[FIRST:.*]] = scf.if %{{.*}} -> (tensor<3x?x8xf32>) {
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[1, 0, 0] [2, %{{.*}}, 8] [1, 1, 1] : tensor<2x?x8xf32> into tensor<3x?x8xf32>
// CHECK: scf.for %{{.*}} = {{.*}} iter_args(%[[DH:.*]] = %{{.*}}, %[[IN:.*]] = %[[FIRST]], {{.*}}) -> (tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?x24xf32>)
// CHECK: arith.addf %[[DH]], %[[IN]] : tensor<3x?x8xf32>
// CHECK: %[[DG:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [3, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x8xf32> into tensor<3x?x24xf32>
// CHECK: %[[BOTH:.*]] = lstm.gate identity(%[[DG]] : tensor<3x?x24xf32>) weights(%[[W]] : tensor<3x16x24xf32>) -> tensor<3x?x16xf32>
// CHECK-DAG: %[[NEXT:.*]] = tensor.extract_slice %[[BOTH]][0, 0, 8] [3, %{{.*}}, 8]
// CHECK-DAG: %[[REC:.*]] = tensor.extract_slice %[[BOTH]][0, 0, 0] [3, %{{.*}}, 8]
// CHECK: arith.addf %{{.*}}, %[[REC]] : tensor<3x?x8xf32>
// The next diagonal's inputs, gathered after the cell's last work (before
// the inactive layers' states are kept): the output gradient at its step,
// then the link products of layers 0 and 1.
// CHECK: %[[BELOW:.*]] = tensor.extract_slice %[[NEXT]][0, 0, 0] [2, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<2x?x8xf32>
// CHECK: %[[GATHER:.*]] = tensor.insert_slice %[[BELOW]] into %{{.*}}[1, 0, 0] [2, %{{.*}}, 8] [1, 1, 1] : tensor<2x?x8xf32> into tensor<3x?x8xf32>
// CHECK: scf.if
// CHECK: scf.yield %{{.*}}, %[[GATHER]], %{{.*}}, %{{.*}} : tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?x24xf32>
// CHECK: lstm.wavefront_direction = "reverse"
// CHECK-NOT: lstm.wavefront_direction = "reverse"

// Without the slice, [dr dz] is an assembly of its own: the products stay
// apart (the link's, on the previous diagonal's dG, and R_rzᵀ's).
// APART-LABEL: func.func @forward_backward
// APART: scf.for
// APART: lstm.gate identity(%{{.*}} : tensor<2x?x24xf32>) weights(%{{.*}} : tensor<2x8x24xf32>) -> tensor<2x?x8xf32>
// APART: lstm.gate identity(%{{.*}} : tensor<3x?x16xf32>) weights(%{{.*}} : tensor<3x8x16xf32>) -> tensor<3x?x8xf32>
// APART: lstm.wavefront_direction = "reverse"
