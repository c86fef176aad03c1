// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/../../../examples/layernorm_stack2.mlir --lstm-optimize=wavefront=false --lstm-to-persistent=always=true | FileCheck %s
// RUN: lstm-opt %S/../../../examples/layernorm_stack2.mlir --lstm-optimize=wavefront=false "--lstm-schedule-report=persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: lstm-opt %s --lstm-to-persistent=always=true | FileCheck %s --check-prefix=PIECES
// RUN: lstm-opt %S/../../../examples/layernorm_stack2.mlir --lstm-differentiate --lstm-optimize=wavefront=false "--lstm-schedule-report=persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRAD
// RUN: lstm-opt %s "--lstm-schedule-report=persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT-LONE
// RUN: lstm-opt %s "--lstm-schedule-report=persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT-ODD

// Pointwise values wider than the units: an op of [B, k * N] results
// evaluates k pieces per (row, unit), piece j at column unit + j * N. The
// layer-normalised LSTM normalises the 4N gate pre-activations: their mean
// and variance are products with a constant [4N, 4N] averaging matrix of
// 4N-wide values, each a phase of its own after the value is complete.
// Five phases a step: the gates' product, the pre-activations' mean, their
// variance (then the cell), c's mean, c's variance (then h).

// The averaging matrices are splat constants: their products take no
// registers and no loads (the warps multiply by the constant), and the
// cost model's bound counts the products by other weights only: both
// layers in one kernel, to B = 256 (the whole work would bound it at 26).
// REPORT: @forward layer 0 (forward): {{.*}} persistent=B<=256 stack=0-1 (one kernel of 128 blocks of 512 threads, B<=256)
// REPORT: @forward layer 1 (forward): {{.*}} persistent=B<=256 stack=0-1

// Training: the training forward saves 4N-wide values (outputs stored a
// piece a unit, products' too); the backward reads a concatenation of
// N-wide results as a 4N-wide operand, slices a 4N-wide value with a
// state's batch extent, and sums two 4N-wide values with a lone arith.addf
// that lstm-fuse-elementwise leaves unfused: all run in the kernels.
// GRAD: @forward_train layer 0 (forward): {{.*}} persistent=B<=
// GRAD: @forward_train layer 1 (forward): {{.*}} persistent=B<=
// The backward reads the averaging matrices transposed (a linalg.transpose
// of the splat constant): one kernel for both layers as well.
// GRAD: @forward_backward layer 0 (reverse): {{.*}} persistent=B<=256 stack=0-1
// GRAD: @forward_backward layer 1 (reverse): {{.*}} persistent=B<=256 stack=0-1

// CHECK-LABEL: func.func @forward
// CHECK-DAG: memref.alloc(%{{.*}}) : memref<2x?x512xf32>
// The two layers in one kernel; each layer's blocks meet the initial
// states' barrier, then the step's five.
// CHECK: %[[AVG:.*]] = bufferization.to_buffer %cst read_only : tensor<512x512xf32>
// CHECK: gpu.launch
// CHECK-NOT: memref.load %[[AVG]]
// CHECK: arith.constant 0.001953125 : f32
// CHECK-NOT: memref.load %[[AVG]]
// CHECK-COUNT-12: lstm.grid_barrier
// CHECK-NOT: lstm.grid_barrier
// CHECK: gpu.terminator

