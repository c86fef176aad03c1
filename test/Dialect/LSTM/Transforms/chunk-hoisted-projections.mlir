// RUN: lstm-opt %s --split-input-file '--lstm-chunk-hoisted-projections=chunk-bytes=4096' | FileCheck %s
// RUN: not lstm-opt %s '--lstm-chunk-hoisted-projections=chunk-bytes=0' 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not lstm-opt %s '--lstm-chunk-hoisted-projections=weights-per-chunk=-1' 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// RUN: lstm-opt %s --split-input-file '--lstm-chunk-hoisted-projections=chunk-bytes=4096 weights-per-chunk=0' | FileCheck %s --check-prefix=NO-WEIGHTS
// RUN: lstm-opt %s --split-input-file '--lstm-chunk-hoisted-projections=chunk-bytes=4096 threads-function=get_threads' | FileCheck %s --check-prefix=THREADS
// RUN: not lstm-opt %s --split-input-file '--lstm-chunk-hoisted-projections=chunk-bytes=4096 threads-function=bad_threads' 2>&1 | FileCheck %s --check-prefix=BAD-THREADS

// A hoisted projection computed a chunk of steps at a time: k = max(1,
// 4096 / (B · 16 · 4)) steps a chunk (the weight's 512 bytes, twice over,
// are under the chunk's 4096), each chunk's rows projected by their
// own gate and run as a layer of their own from the state the chunk before
// ended with; its outputs go into their steps of the whole sequence.
// CHECK-LABEL: func.func @forward_layer
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[H0:.*]]: tensor<?x16xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[R:.*]]: tensor<16x16xf32>)
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[X]], %[[C0]]
// CHECK-DAG: %[[B:.*]] = tensor.dim %[[X]], %[[C1]]
// CHECK: %[[ROW:.*]] = arith.muli %[[B]], %{{.*}}
// CHECK: %[[STEP:.*]] = arith.muli %[[ROW]], %{{.*}}
// CHECK: %[[NZ:.*]] = arith.maxui %[[STEP]], %{{.*}}
// CHECK: %[[BYTES:.*]] = arith.constant 4096 : index
// CHECK: %[[Q:.*]] = arith.divui %[[BYTES]], %[[NZ]]
// CHECK: %[[K:.*]] = arith.maxui %[[Q]], %{{.*}}
// CHECK: %[[Y0:.*]] = tensor.empty(%[[T]], %[[B]]) : tensor<?x?x16xf32>
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[S:.*]] = %{{.*}} to %[[T]] step %[[K]] iter_args(%[[Y:.*]] = %[[Y0]], %[[H:.*]] = %[[H0]])
// CHECK:   %[[LEFT:.*]] = arith.subi %[[T]], %[[S]]
// CHECK:   %[[TC:.*]] = arith.minui %[[K]], %[[LEFT]]
// CHECK:   %[[XC:.*]] = tensor.extract_slice %[[X]][%[[S]], 0, 0] [%[[TC]], %{{.*}}, 8] [1, 1, 1]
// CHECK:   %[[FLAT:.*]] = tensor.collapse_shape %[[XC]] {{\[\[}}0, 1], [2]]
// CHECK:   %[[P:.*]] = lstm.gate identity(%[[FLAT]] : tensor<?x8xf32>) weights(%[[W]] : tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK:   %[[PC:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1], [2]] output_shape [%[[TC]], %[[B]], 16]
// CHECK:   %[[OUT:.*]], %[[FIN:.*]] = lstm.layer forward ins(%[[PC]] : tensor<?x?x16xf32>) init(%[[H]] : tensor<?x16xf32>)
// CHECK:     lstm.gate tanh
// CHECK:   %[[Y2:.*]] = tensor.insert_slice %[[OUT]] into %[[Y]][%[[S]], 0, 0] [%[[TC]], %{{.*}}, 16] [1, 1, 1]
// CHECK:   scf.yield %[[Y2]], %[[FIN]]
// CHECK: return %[[LOOP]]#0, %[[LOOP]]#1
// ZERO: chunk-bytes must be positive, got 0
// NEGATIVE: weights-per-chunk must be >= 0, got -1
// A threads-function the module has with another type is an error, not a
// call of the wrong signature.
// BAD-THREADS: error: lstm-chunk-hoisted-projections: threads-function 'bad_threads' must be a function () -> i32
// weights-per-chunk=0: the chunk's bytes alone.
// NO-WEIGHTS-LABEL: func.func @heavy_weights
// NO-WEIGHTS: scf.for
// NO-WEIGHTS: lstm.layer forward
// NO-WEIGHTS-LABEL: func.func @dynamic_weights
// NO-WEIGHTS-NOT: arith.cmpi
// NO-WEIGHTS: scf.for
// threads-function: chunk-bytes a thread, the threads from the function,
// declared once in the module for all its layers.
// THREADS-LABEL: module
// THREADS: func.func private @get_threads() -> i32
// THREADS-LABEL: func.func @forward_layer
// THREADS: %[[BYTES:.*]] = arith.constant 4096 : index
// THREADS: %[[CALL:.*]] = call @get_threads() : () -> i32
// THREADS: %[[N:.*]] = arith.index_cast %[[CALL]] : i32 to index
// THREADS: %[[AT_LEAST_ONE:.*]] = arith.maxsi %[[N]], %{{.*}} : index
// THREADS: arith.muli %[[BYTES]], %[[AT_LEAST_ONE]] : index
func.func @forward_layer(%x: tensor<?x?x8xf32>, %h0: tensor<?x16xf32>, %W: tensor<16x8xf32>, %R: tensor<16x16xf32>) -> (tensor<?x?x16xf32>, tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  %p = lstm.gate identity(%flat : tensor<?x8xf32>) weights(%W : tensor<16x8xf32>) -> tensor<?x16xf32>
  %t = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %P = tensor.expand_shape %p [[0, 1], [2]] output_shape [%t, %b, 16] : tensor<?x16xf32> into tensor<?x?x16xf32>
  %y, %hT = lstm.layer forward ins(%P : tensor<?x?x16xf32>) init(%h0 : tensor<?x16xf32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%pt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %hn = lstm.gate tanh(%h : tensor<?x16xf32>) weights(%R : tensor<16x16xf32>) add(%pt : tensor<?x16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y, %hT : tensor<?x?x16xf32>, tensor<?x16xf32>
}

// -----

// A reverse layer takes its chunks from the end: chunk s covers steps
// [T - s - Tc, T - s), and its layer walks them backwards. Static extents
// stay static in the whole sequence; the chunk's are dynamic.
// CHECK-LABEL: func.func @reverse_layer
// CHECK: %[[LOOP:.*]]:2 = scf.for %[[S:.*]] = %{{.*}} to %[[T:.*]] step %{{.*}} iter_args(%[[Y:.*]] = %{{.*}}, %{{.*}} = %{{.*}}) -> (tensor<6x4x16xf32>, tensor<4x16xf32>)
// CHECK:   %[[LEFT:.*]] = arith.subi %[[T]], %[[S]]
// CHECK:   %[[TC:.*]] = arith.minui %{{.*}}, %[[LEFT]]
// CHECK:   %[[FIRST:.*]] = arith.subi %[[LEFT]], %[[TC]]
// CHECK:   tensor.extract_slice %{{.*}}[%[[FIRST]], 0, 0] [%[[TC]], 4, 8] [1, 1, 1] : tensor<6x4x8xf32> to tensor<?x4x8xf32>
// CHECK:   lstm.layer reverse ins(%{{.*}} : tensor<?x4x16xf32>) {{.*}} -> (tensor<?x4x16xf32>), (tensor<4x16xf32>)
// CHECK:   tensor.insert_slice %{{.*}} into %[[Y]][%[[FIRST]], 0, 0] [%[[TC]], 4, 16] [1, 1, 1]
func.func @reverse_layer(%x: tensor<6x4x8xf32>, %h0: tensor<4x16xf32>, %W: tensor<16x8xf32>, %R: tensor<16x16xf32>, %b: tensor<16xf32>) -> (tensor<6x4x16xf32>, tensor<4x16xf32>) {
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<6x4x8xf32> into tensor<24x8xf32>
  %p = lstm.gate identity(%flat : tensor<24x8xf32>) weights(%W : tensor<16x8xf32>) bias(%b : tensor<16xf32>) -> tensor<24x16xf32>
  %P = tensor.expand_shape %p [[0, 1], [2]] output_shape [6, 4, 16] : tensor<24x16xf32> into tensor<6x4x16xf32>
  %y, %hT = lstm.layer reverse ins(%P : tensor<6x4x16xf32>) init(%h0 : tensor<4x16xf32>) -> (tensor<6x4x16xf32>), (tensor<4x16xf32>) {
  ^bb0(%pt: tensor<4x16xf32>, %h: tensor<4x16xf32>):
    %hn = lstm.gate tanh(%h : tensor<4x16xf32>) weights(%R : tensor<16x16xf32>) add(%pt : tensor<4x16xf32>) -> tensor<4x16xf32>
    lstm.yield out(%hn : tensor<4x16xf32>) state(%hn : tensor<4x16xf32>)
  }
  return %y, %hT : tensor<6x4x16xf32>, tensor<4x16xf32>
}

// -----

// Left whole: a layer with lengths (its lowering checks them against T),
// and a layer whose sequence is not a hoisted projection.
// CHECK-LABEL: func.func @lengths
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK-LABEL: func.func @not_hoisted
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
func.func @lengths(%x: tensor<?x?x8xf32>, %h0: tensor<?x16xf32>, %W: tensor<16x8xf32>, %R: tensor<16x16xf32>, %len: tensor<?xi32>) -> tensor<?x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  %p = lstm.gate identity(%flat : tensor<?x8xf32>) weights(%W : tensor<16x8xf32>) -> tensor<?x16xf32>
  %t = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %P = tensor.expand_shape %p [[0, 1], [2]] output_shape [%t, %b, 16] : tensor<?x16xf32> into tensor<?x?x16xf32>
  %y, %hT = lstm.layer forward ins(%P : tensor<?x?x16xf32>) init(%h0 : tensor<?x16xf32>) lengths(%len : tensor<?xi32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%pt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %hn = lstm.gate tanh(%h : tensor<?x16xf32>) weights(%R : tensor<16x16xf32>) add(%pt : tensor<?x16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y : tensor<?x?x16xf32>
}
func.func @not_hoisted(%x: tensor<?x?x8xf32>, %h0: tensor<?x16xf32>, %W: tensor<16x8xf32>, %R: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x16xf32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x16xf32>):
    %hn = lstm.gate tanh(%xt, %h : tensor<?x8xf32>, tensor<?x16xf32>) weights(%W, %R : tensor<16x8xf32>, tensor<16x16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y : tensor<?x?x16xf32>
}

// -----

// Weights whose bytes, twice over, reach the chunk's (64 x 32 floats: 8 KiB
// against 4096): the GEMM would stream them through the cache, so the
// projection stays whole (with weights-per-chunk=0 it is chunked).
// CHECK-LABEL: func.func @heavy_weights
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
func.func @heavy_weights(%x: tensor<?x?x32xf32>, %h0: tensor<?x16xf32>, %W: tensor<64x32xf32>, %R: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x32xf32> into tensor<?x32xf32>
  %p = lstm.gate identity(%flat : tensor<?x32xf32>) weights(%W : tensor<64x32xf32>) -> tensor<?x64xf32>
  %t = tensor.dim %x, %c0 : tensor<?x?x32xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?x32xf32>
  %P = tensor.expand_shape %p [[0, 1], [2]] output_shape [%t, %b, 64] : tensor<?x64xf32> into tensor<?x?x64xf32>
  %y, %hT = lstm.layer forward ins(%P : tensor<?x?x64xf32>) init(%h0 : tensor<?x16xf32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%pt: tensor<?x64xf32>, %h: tensor<?x16xf32>):
    %s = tensor.extract_slice %pt[0, 0] [%b, 16] [1, 1] : tensor<?x64xf32> to tensor<?x16xf32>
    %hn = lstm.gate tanh(%h : tensor<?x16xf32>) weights(%R : tensor<16x16xf32>) add(%s : tensor<?x16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y : tensor<?x?x16xf32>
}

// -----

// Weights of a dynamic size: chunks of k steps where twice their bytes are
// under the chunk's, else one chunk of all T steps, chosen at run time.
// CHECK-LABEL: func.func @dynamic_weights
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %{{.*}}: tensor<?x16xf32>, %[[W:.*]]: tensor<?x8xf32>,
// CHECK-DAG: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK: arith.divui
// CHECK-NEXT: %[[K:.*]] = arith.maxui %{{.*}}, %{{.*}} : index
// CHECK: %[[ROWS:.*]] = tensor.dim %[[W]], %{{.*}}
// CHECK: %[[W_BYTES:.*]] = arith.muli %{{.*}}, %[[ROWS]]
// CHECK: %[[W_ALL:.*]] = arith.muli %[[W_BYTES]], %{{.*}}
// CHECK: %[[SUM:.*]] = arith.addi %{{.*}}, %[[W_ALL]]
// CHECK: %[[TWICE:.*]] = arith.muli %[[SUM]], %{{.*}}
// CHECK: %[[PAYS:.*]] = arith.cmpi ult, %[[TWICE]], %{{.*}}
// CHECK: %[[WHOLE:.*]] = arith.maxui %[[T]], %{{.*}}
// CHECK: %[[STEPS:.*]] = arith.select %[[PAYS]], %[[K]], %[[WHOLE]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[T]] step %[[STEPS]]
func.func @dynamic_weights(%x: tensor<?x?x8xf32>, %h0: tensor<?x16xf32>, %W: tensor<?x8xf32>, %R: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  %p = lstm.gate identity(%flat : tensor<?x8xf32>) weights(%W : tensor<?x8xf32>) -> tensor<?x16xf32>
  %t = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %P = tensor.expand_shape %p [[0, 1], [2]] output_shape [%t, %b, 16] : tensor<?x16xf32> into tensor<?x?x16xf32>
  %y, %hT = lstm.layer forward ins(%P : tensor<?x?x16xf32>) init(%h0 : tensor<?x16xf32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%pt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %hn = lstm.gate tanh(%h : tensor<?x16xf32>) weights(%R : tensor<16x16xf32>) add(%pt : tensor<?x16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y : tensor<?x?x16xf32>
}

// -----

// (threads-function=bad_threads: declared with another type.)
func.func private @bad_threads(i32) -> i32
func.func @clashing_threads_function(%x: tensor<?x?x8xf32>, %h0: tensor<?x16xf32>, %W: tensor<16x8xf32>, %R: tensor<16x16xf32>) -> tensor<?x?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %flat = tensor.collapse_shape %x [[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
  %p = lstm.gate identity(%flat : tensor<?x8xf32>) weights(%W : tensor<16x8xf32>) -> tensor<?x16xf32>
  %t = tensor.dim %x, %c0 : tensor<?x?x8xf32>
  %b = tensor.dim %x, %c1 : tensor<?x?x8xf32>
  %P = tensor.expand_shape %p [[0, 1], [2]] output_shape [%t, %b, 16] : tensor<?x16xf32> into tensor<?x?x16xf32>
  %y, %hT = lstm.layer forward ins(%P : tensor<?x?x16xf32>) init(%h0 : tensor<?x16xf32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%pt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %hn = lstm.gate tanh(%h : tensor<?x16xf32>) weights(%R : tensor<16x16xf32>) add(%pt : tensor<?x16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y : tensor<?x?x16xf32>
}
