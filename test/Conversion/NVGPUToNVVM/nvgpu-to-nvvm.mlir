// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(gpu.module(lstm-convert-nvgpu-to-nvvm))" | FileCheck %s
// RUN: lstm-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline="builtin.module(gpu.module(lstm-convert-nvgpu-to-nvvm,convert-gpu-to-nvvm),reconcile-unrealized-casts)" \
// RUN:   | FileCheck %s --check-prefix=NVVM

// An asynchronous copy in a module whose index is 32 bits wide: the source
// and destination addresses are computed from 32-bit descriptors, which
// the NVVM lowering of the same module (also 32-bit) meets without a cast
// between widths. Upstream's convert-nvgpu-to-nvvm would make them 64-bit.
// CHECK-LABEL: gpu.module @narrow
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : memref<?x128xf32> to !llvm.struct<(ptr, ptr, i32, array<2 x i32>, array<2 x i32>)>
// CHECK: builtin.unrealized_conversion_cast %{{.*}} : memref<4x128xf32, #gpu.address_space<workgroup>> to !llvm.struct<(ptr<3>, ptr<3>, i32, array<2 x i32>, array<2 x i32>)>
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = {{ *}}cg
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.cp.async.wait.group 0
// CHECK-NOT: nvgpu.
// NVVM-LABEL: gpu.module @narrow
// NVVM: llvm.getelementptr %{{.*}}[%{{.*}}] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// NVVM: nvvm.cp.async.shared.global
// NVVM-NOT: unrealized_conversion_cast
gpu.module @narrow attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>} {
  gpu.func @copy(%src: memref<?x128xf32>, %row: index)
      workgroup(%staged: memref<4x128xf32, #gpu.address_space<workgroup>>)
      kernel {
    %c0 = arith.constant 0 : index
    %token = nvgpu.device_async_copy %src[%row, %c0], %staged[%c0, %c0], 4 {bypassL1} : memref<?x128xf32> to memref<4x128xf32, #gpu.address_space<workgroup>>
    %group = nvgpu.device_async_create_group %token
    nvgpu.device_async_wait %group {numGroups = 0 : i32}
    gpu.return
  }
}

// -----

// An nvgpu op whose types the pass has no conversion for fails it, named
// (upstream's pass converts mbarriers; the kernels here use none).
gpu.module @barrier {
  gpu.func @mbarrier(%barrier: !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    // expected-error @below {{failed to legalize operation 'nvgpu.mbarrier.arrive'}}
    %token = nvgpu.mbarrier.arrive %barrier[%c0] : !nvgpu.mbarrier.group<memorySpace = #gpu.address_space<workgroup>> -> !nvgpu.mbarrier.token
    gpu.return
  }
}