// A [B, 2N] op reading a [B, 2N] product whole and a slice of it: unit n
// evaluates columns n and n + N of each.
// PIECES-LABEL: func.func @pieces
// PIECES: gpu.launch
// The product's columns n and n + 4 (4 = N).
// PIECES: %[[REG0:.*]] = memref.load %{{.*}}[%[[ROW0:.*]], %{{.*}}] : memref<8x4xf32
// PIECES: arith.addi %{{.*}}, %c4
// Each piece reads its own column of the rank-1 bias and stores its own
// column of the scratch value; the N-wide op reads piece 1 of it.
// PIECES: arith.addi %[[UNIT:.*]], %c4{{.*}} : index
// PIECES: memref.load %{{.*}}[%{{.*}}] : memref<8xf32
// PIECES: math.tanh
// PIECES: math.tanh
// PIECES: arith.mulf
// PIECES: gpu.terminator
func.func @pieces(%x: tensor<?x?x8xf32>, %h0: tensor<?x4xf32>,
    %R: tensor<8x4xf32>, %b: tensor<8xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>)
      init(%h0 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x4xf32>):
    %p = lstm.gate identity (%h : tensor<?x4xf32>)
        weights(%R : tensor<8x4xf32>) -> tensor<?x8xf32>
    %a = lstm.pointwise ins(%p, %xt, %b : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32> {
    ^bb0(%pe: f32, %xe: f32, %be: f32):
      %s = arith.addf %pe, %xe : f32
      %t = arith.addf %s, %be : f32
      %u = math.tanh %t : f32
      lstm.pointwise_yield %u : f32
    }
    %c0 = arith.constant 0 : index
    %B = tensor.dim %a, %c0 : tensor<?x8xf32>
    %a0 = tensor.extract_slice %a[0, 0] [%B, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %a1 = tensor.extract_slice %a[0, 4] [%B, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %n = lstm.pointwise ins(%a0, %a1 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
    ^bb0(%e0: f32, %e1: f32):
      %m = arith.mulf %e0, %e1 : f32
      lstm.pointwise_yield %m : f32
    }
    lstm.yield out(%n : tensor<?x4xf32>) state(%n : tensor<?x4xf32>)
  }
  return %y, %hT : tensor<?x?x4xf32>, tensor<?x4xf32>
}

// A concatenation of two N-wide results read whole by a [B, 2N] op, a lone
// arith.addf of [B, 2N] values, a [B, 2N] output (both pieces stored) and
// slices sized by the state's rows.
// REPORT-LONE: @lone_and_concat layer 0 (forward): {{.*}} persistent=B<=
// PIECES-LABEL: func.func @lone_and_concat
// PIECES: %[[Y:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x8xf32>
// PIECES: gpu.launch
// The concatenation's pieces a (tanh) and b, each added to its column of
// x; the lone addf adds the product's columns p0 and p1.
// PIECES: %[[A:.*]] = math.tanh %[[P0:.*]] : f32
// PIECES: %[[B:.*]] = arith.mulf %[[P1:.*]], %[[A]] : f32
// PIECES: %[[D0:.*]] = arith.addf %[[A]], %{{.*}} : f32
// PIECES: %[[D1:.*]] = arith.addf %[[B]], %{{.*}} : f32
// PIECES: %[[F0:.*]] = arith.addf %[[D0]], %[[P0]] : f32
// PIECES: %[[F1:.*]] = arith.addf %[[D1]], %[[P1]] : f32
// PIECES: arith.subf %[[F0]], %[[F1]] : f32
// PIECES: memref.store %[[F0]], %[[Y]]
// PIECES: memref.store %[[F1]], %[[Y]]
// PIECES: gpu.terminator
func.func @lone_and_concat(%x: tensor<?x?x8xf32>, %h0: tensor<?x4xf32>,
    %R: tensor<8x4xf32>) -> (tensor<?x?x8xf32>, tensor<?x4xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>)
      init(%h0 : tensor<?x4xf32>) -> (tensor<?x?x8xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x4xf32>):
    %c0 = arith.constant 0 : index
    %B = tensor.dim %h, %c0 : tensor<?x4xf32>
    %p = lstm.gate identity (%h : tensor<?x4xf32>)
        weights(%R : tensor<8x4xf32>) -> tensor<?x8xf32>
    %Bp = tensor.dim %p, %c0 : tensor<?x8xf32>
    %p0 = tensor.extract_slice %p[0, 0] [%Bp, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %p1 = tensor.extract_slice %p[0, 4] [%Bp, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %a = lstm.pointwise ins(%p0 : tensor<?x4xf32>) -> tensor<?x4xf32> {
    ^bb0(%e: f32):
      %t = math.tanh %e : f32
      lstm.pointwise_yield %t : f32
    }
    %b = lstm.pointwise ins(%p1, %a : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
    ^bb0(%e: f32, %f: f32):
      %m = arith.mulf %e, %f : f32
      lstm.pointwise_yield %m : f32
    }
    %e0 = tensor.empty(%B) : tensor<?x8xf32>
    %e1 = tensor.insert_slice %a into %e0[0, 0] [%B, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
    %cat = tensor.insert_slice %b into %e1[0, 4] [%B, 4] [1, 1] : tensor<?x4xf32> into tensor<?x8xf32>
    %d = lstm.pointwise ins(%cat, %xt : tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32> {
    ^bb0(%e: f32, %f: f32):
      %s = arith.addf %e, %f : f32
      lstm.pointwise_yield %s : f32
    }
    %f = arith.addf %d, %p : tensor<?x8xf32>
    %f0 = tensor.extract_slice %f[0, 0] [%B, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %f1 = tensor.extract_slice %f[0, 4] [%B, 4] [1, 1] : tensor<?x8xf32> to tensor<?x4xf32>
    %n = lstm.pointwise ins(%f0, %f1 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
    ^bb0(%e: f32, %g: f32):
      %s = arith.subf %e, %g : f32
      lstm.pointwise_yield %s : f32
    }
    lstm.yield out(%f : tensor<?x8xf32>) state(%n : tensor<?x4xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x4xf32>
}

// A pointwise value 6 wide in a cell of 4-wide states: neither k · N nor
// narrower than N, left to the per-step lowering with the reason.
// REPORT-ODD: @odd_width layer 0 (forward): {{.*}} persistent=no (a pointwise op that is not [B, k * N] or narrower than N, N the widest state's width)
func.func @odd_width(%x: tensor<?x?x6xf32>, %h0: tensor<?x4xf32>,
    %R: tensor<6x4xf32>, %P: tensor<4x6xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x6xf32>)
      init(%h0 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x6xf32>, %h: tensor<?x4xf32>):
    %p = lstm.gate identity (%h : tensor<?x4xf32>)
        weights(%R : tensor<6x4xf32>) -> tensor<?x6xf32>
    %a = lstm.pointwise ins(%p, %xt : tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<?x6xf32> {
    ^bb0(%e: f32, %f: f32):
      %s = arith.addf %e, %f : f32
      %t = math.tanh %s : f32
      lstm.pointwise_yield %t : f32
    }
    %n = lstm.gate identity (%a : tensor<?x6xf32>)
        weights(%P : tensor<4x6xf32>) -> tensor<?x4xf32>
    lstm.yield out(%n : tensor<?x4xf32>) state(%n : tensor<?x4xf32>)
  }
  return %y, %hT : tensor<?x?x4xf32>, tensor<?x4xf32>
}
