// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/Inputs/wavefront-gru3-square.mlir --lstm-combine-gate-gemms --lstm-differentiate --lstm-wavefront="side-output-max-product=1000000 product-links" --canonicalize | FileCheck %s

// The backward of a 3-layer Cho GRU as a reverse wavefront linked through
// products: each diagonal's link output is its gates' gradients dG
// `[3, B, 24]`, which the loop also stores for the weights' gradients. A
// diagonal reads the previous one's from the store, a row behind (the next
// row up: the rows count the diagonals from the last), instead of a
// loop-carried copy; the first diagonal reads zeros, an extra row after the
// last. The loop carries the states and the two stores, no dG.

// CHECK-LABEL: func.func @forward_backward
// CHECK: %[[ZEROS:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x?x24xf32>)
// CHECK: %[[ROWS:.*]] = arith.addi %[[T:.*]], %c2 : index
// CHECK: %[[ROWS1:.*]] = arith.addi %[[T]], %c3 : index
// CHECK: %[[EMPTY:.*]] = tensor.empty(%[[ROWS1]], %{{.*}}) : tensor<3x?x?x24xf32>
// CHECK: %[[STORE0:.*]] = tensor.insert_slice %[[ZEROS]] into %[[EMPTY]][0, %[[ROWS]], 0, 0] [3, 1, %{{.*}}, 24]
// CHECK: scf.for %[[D:.*]] = {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[STORE:.*]] = %[[STORE0]]) -> (tensor<3x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?x24xf32>)
// CHECK: %[[ROW:.*]] = arith.subi %{{.*}}, %[[D]] : index
// CHECK: %[[BEHIND:.*]] = arith.addi %[[ROW]], %c1 : index
// CHECK: %[[PREV:.*]] = tensor.extract_slice %[[STORE]][0, %[[BEHIND]], 0, 0] [3, 1, %{{.*}}, 24]
// CHECK: %[[BELOW:.*]] = tensor.extract_slice %[[PREV]][0, 0, 0] [2, %{{.*}}, 24]
// CHECK: lstm.gate identity(%[[BELOW]] : tensor<2x?x24xf32>) weights(%{{.*}} : tensor<2x8x24xf32>) -> tensor<2x?x8xf32>
// CHECK: %[[NEXT:.*]] = tensor.insert_slice %{{.*}} into %[[STORE]][0, %{{.*}}, 0, 0] [3, 1, %{{.*}}, 24]
// CHECK: scf.yield %{{.*}}, %{{.*}}, %[[NEXT]] : tensor<3x?x8xf32>, tensor<3x?x?x8xf32>, tensor<3x?x?x24xf32>
// CHECK: lstm.wavefront_direction = "reverse"
