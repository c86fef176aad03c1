// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-combine-gate-gemms --lstm-differentiate --lstm-wavefront="side-output-max-product=1000000 product-links" | FileCheck %s
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-combine-gate-gemms --lstm-differentiate --lstm-wavefront=side-output-max-product=1000000 | FileCheck %s --check-prefix=DEFAULT

// lstm-wavefront{product-links}: the backward of a 3-layer LSTM (input 4,
// hidden 8) as a reverse wavefront. Its layers are linked through products,
// dX_l = dG_l · W_l feeding layer l-1 as its output gradient; each reads
// five saved sequences besides (the unread h_{t-1} sequence of the backward
// LSTM cell is dropped first).

// CHECK-LABEL: func.func @forward_grad
// The links' weights W_2, W_1 ([32, 8]) stacked and transposed as lstm.gate
// takes them, a zero weight for the last layer (whose dX leaves the loop as
// one product over all steps), appended to the cells' own dG·Rᵀ weights:
// one product per diagonal gives both.
// CHECK: %[[T:.*]] = linalg.transpose ins(%{{.*}} : tensor<2x32x8xf32>) outs(%{{.*}} : tensor<2x8x32xf32>) permutation = [0, 2, 1]
// CHECK: %[[LINKW:.*]] = tensor.concat dim(0) %[[T]], %{{.*}} : (tensor<2x8x32xf32>, tensor<1x8x32xf32>) -> tensor<3x8x32xf32>
// CHECK: %[[W:.*]] = tensor.concat dim(1) %{{.*}}, %[[LINKW]] : (tensor<3x8x32xf32>, tensor<3x8x32xf32>) -> tensor<3x16x32xf32>
// Each saved sequence laid out [L, T + L - 1, B, 8], checked against the
// layer's first input as the layer's lowering would.
// CHECK: "lstm.layer: input #1 has a different sequence length than input #0
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[2, 0, 0, 0] [1, %{{.*}}, %{{.*}}, 8] [1, 1, 1, 1] : tensor<?x?x8xf32> into tensor<3x?x?x8xf32>
// CHECK: scf.for
// The previous diagonal's link products of layers 0 .. L-2 are the output
// gradients of layers 1 .. L-1, gathered at the start of the diagonal: the
// cell's product is its last work, there is no kernel after it that the
// gather could join (gathersAhead is for cells that compute after it).
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [2, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<2x?x8xf32>
// A diagonal's step of a saved sequence, every layer's at once.
// CHECK: tensor.extract_slice %{{.*}}[0, %{{.*}}, 0, 0] [3, 1, %{{.*}}, 8] [1, 1, 1, 1] : tensor<3x?x?x8xf32> to tensor<3x?x8xf32>
// CHECK: %[[P:.*]] = lstm.gate identity(%{{.*}} : tensor<3x?x32xf32>) weights(%[[W]] : tensor<3x16x32xf32>) -> tensor<3x?x16xf32>
// CHECK-DAG: tensor.extract_slice %[[P]][0, 0, 0] [3, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x16xf32> to tensor<3x?x8xf32>
// CHECK-DAG: tensor.extract_slice %[[P]][0, 0, 8] [3, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x16xf32> to tensor<3x?x8xf32>
// CHECK: lstm.wavefront_direction = "reverse", lstm.wavefront_layers = 3
// Above the batch bound the layers, their weight gradients after the last.
// CHECK-COUNT-3: lstm.layer reverse
// CHECK: return

// Without the option the backward stays layers.
// DEFAULT-LABEL: func.func @forward_grad
// DEFAULT-NOT: lstm.wavefront_direction = "reverse"
// DEFAULT: lstm.layer reverse
// DEFAULT-LABEL: func.func @forward_train
