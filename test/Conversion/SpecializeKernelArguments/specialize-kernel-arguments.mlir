// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-specialize-kernel-arguments --split-input-file | FileCheck %s
// RUN: lstm-opt %s --pass-pipeline="builtin.module(lstm-specialize-kernel-arguments,gpu.module(canonicalize))" --split-input-file | FileCheck %s --check-prefix=FOLDED

// Both launches cast their buffer from memref<4x8xf32> and pass the
// constant 8: the kernel takes the static buffer (its body through a cast
// that the canonicalizer folds into the load) and makes the constant
// itself; the launches pass the cast's source and drop the constant. The
// argument that differs between the launches (%n, %m) stays.

// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[A:.*]]: memref<4x8xf32>, %[[N:.*]]: index, %[[M:.*]]: index)
// CHECK: gpu.launch_func @kernels::@k blocks in ({{.*}}) threads in ({{.*}}) args(%[[A]] : memref<4x8xf32>, %[[N]] : index)
// CHECK: gpu.launch_func @kernels::@k blocks in ({{.*}}) threads in ({{.*}}) args(%[[A]] : memref<4x8xf32>, %[[M]] : index)
// CHECK: gpu.func @k(%[[ARG:.*]]: memref<4x8xf32>, %[[I:.*]]: index) kernel
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[VIEW:.*]] = memref.cast %[[ARG]] : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
// CHECK: memref.load %[[VIEW]][%[[I]], %[[C8]]]

// FOLDED: gpu.func @k(%[[ARG:.*]]: memref<4x8xf32>, %[[I:.*]]: index) kernel
// FOLDED-NOT: memref.cast
// FOLDED: memref.load %[[ARG]][%[[I]], %{{.*}}] : memref<4x8xf32>

module attributes {gpu.container_module} {
  func.func @host(%a: memref<4x8xf32>, %n: index, %m: index) {
    %c1 = arith.constant 1 : index
    %c8 = arith.constant 8 : index
    %view = memref.cast %a : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%view : memref<?x?xf32, strided<[?, ?], offset: ?>>, %c8 : index, %n : index)
    %again = memref.cast %a : memref<4x8xf32> to memref<?x?xf32, strided<[?, ?], offset: ?>>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%again : memref<?x?xf32, strided<[?, ?], offset: ?>>, %c8 : index, %m : index)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%buffer: memref<?x?xf32, strided<[?, ?], offset: ?>>, %j: index, %i: index) kernel {
      %x = memref.load %buffer[%i, %j] : memref<?x?xf32, strided<[?, ?], offset: ?>>
      memref.store %x, %buffer[%j, %i] : memref<?x?xf32, strided<[?, ?], offset: ?>>
      gpu.return
    }
  }
}

// -----

// Launches that pass different buffer types, different constants, or a
// buffer not made by a cast leave the kernel's arguments as they are; a
// kernel no launch names too.

// CHECK-LABEL: func.func @mixed
// CHECK: gpu.func @k(%{{.*}}: memref<?xf32, strided<[?], offset: ?>>, %{{.*}}: index, %{{.*}}: memref<?xf32>) kernel
// CHECK: gpu.func @unused(%{{.*}}: index) kernel
// CHECK-NOT: arith.constant

module attributes {gpu.container_module} {
  func.func @mixed(%a: memref<4xf32>, %b: memref<6xf32>, %c: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %va = memref.cast %a : memref<4xf32> to memref<?xf32, strided<[?], offset: ?>>
    %vb = memref.cast %b : memref<6xf32> to memref<?xf32, strided<[?], offset: ?>>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%va : memref<?xf32, strided<[?], offset: ?>>, %c1 : index, %c : memref<?xf32>)
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%vb : memref<?xf32, strided<[?], offset: ?>>, %c2 : index, %c : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%buffer: memref<?xf32, strided<[?], offset: ?>>, %i: index, %out: memref<?xf32>) kernel {
      %x = memref.load %buffer[%i] : memref<?xf32, strided<[?], offset: ?>>
      memref.store %x, %out[%i] : memref<?xf32>
      gpu.return
    }
    gpu.func @unused(%i: index) kernel {
      gpu.return
    }
  }
}

// -----

// A value every launch passes for two arguments becomes one argument.

// CHECK-LABEL: func.func @twice
// CHECK-SAME: (%[[A:.*]]: memref<?xf32>, %[[I:.*]]: index)
// CHECK: gpu.launch_func @kernels::@k blocks in ({{.*}}) threads in ({{.*}}) args(%[[A]] : memref<?xf32>, %[[I]] : index)
// CHECK: gpu.func @k(%[[X:.*]]: memref<?xf32>, %[[J:.*]]: index) kernel
// CHECK: %[[V:.*]] = memref.load %[[X]][%[[J]]]
// CHECK: memref.store %[[V]], %[[X]][%[[J]]]

module attributes {gpu.container_module} {
  func.func @twice(%a: memref<?xf32>, %i: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%a : memref<?xf32>, %i : index, %a : memref<?xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%in: memref<?xf32>, %i: index, %out: memref<?xf32>) kernel {
      %x = memref.load %in[%i] : memref<?xf32>
      memref.store %x, %out[%i] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// A kernel with a workgroup attribution: the attribution stays one, after
// the kernel's (specialized) arguments.

// CHECK-LABEL: func.func @attribution
// CHECK: gpu.launch_func @kernels::@k blocks in ({{.*}}) threads in ({{.*}}) args(%{{.*}} : memref<4xf32>)
// CHECK: gpu.func @k(%[[B:.*]]: memref<4xf32>) workgroup(%[[W:.*]] : memref<4xf32, #gpu.address_space<workgroup>>) kernel

module attributes {gpu.container_module} {
  func.func @attribution(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %view = memref.cast %a : memref<4xf32> to memref<?xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
      args(%view : memref<?xf32>, %c2 : index)
    return
  }
  gpu.module @kernels {
    gpu.func @k(%buffer: memref<?xf32>, %i: index)
        workgroup(%w: memref<4xf32, #gpu.address_space<workgroup>>) kernel {
      %x = memref.load %buffer[%i] : memref<?xf32>
      memref.store %x, %w[%i] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.return
    }
  }
}
