// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/../../../examples/lstmp.mlir --lstm-optimize=wavefront=false --lstm-to-persistent=always=true | FileCheck %s
// RUN: lstm-opt %s --lstm-optimize=wavefront=false "--lstm-schedule-report=persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: lstm-opt %s --lstm-optimize=wavefront=false --lstm-to-persistent=always=true | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %S/../../../examples/lstmp.mlir --lstm-differentiate --lstm-optimize=wavefront=false "--lstm-schedule-report=persistent=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRAD

// States narrower than the cell's units: an LSTMP's h [B, P] is the
// projection W_hr (o * tanh(c)), a product of a value the step computes, so
// the step has two phases: the gates, c and o * tanh(c) on the N = H units
// (the widest state's width), then the projection, whose column p unit p
// computes. Units past P compute the last weight row's sum and store
// nothing; h's buffers, its initial and final copies and the output
// sequence are P wide.

// CHECK-LABEL: func.func @forward
// CHECK: %[[H:.*]] = memref.alloc(%{{.*}}) : memref<2x?x64xf32>
// CHECK: %[[C:.*]] = memref.alloc(%{{.*}}) : memref<2x?x128xf32>
// CHECK: %[[Y:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x64xf32>
// CHECK: %[[HT:.*]] = memref.alloc(%{{.*}}) : memref<?x64xf32>
// CHECK: %[[M:.*]] = memref.alloc(%{{.*}}) : memref<2x?x128xf32>
// CHECK: gpu.launch
// The projection's weight rows clamped to its last (P - 1).
// CHECK: arith.minui %{{.*}}, %c63
// h0 copied by units below P, c0 by every unit.
// CHECK: %[[IN:.*]] = arith.cmpi ult, %[[UNIT:.*]], %c64
// CHECK: scf.if %[[IN]]
// CHECK: memref.store %{{.*}}, %[[H]][%c0{{.*}}, %{{.*}}, %[[UNIT]]]
// CHECK: memref.store %{{.*}}, %[[C]][%c0{{.*}}, %{{.*}}, %[[UNIT]]]
// CHECK: lstm.grid_barrier
// Phase 0 stages h (64 wide), stores c and o * tanh(c).
// CHECK: nvgpu.device_async_copy %[[H]]{{.*}} : memref<2x?x64xf32>
// CHECK: memref.store %{{.*}}, %[[C]]
// CHECK: memref.store %{{.*}}, %[[M]]
// CHECK: lstm.grid_barrier
// Phase 1 stages o * tanh(c) and stores the projection, units below P.
// CHECK: nvgpu.device_async_copy %[[M]]
// CHECK: %[[P1:.*]] = arith.cmpi ult, %[[U:.*]], %c64
// CHECK: scf.if %[[P1]]
// CHECK: memref.store %[[SUM:.*]], %[[Y]]
// CHECK: memref.store %[[SUM]], %[[H]]
// CHECK: lstm.grid_barrier
// CHECK: gpu.terminator

// REPORT: @two_layers layer 0 (forward): {{.*}} persistent=B<={{[0-9]+}}{{.*}} stack=0-1
// REPORT: @two_layers layer 1 (forward): {{.*}} persistent=B<={{[0-9]+}}{{.*}} stack=0-1

// Layer 1 of the chain projects layer 0's P-wide output in its step.
// STACK-LABEL: func.func @two_layers
// STACK: %[[Y0:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x4xf32>
// STACK: gpu.launch
// STACK: nvgpu.device_async_copy %[[Y0]]{{.*}} : memref<?x?x4xf32>
// STACK: gpu.terminator

