// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-narrow-kernel-indices --split-input-file | FileCheck %s
// RUN: lstm-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(lstm-narrow-kernel-indices,gpu.module(lstm-convert-nvgpu-to-nvvm,convert-gpu-to-nvvm,canonicalize),reconcile-unrealized-casts)" \
// RUN:   | FileCheck %s --check-prefix=NVVM

// A persistent kernel moves into a module whose index is 32 bits wide. Its
// index argument becomes an i32; each memref its pointer (an i64) and an
// i32 per dynamic offset, size and stride (here the batch of the sequence,
// and the offset, batch and leading stride of the strided view); the body
// rebuilds the memrefs. The launch passes those values and asserts the
// 2^30 bound. A kernel of another name stays in its module, 64-bit.

// CHECK-LABEL: func.func @host
// CHECK-SAME: (%[[T:.*]]: index, %[[SEQ:.*]]: memref<?x128xf32>, %[[VIEW:.*]]: memref<2x?x128xf32, strided<[?, 128, 1], offset: ?>>, %[[X:.*]]: f32, %[[COUNTER:.*]]: memref<1xi32>)
// CHECK-DAG: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK-DAG: %[[SEQP:.*]] = memref.extract_aligned_pointer_as_index %[[SEQ]]
// CHECK-DAG: %[[SEQP64:.*]] = arith.index_cast %[[SEQP]] : index to i64
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[SEQSIZES:.*]]:2, %[[SEQSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[SEQ]]
// CHECK-DAG: %[[SEQB:.*]] = arith.index_cast %[[SEQSIZES]]#0 : index to i32
// CHECK-DAG: %[[VIEWP:.*]] = memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK-DAG: %[[VIEWP64:.*]] = arith.index_cast %[[VIEWP]] : index to i64
// CHECK-DAG: %{{.*}}, %[[VOFF:.*]], %[[VSIZES:.*]]:3, %[[VSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[VIEW]]
// CHECK-DAG: %[[VOFF32:.*]] = arith.index_cast %[[VOFF]] : index to i32
// CHECK-DAG: %[[VB32:.*]] = arith.index_cast %[[VSIZES]]#1 : index to i32
// CHECK-DAG: %[[VS32:.*]] = arith.index_cast %[[VSTRIDES]]#0 : index to i32
// CHECK-DAG: %[[CP:.*]] = memref.extract_aligned_pointer_as_index %[[COUNTER]]
// CHECK-DAG: %[[CP64:.*]] = arith.index_cast %[[CP]] : index to i64
// CHECK: cf.assert %{{.*}}, "kernel @lstm_persistent_k: a buffer of 2^30 elements or more, or an index outside +-2^30, passed to a kernel with 32-bit indices"
// CHECK: gpu.launch_func @lstm_kernels_i32::@lstm_persistent_k
// CHECK-SAME: args(%[[T32]] : i32, %[[SEQP64]] : i64, %[[SEQB]] : i32, %[[VIEWP64]] : i64, %[[VOFF32]] : i32, %[[VB32]] : i32, %[[VS32]] : i32, %[[X]] : f32, %[[CP64]] : i64)
// CHECK: gpu.launch_func @kernels::@other_kernel
// CHECK-SAME: args(%[[T]] : index, %[[SEQ]] : memref<?x128xf32>)

// CHECK: gpu.module @kernels {
// CHECK: gpu.func @other_kernel(%{{.*}}: index, %{{.*}}: memref<?x128xf32>) kernel
// CHECK: gpu.module @lstm_kernels_i32 attributes {dlti.dl_spec = #dlti.dl_spec<index = 32 : i64>}
// CHECK: gpu.func @lstm_persistent_k(%[[KT:.*]]: i32, %[[KP:.*]]: i64, %[[KB:.*]]: i32, %[[KVP:.*]]: i64, %[[KVOFF:.*]]: i32, %[[KVB:.*]]: i32, %[[KVS:.*]]: i32, %[[KX:.*]]: f32, %[[KCP:.*]]: i64) kernel
// CHECK: %[[KTI:.*]] = arith.index_cast %[[KT]] : i32 to index
// CHECK: %[[PTR:.*]] = llvm.inttoptr %[[KP]] : i64 to !llvm.ptr
// CHECK: llvm.insertvalue %[[KB]], %{{.*}}[3, 0] : !llvm.struct<(ptr, ptr, i32, array<2 x i32>, array<2 x i32>)>
// CHECK: %[[SEQK:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i32, array<2 x i32>, array<2 x i32>)> to memref<?x128xf32>
// CHECK: llvm.insertvalue %[[KVOFF]], %{{.*}}[2]
// CHECK: llvm.insertvalue %[[KVS]], %{{.*}}[4, 0]
// CHECK: %[[VIEWK:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i32, array<3 x i32>, array<3 x i32>)> to memref<2x?x128xf32, strided<[?, 128, 1], offset: ?>>
// CHECK: %[[CK:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<(ptr, ptr, i32, array<1 x i32>, array<1 x i32>)> to memref<1xi32>
// CHECK: memref.load %[[SEQK]][%[[KTI]], %{{.*}}] : memref<?x128xf32>
// CHECK: memref.store %[[KX]], %[[VIEWK]]
// CHECK: memref.store %{{.*}}, %[[CK]]

// After the NVVM lowering, the kernel's addresses are i32 arithmetic on
// the pointers it was given, and no cast is left.
// NVVM: gpu.module @lstm_kernels_i32
// NVVM: llvm.func @lstm_persistent_k(%[[T:[a-z0-9]+]]: i32, %[[P:[a-z0-9]+]]: i64,
// NVVM: %[[PTR:.*]] = llvm.inttoptr %[[P]] : i64 to !llvm.ptr
// NVVM: %[[ROW:.*]] = llvm.mul %[[T]], %{{.*}} : i32
// NVVM: %[[AT:.*]] = llvm.add %[[ROW]], %{{.*}} : i32
// NVVM: llvm.getelementptr inbounds|nuw %[[PTR]][%[[AT]]] : (!llvm.ptr, i32) -> !llvm.ptr, f32
// NVVM-NOT: unrealized_conversion_cast
// NVVM-NOT: i64 
// NVVM: llvm.return
module attributes {gpu.container_module} {
  func.func @host(%t: index, %seq: memref<?x128xf32>,
                  %view: memref<2x?x128xf32, strided<[?, 128, 1], offset: ?>>,
                  %x: f32, %counter: memref<1xi32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@lstm_persistent_k
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%t : index, %seq : memref<?x128xf32>,
             %view : memref<2x?x128xf32, strided<[?, 128, 1], offset: ?>>,
             %x : f32, %counter : memref<1xi32>)
    gpu.launch_func @kernels::@other_kernel
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%t : index, %seq : memref<?x128xf32>)
    return
  }
  gpu.module @kernels {
    gpu.func @lstm_persistent_k(%t: index, %seq: memref<?x128xf32>,
        %view: memref<2x?x128xf32, strided<[?, 128, 1], offset: ?>>,
        %x: f32, %counter: memref<1xi32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %v = memref.load %seq[%t, %c3] : memref<?x128xf32>
      memref.store %x, %view[%c1, %t, %c3] : memref<2x?x128xf32, strided<[?, 128, 1], offset: ?>>
      %i = arith.fptosi %v : f32 to i32
      memref.store %i, %counter[%c0] : memref<1xi32>
      gpu.return
    }
    gpu.func @other_kernel(%t: index, %seq: memref<?x128xf32>) kernel {
      %c0 = arith.constant 0 : index
      %v = memref.load %seq[%t, %c0] : memref<?x128xf32>
      memref.store %v, %seq[%c0, %c0] : memref<?x128xf32>
      gpu.return
    }
  }
}

