// Constants (memref.get_global, host memory) that device code reads get a
// device copy per call: made at the function's start by a linalg.copy (a
// kernel that reads the global from the kernels' module), freed before the
// return; host reads keep the global. A buffer that a kernel would read from
// host memory is a compile-time error.
// RUN: lstm-opt %s -split-input-file -lstm-host-memory-to-gpu -verify-diagnostics | FileCheck %s

memref.global "private" constant @cst : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// CHECK-LABEL: func.func @read_in_a_loop
// CHECK-NEXT: %[[G:.*]] = memref.get_global @cst : memref<4xf32>
// CHECK-NEXT: %[[D:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NEXT: linalg.copy ins(%[[G]] : memref<4xf32>) outs(%[[D]] : memref<4xf32>)
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%[[D]], %{{.*}} : memref<4xf32>, memref<4xf32>)
// CHECK-NOT: memref.get_global
// CHECK: gpu.dealloc %[[D]] : memref<4xf32>
// CHECK-NEXT: return
func.func @read_in_a_loop(%a: memref<4xf32>, %out: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %i = %c0 to %n step %c1 {
    %g = memref.get_global @cst : memref<4xf32>
    linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                    iterator_types = ["parallel"]}
        ins(%g, %a : memref<4xf32>, memref<4xf32>) outs(%out : memref<4xf32>) {
    ^bb0(%x: f32, %y: f32, %z: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    }
  }
  return
}

// -----

memref.global "private" constant @cst : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// The host reads the global itself (memref.load): no copy.
// CHECK-LABEL: func.func @host_read
// CHECK-NOT: gpu.alloc
// CHECK: %[[G:.*]] = memref.get_global @cst
// CHECK: memref.load %[[G]]
func.func @host_read(%i: index) -> f32 {
  %g = memref.get_global @cst : memref<4xf32>
  %v = memref.load %g[%i] : memref<4xf32>
  return %v : f32
}

// -----

memref.global "private" constant @cst : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>

// A returned constant is a device buffer that the caller owns: not freed.
// CHECK-LABEL: func.func @returned
// CHECK: %[[D:.*]] = gpu.alloc () : memref<4xf32>
// CHECK-NOT: gpu.dealloc
// CHECK: return %[[D]]
func.func @returned() -> memref<4xf32> {
  %g = memref.get_global @cst : memref<4xf32>
  return %g : memref<4xf32>
}

// -----

func.func @host_buffer_on_the_device(%out: memref<4xf32>) {
  %a = memref.alloca() : memref<4xf32>
  // expected-error @+1 {{lstm-host-memory-to-gpu: this op would read or write host memory on the GPU (a buffer made by memref.alloca at}}
  linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
  return
}

// -----

// Loads and stores inside a gpu.launch (a persistent kernel's) are device
// accesses: the buffer goes to device memory. A load on the host keeps
// another buffer in host memory.
// CHECK-LABEL: func.func @kernel_access
// CHECK: %[[D:.*]] = gpu.alloc (%{{.*}}) : memref<?xf32>
// CHECK: %[[H:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: gpu.launch
// CHECK: memref.load %[[D]]
// CHECK: memref.store %{{.*}}, %[[D]]
// CHECK: memref.load %[[H]]
func.func @kernel_access(%n: index) -> (memref<?xf32>, f32) {
  %c1 = arith.constant 1 : index
  %c0 = arith.constant 0 : index
  %a = memref.alloc(%n) : memref<?xf32>
  %h = memref.alloc(%n) : memref<?xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    %v = memref.load %a[%c0] : memref<?xf32>
    memref.store %v, %a[%tx] : memref<?xf32>
    gpu.terminator
  }
  %w = memref.load %h[%c0] : memref<?xf32>
  memref.dealloc %h : memref<?xf32>
  return %a, %w : memref<?xf32>, f32
}
