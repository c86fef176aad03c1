// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-lower-grid-barriers | FileCheck %s

// A warp barrier is __syncwarp() of every lane; a barrier of some warps,
// PTX's named barrier of 32 threads a warp; a warp's tensor-core
// instruction, nvvm.mma.sync: m16n8k8 on TF32 operands, m16n8k16 on pairs
// of bf16, its result struct unpacked.

// CHECK-LABEL: func.func @warp_ops
// CHECK: %[[ALL:.*]] = arith.constant -1 : i32
// CHECK: nvvm.bar.warp.sync %[[ALL]] : i32
// CHECK: %[[THREADS:.*]] = arith.constant 128 : i32
// CHECK: nvvm.barrier id = %arg2 number_of_threads = %[[THREADS]]
// CHECK: %[[T:.*]] = nvvm.mma.sync A[%[[A:.*]], %[[A]], %[[A]], %[[A]]] B[%[[A]], %[[A]]] C[%[[C:.*]], %[[C]], %[[C]], %[[C]]] {{.*}}multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}
// CHECK: %[[T0:.*]] = llvm.extractvalue %[[T]][0]
// CHECK: %[[T3:.*]] = llvm.extractvalue %[[T]][3]
// CHECK: %[[B:.*]] = nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[%[[T0]], {{.*}}, %[[T3]]] {{.*}}multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK-NOT: lstm.warp
func.func @warp_ops(%a: i32, %c: f32, %id: i32) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    lstm.warp_barrier
    lstm.warps_barrier %id warps 4 : i32
    %t:4 = lstm.warp_mma [%a, %a, %a, %a] [%a, %a] [%c, %c, %c, %c]
    %b:4 = lstm.warp_mma [%a, %a, %a, %a] [%a, %a] [%t#0, %t#1, %t#2, %t#3] bf16
    gpu.terminator
  }
  return
}
