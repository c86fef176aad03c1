// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: not lstm-opt %s --lstm-lower-grid-barriers 2>&1 | FileCheck %s

// The counter's address comes from its LLVM descriptor: a counter in a
// memory space the descriptor has no conversion for (shared memory, which
// no other block could see anyway) is an error naming the op, not a crash.
// CHECK: error: 'lstm.grid_barrier' op has a counter of type 'memref<1xi32, #gpu.address_space<workgroup>>' that has no LLVM descriptor
func.func @workgroup_counter(%counter: memref<1xi32, #gpu.address_space<workgroup>>, %k: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    lstm.grid_barrier %counter[%k] : memref<1xi32, #gpu.address_space<workgroup>>
    gpu.terminator
  }
  return
}
