// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-lower-grid-barriers | FileCheck %s

// A grid barrier becomes the block barrier, one thread's arrival on the
// counter (a release fence and a relaxed atomic add) and its acquire
// polling until ordinal × G arrivals (G = blocks of the grid, all three
// dimensions), and a second block barrier.

// CHECK-LABEL: func.func @barrier
// CHECK-SAME: (%[[COUNTER:.*]]: memref<1xi32>, %[[K:.*]]: index)
// CHECK: gpu.launch
// CHECK: gpu.barrier
// CHECK-DAG: %[[TX:.*]] = gpu.thread_id x
// CHECK-DAG: %[[GX:.*]] = gpu.grid_dim x
// CHECK-DAG: %[[GY:.*]] = gpu.grid_dim y
// CHECK-DAG: %[[GZ:.*]] = gpu.grid_dim z
// CHECK-DAG: %[[GXY:.*]] = arith.muli %[[GX]], %[[GY]]
// CHECK-DAG: %[[G:.*]] = arith.muli %[[GXY]], %[[GZ]]
// CHECK: %[[KG:.*]] = arith.muli %[[K]], %[[G]] : index
// CHECK: %[[TARGET:.*]] = arith.index_cast %[[KG]] : index to i32
// CHECK: scf.if
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[COUNTER]]
// CHECK: %[[WORD:.*]] = llvm.inttoptr
// CHECK-NEXT: llvm.fence syncscope("device") release
// CHECK: llvm.atomicrmw add %[[WORD]], %{{.*}} syncscope("device") monotonic
// CHECK: scf.while
// CHECK: %[[ARRIVED:.*]] = llvm.load %[[WORD]] atomic syncscope("device") acquire {alignment = 4 : i64} : !llvm.ptr -> i32
// CHECK: %[[WAIT:.*]] = arith.cmpi slt, %[[ARRIVED]], %[[TARGET]] : i32
// CHECK: scf.condition(%[[WAIT]])
// CHECK: gpu.barrier
// CHECK-NOT: lstm.grid_barrier
// CHECK: gpu.terminator
func.func @barrier(%counter: memref<1xi32>, %k: index) {
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c4, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c4, %sy = %c1, %sz = %c1) {
    lstm.grid_barrier %counter[%k] : memref<1xi32>
    gpu.terminator
  }
  return
}

// A block barrier is gpu.barrier.
// CHECK-LABEL: func.func @block
// CHECK: gpu.launch
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: lstm.block_barrier
// CHECK: gpu.terminator
func.func @block() {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    lstm.block_barrier
    gpu.terminator
  }
  return
}
