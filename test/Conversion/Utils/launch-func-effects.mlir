// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --ownership-based-buffer-deallocation | FileCheck %s

// gpu.launch_func reads and writes the buffers it is passed (the external
// model of LaunchFuncEffects.cpp): the ownership-based deallocation, which
// rejects an op whose effects it does not know, takes the launch and frees
// the buffer after it, not after its last use before the launch.

// CHECK-LABEL: func.func @launch
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK-NOT: bufferization.dealloc
// CHECK: gpu.launch_func @kernels::@k {{.*}} args(%[[A]] : memref<4xf32>)
// CHECK-NEXT: %[[BASE:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[A]]
// CHECK-NEXT: bufferization.dealloc (%[[BASE]] : memref<f32>)
// CHECK-NEXT: return

module attributes {gpu.container_module} {
  func.func @launch(%x: f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %a = memref.alloc() : memref<4xf32>
    memref.store %x, %a[%c0] : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%a : memref<4xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%b: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