// -----

// A kernel that takes a vector, refers to a global of its module, or has an
// index constant beyond 2^30 (which 32 bits would truncate) stays where it
// is, 64-bit; a module left without kernels goes.
// CHECK-LABEL: func.func @kept
// CHECK: gpu.launch_func @kernels::@lstm_persistent_vector
// CHECK-SAME: args(%{{.*}} : vector<4xf32>, %{{.*}} : index)
// CHECK: gpu.launch_func @kernels::@lstm_persistent_global
// CHECK-SAME: args(%{{.*}} : index)
// CHECK: gpu.launch_func @kernels::@lstm_persistent_huge
// CHECK-SAME: args(%{{.*}} : index)
// CHECK: gpu.launch_func @lstm_kernels_i32::@lstm_persistent_alone
// CHECK-NOT: gpu.module @alone
// CHECK: gpu.module @kernels {
// CHECK: gpu.func @lstm_persistent_vector
// CHECK: gpu.func @lstm_persistent_global
// CHECK: gpu.func @lstm_persistent_huge(%{{.*}}: index)
// CHECK: gpu.module @lstm_kernels_i32
// CHECK: gpu.func @lstm_persistent_alone(%{{.*}}: i32) kernel
module attributes {gpu.container_module} {
  func.func @kept(%v: vector<4xf32>, %i: index) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@lstm_persistent_vector
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%v : vector<4xf32>, %i : index)
    gpu.launch_func @kernels::@lstm_persistent_global
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%i : index)
    gpu.launch_func @kernels::@lstm_persistent_huge
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%i : index)
    gpu.launch_func @alone::@lstm_persistent_alone
        blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
        args(%i : index)
    return
  }
  gpu.module @kernels {
    memref.global "private" constant @table : memref<4xf32> = dense<1.0>
    gpu.func @lstm_persistent_vector(%v: vector<4xf32>, %i: index) kernel {
      gpu.return
    }
    gpu.func @lstm_persistent_global(%i: index) kernel {
      %g = memref.get_global @table : memref<4xf32>
      %x = memref.load %g[%i] : memref<4xf32>
      gpu.return
    }
    gpu.func @lstm_persistent_huge(%i: index) kernel {
      %c = arith.constant 1099511627776 : index
      %m = arith.minui %i, %c : index
      gpu.return
    }
  }
  gpu.module @alone {
    gpu.func @lstm_persistent_alone(%i: index) kernel {
      gpu.return
    }
  }
}
