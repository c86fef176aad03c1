// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A generated kernel splits its linear index into the loops' indices by the
// loops' extents. Those are computed on the host from the loops' bounds; the
// canonicalisation right after lstm-parallel-loops-to-gpu folds the static
// ones, which then go into the kernel as constants: the LSTM's hidden size
// (8) is a constant divisor in every kernel (a shift and a mask), where it
// was a 64-bit division by a kernel argument; only the batch and the
// sequence length, dynamic, stay arguments.
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection --lstm-fuse-elementwise --lstm-to-nvvm -mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s

// CHECK: gpu.module
// CHECK: gpu.func @forward_kernel(
// CHECK-NOT: arith.remui
// CHECK: arith.remui %{{.*}}, %c8 : index
// CHECK-NEXT: arith.divui %{{.*}}, %c8 : index
// The recurrent weights' transposition before the loop
// (lstm-transpose-loop-weights), every extent static:
// CHECK: gpu.func @forward_kernel(%{{.*}}: memref<32x8xf32>, %{{.*}}: memref<8x32xf32>)
// CHECK: arith.remui %{{.*}}, %c32 : index
// CHECK-NEXT: arith.divui %{{.*}}, %c32 : index
// CHECK-NEXT: arith.remui %{{.*}}, %c8 : index
// CHECK: gpu.func @forward_kernel(
// CHECK-NOT: arith.remui
// CHECK: arith.remui %{{.*}}, %c8 : index
// CHECK-NEXT: arith.divui %{{.*}}, %c8 : index
// CHECK: gpu.func @forward_kernel(
// CHECK-NOT: arith.remui
// CHECK: arith.remui %{{.*}}, %c8 : index
// CHECK-NEXT: arith.divui %{{.*}}, %c8 : index
