// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --pass-pipeline="builtin.module(func.func(lstm-merge-gpu-launches))" -split-input-file | FileCheck %s

// Two copies into the two layers' slices of a stacked state ([2, B, 8]: the
// static offsets 0 and 1 of the leading dimension select disjoint
// elements), the pure ops between them: one launch of both grids, blocks
// below the first grid copying the first state, the others the second with
// their index less the first grid.
// CHECK-LABEL: func.func @disjoint_slices
// CHECK-SAME: (%[[A:.*]]: memref<?x8xf32>, %[[B:.*]]: memref<?x8xf32>, %[[G1:.*]]: index, %[[G2:.*]]: index)
// CHECK: %[[OUT:.*]] = memref.alloc
// CHECK: %[[S0:.*]] = memref.subview %[[OUT]][0, 0, 0]
// CHECK: %[[S1:.*]] = memref.subview %[[OUT]][1, 0, 0]
// CHECK: %[[TOTAL:.*]] = arith.addi %[[G1]], %[[G2]]
// CHECK: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[TOTAL]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// CHECK: %[[FIRST:.*]] = arith.cmpi ult, %[[BID]], %[[G1]]
// CHECK: scf.if %[[FIRST]] {
// CHECK: memref.load %[[A]][%[[BID]], %[[TID]]]
// CHECK: memref.store %{{.*}}, %[[S0]][%[[BID]], %[[TID]]]
// CHECK: } else {
// CHECK: %[[LOCAL:.*]] = arith.subi %[[BID]], %[[G1]]
// CHECK: memref.load %[[B]][%[[LOCAL]], %[[TID]]]
// CHECK: memref.store %{{.*}}, %[[S1]][%[[LOCAL]], %[[TID]]]
// CHECK: }
// CHECK: gpu.terminator
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @disjoint_slices(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %g1: index, %g2: index) -> memref<2x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  %out = memref.alloc(%n) : memref<2x?x8xf32>
  %s0 = memref.subview %out[0, 0, 0] [1, %n, 8] [1, 1, 1] : memref<2x?x8xf32> to memref<?x8xf32, strided<[8, 1]>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g1, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%bx, %tx] : memref<?x8xf32>
    memref.store %v, %s0[%bx, %tx] : memref<?x8xf32, strided<[8, 1]>>
    gpu.terminator
  }
  %s1 = memref.subview %out[1, 0, 0] [1, %n, 8] [1, 1, 1] : memref<2x?x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g2, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%bx, %tx] : memref<?x8xf32>
    memref.store %v, %s1[%bx, %tx] : memref<?x8xf32, strided<[8, 1], offset: ?>>
    gpu.terminator
  }
  return %out : memref<2x?x8xf32>
}

// -----

// The second launch reads what the first writes (a zero fill and the
// product accumulated on it): two launches.
// CHECK-LABEL: func.func @dependent
// CHECK: gpu.launch
// CHECK: gpu.launch
func.func @dependent(%a: memref<?x8xf32>, %g: index) -> memref<?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  %acc = memref.alloc(%n) : memref<?x8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %acc[%bx, %tx] : memref<?x8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%bx, %tx] : memref<?x8xf32>
    %w = memref.load %acc[%bx, %tx] : memref<?x8xf32>
    %s = arith.addf %v, %w : f32
    memref.store %s, %acc[%bx, %tx] : memref<?x8xf32>
    gpu.terminator
  }
  return %acc : memref<?x8xf32>
}

// -----

// Two arguments may be the same memory: a launch writing one and another
// reading the other stay apart; so do launches with a call between them,
// launches of other block sizes, and a named (persistent) kernel.
// CHECK-LABEL: func.func @kept_apart
// CHECK-COUNT-6: gpu.launch
// CHECK-NOT: gpu.launch
func.func private @opaque(memref<?x8xf32>)
func.func @kept_apart(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %g: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  %t = memref.alloc(%n) : memref<?x8xf32>
  %u = memref.alloc(%n) : memref<?x8xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %a[%bx, %tx] : memref<?x8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%bx, %tx] : memref<?x8xf32>
    memref.store %v, %t[%bx, %tx] : memref<?x8xf32>
    gpu.terminator
  }
  func.call @opaque(%t) : (memref<?x8xf32>) -> ()
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %u[%bx, %tx] : memref<?x8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c128, %sy = %c1, %sz = %c1) {
    memref.store %zero, %t[%bx, %tx] : memref<?x8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %u[%bx, %tx] : memref<?x8xf32>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %t[%bx, %tx] : memref<?x8xf32>
    gpu.terminator
  } {function = @lstm_persistent_named, module = @lstm_persistent_named}
  return
}

// -----

