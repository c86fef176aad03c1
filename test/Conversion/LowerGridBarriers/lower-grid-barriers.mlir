// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-lower-grid-barriers | FileCheck %s

// A grid barrier becomes the block barrier, one thread's arrival on the
// counter (a release fence and a relaxed atomic add) and its acquire
// polling until ordinal × G arrivals (G = blocks of the grid, all three
// dimensions), and a second block barrier. The counter's address comes from
// its LLVM descriptor (the aligned pointer and the offset), of the data
// layout's index width: 64 bits by default.

// CHECK-LABEL: func.func @barrier
// CHECK-SAME: (%[[COUNTER:.*]]: memref<1xi32>, %[[K:.*]]: index)
// CHECK: gpu.launch
// CHECK: %[[DESC:.*]] = builtin.unrealized_conversion_cast %[[COUNTER]] : memref<1xi32> to !llvm.struct<(ptr, ptr, i64, array<1 x i64>, array<1 x i64>)>
// CHECK-DAG: %[[ALIGNED:.*]] = llvm.extractvalue %[[DESC]][1]
// CHECK-DAG: %[[OFFSET:.*]] = llvm.extractvalue %[[DESC]][2]
// CHECK: %[[WORD:.*]] = llvm.getelementptr %[[ALIGNED]][%[[OFFSET]]] : (!llvm.ptr, i64) -> !llvm.ptr, i32
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

// A block barrier after asynchronous copies: each thread waits for all of
// its copies (one group of all it started, then a wait for none left),
// then the block meets.
// CHECK-LABEL: func.func @block_after_copies
// CHECK: gpu.launch
// CHECK: nvgpu.device_async_copy
// CHECK-NEXT: %[[GROUP:.*]] = nvgpu.device_async_create_group
// CHECK-NEXT: nvgpu.device_async_wait %[[GROUP]] {numGroups = 0 : i32}
// CHECK-NEXT: gpu.barrier
// CHECK-NOT: lstm.block_barrier
// CHECK: gpu.terminator
func.func @block_after_copies(
    %src: memref<16xf32>,
    %shared: memref<16xf32, #gpu.address_space<workgroup>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %copy = nvgpu.device_async_copy %src[%c0], %shared[%c0], 4 {bypassL1} : memref<16xf32> to memref<16xf32, #gpu.address_space<workgroup>>
    lstm.block_barrier wait_async_copies
    gpu.terminator
  }
  return
}

// In a module whose index is 32 bits wide (lstm-narrow-kernel-indices), the
// descriptor's offset is an i32: the pointer is never an index, which would
// truncate it.
// CHECK-LABEL: gpu.module @narrow
// CHECK: gpu.func @kernel(%[[COUNTER:.*]]: memref<1xi32>, %{{.*}}: index)
// CHECK: %[[DESC:.*]] = builtin.unrealized_conversion_cast %[[COUNTER]] : memref<1xi32> to !llvm.struct<(ptr, ptr, i32, array<1 x i32>, array<1 x i32>)>
// CHECK: %[[OFFSET:.*]] = llvm.extractvalue %[[DESC]][2]
// CHECK: llvm.getelementptr %{{.*}}[%[[OFFSET]]] : (!llvm.ptr, i32) -> !llvm.ptr, i32
// CHECK-NOT: memref.extract_aligned_pointer_as_index
// CHECK: gpu.return
module attributes {gpu.container_module} {
  gpu.module @narrow attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>} {
    gpu.func @kernel(%counter: memref<1xi32>, %k: index) kernel {
      lstm.grid_barrier %counter[%k] : memref<1xi32>
      gpu.return
    }
  }
}