// The backward's dh + dy is a P-wide pointwise value (a lone arith.addf),
// evaluated by the units below P; its dh_{t-1} a P-wide product: the
// backward runs as a kernel too.
// GRAD: @forward_train layer 0 (forward): {{.*}} persistent=B<=
// GRAD: @forward_backward layer 0 (reverse): {{.*}} persistent=B<=
// RUN: lstm-opt %S/../../../examples/lstmp.mlir --lstm-differentiate --lstm-optimize=wavefront=false --lstm-to-persistent=always=true | FileCheck %s --check-prefix=BACKWARD
// RUN: lstm-opt %s --lstm-optimize=wavefront=false --lstm-to-persistent=always=true | FileCheck %s --check-prefix=ODD
// BACKWARD-LABEL: func.func @forward_backward
// The scratch buffer of dh + dy, P wide.
// BACKWARD: %[[DHY:.*]] = memref.alloc(%{{.*}}) : memref<2x?x64xf32>
// BACKWARD: gpu.launch
// (The weight rows' clamps come before the initial states' barrier.)
// BACKWARD: lstm.grid_barrier
// Its operands read at the unit clamped below P; its store by units below P.
// BACKWARD: %[[CLAMPED:.*]] = arith.minui %{{.*}}, %c63
// BACKWARD-NEXT: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[CLAMPED]]] : memref<2x?x64xf32>
// BACKWARD-NEXT: memref.load %{{.*}}[%{{.*}}, %{{.*}}, %[[CLAMPED]]] : memref<?x?x64xf32
// BACKWARD: %[[BELOW:.*]] = arith.cmpi ult, %{{.*}}, %c64
// BACKWARD-NEXT: scf.if %[[BELOW]]
// BACKWARD-NEXT: memref.store %{{.*}}, %[[DHY]]

// Two layers of a cell with a projected state: c = tanh(W x + R h + b),
// h = W_hr c.
func.func @two_layers(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
    %c0: tensor<?x8xf32>, %h1: tensor<?x4xf32>, %c1: tensor<?x8xf32>,
    %W0: tensor<8x4xf32>, %R0: tensor<8x4xf32>, %b0: tensor<8xf32>,
    %P0: tensor<4x8xf32>, %W1: tensor<8x4xf32>, %R1: tensor<8x4xf32>,
    %b1: tensor<8xf32>, %P1: tensor<4x8xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x8xf32>) {
  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0 : tensor<?x4xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>, %c: tensor<?x8xf32>):
    %n = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W0, %R0 : tensor<8x4xf32>, tensor<8x4xf32>)
        bias(%b0 : tensor<8xf32>) -> tensor<?x8xf32>
    %p = lstm.gate identity (%n : tensor<?x8xf32>)
        weights(%P0 : tensor<4x8xf32>) -> tensor<?x4xf32>
    lstm.yield out(%p : tensor<?x4xf32>) state(%p, %n : tensor<?x4xf32>, tensor<?x8xf32>)
  }
  %y1, %hT1, %cT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>)
      init(%h1, %c1 : tensor<?x4xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>, %c: tensor<?x8xf32>):
    %n = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W1, %R1 : tensor<8x4xf32>, tensor<8x4xf32>)
        bias(%b1 : tensor<8xf32>) -> tensor<?x8xf32>
    %p = lstm.gate identity (%n : tensor<?x8xf32>)
        weights(%P1 : tensor<4x8xf32>) -> tensor<?x4xf32>
    lstm.yield out(%p : tensor<?x4xf32>) state(%p, %n : tensor<?x4xf32>, tensor<?x8xf32>)
  }
  return %y1, %hT1, %cT1 : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x8xf32>
}

// A projected state 6 floats wide: its rows cannot be staged in 16-byte
// pieces, so the kernel stages with loads and stores (no asynchronous
// copies), as it does for every staged value of a layer that has such a row.
// ODD-LABEL: func.func @odd_projection
// ODD: gpu.launch
// ODD-NOT: nvgpu.device_async_copy
// ODD: gpu.terminator
func.func @odd_projection(%x: tensor<?x?x4xf32>, %h0: tensor<?x6xf32>,
    %c0: tensor<?x8xf32>, %W: tensor<8x4xf32>, %R: tensor<8x6xf32>,
    %b: tensor<8xf32>, %P: tensor<6x8xf32>)
    -> (tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x8xf32>) {
  %y, %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0 : tensor<?x6xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x6xf32>), (tensor<?x6xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x6xf32>, %c: tensor<?x8xf32>):
    %n = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x6xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x6xf32>)
        bias(%b : tensor<8xf32>) -> tensor<?x8xf32>
    %p = lstm.gate identity (%n : tensor<?x8xf32>)
        weights(%P : tensor<6x8xf32>) -> tensor<?x6xf32>
    lstm.yield out(%p : tensor<?x6xf32>) state(%p, %n : tensor<?x6xf32>, tensor<?x8xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x6xf32>, tensor<?x6xf32>, tensor<?x8xf32>
}
