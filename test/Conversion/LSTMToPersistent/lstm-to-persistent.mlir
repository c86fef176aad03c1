// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-to-persistent -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-to-persistent="max-blocks=2 block-size=32" -split-input-file | FileCheck %s --check-prefix=TILED
// RUN: not lstm-opt %s --lstm-to-persistent=block-size=48 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: lstm-to-persistent: block-size must be a multiple of 32 in [32, 1024] and max-blocks at least 1

// A cell of the form lstm-optimize{wavefront=false} leaves: a recurrent
// product of the state h, read through a column slice by the one pointwise
// op that makes the output and both new states; a reverse layer.

// CHECK-LABEL: func.func @cell
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[H0:.*]]: tensor<?x4xf32>, %[[C0:.*]]: tensor<?x4xf32>, %[[R:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<4xf32>)
// The extents the kernel indexes with are checked first.
// CHECK: cf.assert {{.*}} "lstm.layer: initial state #0 has a different batch size than the input
// CHECK: cf.assert {{.*}} "lstm.layer: initial state #1 has a different batch size than the input
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK: %[[BATCH:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<?x?x8xf32> to memref<?x?x8xf32, strided<[?, ?, ?], offset: ?>>
// CHECK: %[[H0B:.*]] = bufferization.to_buffer %[[H0]] read_only
// CHECK: %[[C0B:.*]] = bufferization.to_buffer %[[C0]] read_only
// CHECK: %[[BB:.*]] = bufferization.to_buffer %[[B]] read_only : tensor<4xf32>
// CHECK: %[[RB:.*]] = bufferization.to_buffer %[[R]] read_only : tensor<8x4xf32>
// Two buffers per state, used alternately; the output and the finals.
// CHECK: %[[HS:.*]] = memref.alloc(%[[BATCH]]) : memref<2x?x4xf32>
// CHECK: %[[CS:.*]] = memref.alloc(%[[BATCH]]) : memref<2x?x4xf32>
// CHECK: %[[Y:.*]] = memref.alloc(%[[T]], %[[BATCH]]) : memref<?x?x4xf32>
// CHECK: %[[HT:.*]] = memref.alloc(%[[BATCH]]) : memref<?x4xf32>
// CHECK: %[[CT:.*]] = memref.alloc(%[[BATCH]]) : memref<?x4xf32>
// The barrier counts k·G arrivals in 32 bits: T is bounded.
// CHECK: cf.assert {{.*}} "lstm.layer: the sequence is too long for a persistent kernel of 4 blocks (at most 536870910 steps)
// CHECK: %[[COUNTER:.*]] = memref.alloc() : memref<1xi32>
// CHECK: gpu.memset %[[COUNTER]], %{{.*}} : memref<1xi32>, i32
// One block per unit here (N = 4), 512 threads.
// CHECK: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c512{{.*}}, %{{.*}}, %{{.*}}) module(@lstm_persistent_cell_0) function(@lstm_persistent_cell_0)
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// The states start as the initial states, then the grid meets.
// CHECK: memref.load %[[H0B]]
// CHECK: memref.store {{.*}}, %[[HS]]
// CHECK: memref.load %[[C0B]]
// CHECK: memref.store {{.*}}, %[[CS]]
// CHECK: lstm.grid_barrier %[[COUNTER]][%c1{{.*}}] : memref<1xi32>
// The time loop in the kernel; a reverse layer reads step T - 1 - t.
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %[[T]]
// CHECK: %[[CUR:.*]] = arith.remui %[[STEP]], %c2
// CHECK: %[[NEXT:.*]] = arith.subi %c1{{.*}}, %[[CUR]]
// CHECK: %[[LAST:.*]] = arith.subi %[[T]], %c1
// CHECK: %[[REV:.*]] = arith.subi %[[LAST]], %[[STEP]]
// Each warp takes the block's elements in turn.
// CHECK: scf.for %{{.*}} = %[[WARP]] to %{{.*}} step %c16
// Column 4 + n of the product: row 4 + n of R against h, the lanes taking
// every 32nd term, four at a time in a main loop (K = 4 < 128: it runs no
// iteration here), the rest one at a time; then summed across the warp.
// CHECK: %[[ROW:.*]] = arith.addi %{{.*}}, %c4
// CHECK: scf.for %{{.*}} = %[[LANE]] to %c0{{.*}} step %c128{{.*}} iter_args
// CHECK-COUNT-4: math.fma
// CHECK: arith.ceildivui
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %c4{{.*}} step %c32{{.*}} iter_args
// CHECK: memref.load %[[HS]][%[[CUR]], %{{.*}}, %[[K]]]
// CHECK: memref.load %[[RB]][%[[ROW]], %[[K]]]
// CHECK: math.fma
// CHECK: gpu.shuffle  xor %{{.*}}, %c16
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor
// CHECK: gpu.shuffle  xor %{{.*}}, %c1
// The input slice at column 4 + n of step T - 1 - t, the bias, the state.
// CHECK: memref.load %[[XB]][%[[REV]], %{{.*}}, %{{.*}}]
// CHECK: memref.load %[[BB]]
// CHECK: memref.load %[[CS]][%[[CUR]],
// The cloned region.
// CHECK: math.tanh
// Lane 0 writes.
// CHECK: arith.cmpi eq, %[[LANE]], %c0
// CHECK: memref.store %{{.*}}, %[[Y]][%[[REV]],
// CHECK: memref.store %{{.*}}, %[[HS]][%[[NEXT]],
// CHECK: memref.store %{{.*}}, %[[CS]][%[[NEXT]],
// CHECK: lstm.grid_barrier %[[COUNTER]]
// The finals from the buffer of the last step.
// CHECK: arith.remui %[[T]], %c2
// CHECK: memref.store %{{.*}}, %[[HT]]
// CHECK: memref.store %{{.*}}, %[[CT]]
// CHECK: gpu.terminator
// CHECK: %[[YT:.*]] = bufferization.to_tensor %[[Y]] restrict writable
// CHECK: %[[HTT:.*]] = bufferization.to_tensor %[[HT]] restrict writable
// CHECK: %[[CTT:.*]] = bufferization.to_tensor %[[CT]] restrict writable
// CHECK-NOT: lstm.layer
// CHECK: return %[[YT]], %[[HTT]], %[[CTT]]

// At most 2 blocks of one warp: each block owns 2 of the 4 units.
// TILED-LABEL: func.func @cell
// TILED: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c32{{.*}},
func.func @cell(%x: tensor<?x?x8xf32>, %h0: tensor<?x4xf32>, %c0: tensor<?x4xf32>,
                %R: tensor<8x4xf32>, %b: tensor<4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %y, %hT, %cT = lstm.layer reverse ins(%x : tensor<?x?x8xf32>)
      init(%h0, %c0 : tensor<?x4xf32>, tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x4xf32>, %c: tensor<?x4xf32>):
    %zero = arith.constant 0 : index
    %p = lstm.gate identity(%h : tensor<?x4xf32>) weights(%R : tensor<8x4xf32>)
        -> tensor<?x8xf32>
    %dp = tensor.dim %p, %zero : tensor<?x8xf32>
    %p1 = tensor.extract_slice %p[0, 4] [%dp, 4] [1, 1]
        : tensor<?x8xf32> to tensor<?x4xf32>
    %dx = tensor.dim %xt, %zero : tensor<?x8xf32>
    %x1 = tensor.extract_slice %xt[0, 4] [%dx, 4] [1, 1]
        : tensor<?x8xf32> to tensor<?x4xf32>
    %hn, %cn = lstm.pointwise ins(%p1, %x1, %b, %c : tensor<?x4xf32>,
        tensor<?x4xf32>, tensor<4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32>, tensor<?x4xf32> {
    ^bb0(%a: f32, %u: f32, %v: f32, %w: f32):
      %s = arith.addf %a, %u : f32
      %t = arith.addf %s, %v : f32
      %n = math.tanh %t : f32
      %m = arith.addf %n, %w : f32
      lstm.pointwise_yield %n, %m : f32, f32
    }
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn, %cn : tensor<?x4xf32>, tensor<?x4xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A product of a value the step computes (Cho's GRU reads R_n (r ⊙ h)):
// its columns need the whole of r ⊙ h, made by other threads in the same
// step. The layer keeps the per-step lowering.
// CHECK-LABEL: func.func @dependent_product
// CHECK-NOT: gpu.launch
// CHECK: lstm.layer
func.func @dependent_product(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                             %R: tensor<4x4xf32>) -> tensor<?x?x4xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %r = lstm.pointwise ins(%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      lstm.pointwise_yield %m : f32
    }
    %p = lstm.gate identity(%r : tensor<?x4xf32>) weights(%R : tensor<4x4xf32>)
        -> tensor<?x4xf32>
    %hn = lstm.pointwise ins(%p : tensor<?x4xf32>) -> tensor<?x4xf32> {
    ^bb0(%a: f32):
      %t = math.tanh %a : f32
      lstm.pointwise_yield %t : f32
    }
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y : tensor<?x?x4xf32>
}

// -----

// Lengths (packed sequences) are not handled by the kernel yet.
// CHECK-LABEL: func.func @lengths
// CHECK-NOT: gpu.launch
// CHECK: lstm.layer
func.func @lengths(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                   %R: tensor<4x4xf32>, %len: tensor<?xi64>) -> tensor<?x?x4xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x4xf32>) lengths(%len : tensor<?xi64>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %p = lstm.gate identity(%h : tensor<?x4xf32>) weights(%R : tensor<4x4xf32>)
        -> tensor<?x4xf32>
    %hn = lstm.pointwise ins(%p, %xt : tensor<?x4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      %t = math.tanh %s : f32
      lstm.pointwise_yield %t : f32
    }
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y : tensor<?x?x4xf32>
}