// Slices of one buffer whose static offsets overlap in every dimension (rows
// [0, 2) and [1, 3)): two launches.
// CHECK-LABEL: func.func @overlapping_slices
// CHECK: gpu.launch
// CHECK: gpu.launch
func.func @overlapping_slices(%g: index) -> memref<4x8xf32> {
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %zero = arith.constant 0.0 : f32
  %out = memref.alloc() : memref<4x8xf32>
  %s0 = memref.subview %out[0, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1]>>
  %s1 = memref.subview %out[1, 0] [2, 8] [1, 1] : memref<4x8xf32> to memref<2x8xf32, strided<[8, 1], offset: 8>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %s0[%bx, %tx] : memref<2x8xf32, strided<[8, 1]>>
    gpu.terminator
  }
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    memref.store %zero, %s1[%bx, %tx] : memref<2x8xf32, strided<[8, 1], offset: 8>>
    gpu.terminator
  }
  return %out : memref<4x8xf32>
}

// -----

// A wavefront diagonal's gather: one launch copies the step's input into a
// buffer allocated in this iteration, the other the links the loop carries
// (a buffer an earlier iteration allocated at the same op) into the same
// buffer. Alias analysis cannot tell the carried buffer from the fresh one;
// the allocation comes after the carried buffer is defined, and that buffer
// is still read, so they are distinct: one launch. A buffer allocated after
// the launches (the next step's) is left out of this.
// CHECK-LABEL: func.func @fresh_buffer
// CHECK: scf.for
// CHECK: %[[G:.*]] = memref.alloc
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: scf.yield %[[G]]
func.func @fresh_buffer(%x: memref<?x?x8xf32>, %init: memref<2x?x8xf32>, %n: index, %g: index) -> memref<2x?x8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %b = memref.dim %init, %c1 : memref<2x?x8xf32>
  %r = scf.for %t = %c0 to %n step %c1 iter_args(%links = %init) -> (memref<2x?x8xf32>) {
    %gather = memref.alloc(%b) : memref<2x?x8xf32>
    %xt = memref.subview %x[%t, 0, 0] [1, %b, 8] [1, 1, 1] : memref<?x?x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
    %g0 = memref.subview %gather[0, 0, 0] [1, %b, 8] [1, 1, 1] : memref<2x?x8xf32> to memref<?x8xf32, strided<[8, 1]>>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %v = memref.load %xt[%bx, %tx] : memref<?x8xf32, strided<[8, 1], offset: ?>>
      memref.store %v, %g0[%bx, %tx] : memref<?x8xf32, strided<[8, 1]>>
      gpu.terminator
    }
    %l0 = memref.subview %links[0, 0, 0] [1, %b, 8] [1, 1, 1] : memref<2x?x8xf32> to memref<?x8xf32, strided<[8, 1]>>
    %g1 = memref.subview %gather[1, 0, 0] [1, %b, 8] [1, 1, 1] : memref<2x?x8xf32> to memref<?x8xf32, strided<[8, 1], offset: ?>>
    gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
      %v = memref.load %l0[%bx, %tx] : memref<?x8xf32, strided<[8, 1]>>
      memref.store %v, %g1[%bx, %tx] : memref<?x8xf32, strided<[8, 1], offset: ?>>
      gpu.terminator
    }
    scf.yield %gather : memref<2x?x8xf32>
  }
  return %r : memref<2x?x8xf32>
}

// -----

// A concatenation along the last dimension, [B, 16] from two [B, 8]
// halves: the left half is filled through a slice of its slice (a gather
// built in the concatenation), the right half copied in. The outer slices'
// static columns [0, 8) and [8, 16) are disjoint, so are the slices within
// them: one launch.
// CHECK-LABEL: func.func @nested_slices
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: return
func.func @nested_slices(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %g: index) -> memref<?x16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c256 = arith.constant 256 : index
  %n = memref.dim %a, %c0 : memref<?x8xf32>
  %out = memref.alloc(%n) : memref<?x16xf32>
  %left = memref.subview %out[0, 0] [%n, 8] [1, 1] : memref<?x16xf32> to memref<?x8xf32, strided<[16, 1]>>
  %rows = memref.subview %left[1, 0] [%g, 8] [1, 1] : memref<?x8xf32, strided<[16, 1]>> to memref<?x8xf32, strided<[16, 1], offset: 16>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%bx, %tx] : memref<?x8xf32>
    memref.store %v, %rows[%bx, %tx] : memref<?x8xf32, strided<[16, 1], offset: 16>>
    gpu.terminator
  }
  %right = memref.subview %out[0, 8] [%n, 8] [1, 1] : memref<?x16xf32> to memref<?x8xf32, strided<[16, 1], offset: 8>>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %g, %gy = %c1, %gz = %c1) threads(%tx, %ty, %tz) in (%sx = %c256, %sy = %c1, %sz = %c1) {
    %v = memref.load %b[%bx, %tx] : memref<?x8xf32>
    memref.store %v, %right[%bx, %tx] : memref<?x8xf32, strided<[16, 1], offset: 8>>
    gpu.terminator
  }
  return %out : memref<?x16xf32>
}
