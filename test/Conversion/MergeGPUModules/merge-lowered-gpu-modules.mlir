// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-merge-gpu-modules=after-lowering --split-input-file \
// RUN:   --verify-diagnostics | FileCheck %s

// Lowered kernel modules with the same target become one: the persistent
// kernels' module of 32-bit indices and the others'. The first module's
// attributes are kept; a libdevice function both declare with one type is
// declared once (its name is what links it), a kernel name taken is made
// unique, and the launches follow. A module for another target stays.
// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch_func @first::@k blocks
// CHECK: gpu.launch_func @first::@k_0 blocks
// CHECK: gpu.launch_func @first::@persistent blocks
// CHECK: gpu.launch_func @other::@k blocks
// CHECK: gpu.module @first [#nvvm.target<chip = "sm_90">] {
// CHECK-NEXT: llvm.func @__nv_expf(f32) -> f32
// CHECK-NEXT: llvm.func @k(%{{.*}}: f32) attributes {gpu.kernel, nvvm.kernel}
// CHECK-NEXT: llvm.call @__nv_expf
// CHECK: llvm.func @k_0(%{{.*}}: f32) attributes {gpu.kernel, nvvm.kernel}
// CHECK-NEXT: llvm.call @__nv_expf
// CHECK: llvm.func @persistent() attributes {gpu.kernel, nvvm.kernel}
// CHECK-NEXT: nvvm.read.ptx.sreg.tid.x : i32
// CHECK-NOT: llvm.func @__nv_expf
// CHECK: gpu.module @other [#nvvm.target<chip = "sm_80">] {
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  func.func @forward(%x: f32) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @first::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : f32)
    gpu.launch_func @narrow::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : f32)
    gpu.launch_func @narrow::@persistent blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    gpu.launch_func @other::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%x : f32)
    return
  }
  gpu.module @first [#nvvm.target<chip = "sm_90">] {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @k(%x: f32) attributes {gpu.kernel, nvvm.kernel} {
      %e = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.return
    }
  }
  gpu.module @narrow [#nvvm.target<chip = "sm_90">] attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>} {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @k(%x: f32) attributes {gpu.kernel, nvvm.kernel} {
      %e = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.return
    }
    llvm.func @persistent() attributes {gpu.kernel, nvvm.kernel} {
      %t = nvvm.read.ptx.sreg.tid.x : i32
      llvm.return
    }
  }
  gpu.module @other [#nvvm.target<chip = "sm_80">] {
    llvm.func @k(%x: f32) attributes {gpu.kernel, nvvm.kernel} {
      llvm.return
    }
  }
}

// -----

// A declaration with another type than the first module's cannot be
// shared, nor renamed (the name links it).
module attributes {gpu.container_module} {
  gpu.module @a [#nvvm.target] {
    llvm.func @__nv_expf(f32) -> f32
  }
  gpu.module @b [#nvvm.target] {
    // expected-error @+1 {{lstm-merge-gpu-modules: @__nv_expf is declared with another type, or is another symbol, in @a}}
    llvm.func @__nv_expf(f64) -> f64
  }
}

// -----

// Nor where the first module's symbol of that name is no function.
module attributes {gpu.container_module} {
  gpu.module @a [#nvvm.target] {
    llvm.mlir.global internal @__nv_expf() {addr_space = 3 : i32} : !llvm.array<4 x f32>
  }
  gpu.module @b [#nvvm.target] {
    // expected-error @+1 {{lstm-merge-gpu-modules: @__nv_expf is declared with another type, or is another symbol, in @a}}
    llvm.func @__nv_expf(f32) -> f32
  }
}

// -----

// Before the NVVM lowering it is too early for this mode.
module attributes {gpu.container_module} {
  gpu.module @a [#nvvm.target] {
    // expected-error @+1 {{lstm-merge-gpu-modules{after-lowering}: 'gpu.func' in @a is not in the LLVM or NVVM dialect yet}}
    gpu.func @k() kernel {
      gpu.return
    }
  }
}
