// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true" | FileCheck %s
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true bf16-operands=true" | FileCheck %s --check-prefix=BF16
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true" | FileCheck %s --check-prefix=FMA
// RUN: lstm-opt %S/../../../examples/layernorm_stack2.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true" | FileCheck %s --check-prefix=SPLAT
// RUN: lstm-opt %S/Inputs/layer-h20.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true" | FileCheck %s --check-prefix=ODD
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true" --lstm-lower-grid-barriers | FileCheck %s --check-prefix=NVVM
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true" | FileCheck %s --check-prefix=SPLIT
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true bf16-operands=true" | FileCheck %s --check-prefix=SPLIT-BF16
// RUN: lstm-opt %S/../../../examples/stack3.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true" | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true tensor-cores-from-batch=1" | FileCheck %s --check-prefix=EVERY
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true shared-memory=8192" | FileCheck %s --check-prefix=FMA
// RUN: not lstm-opt %S/../../../examples/lstm.mlir "--lstm-to-persistent=tensor-cores=true tensor-cores-from-batch=-1" 2>&1 | FileCheck %s --check-prefix=BAD

// The products on tensor cores: an LSTM of H = 128 (K = 128, four gate
// columns a unit) takes two units a warp at once, one tile of 8 weight
// rows; each 16 of K is two m16n8k8 TF32 instructions (one m16n8k16 under
// bf16), 16 a product, dealt out to two accumulators in turn (512-thread
// blocks). The staged rows are padded to 144 floats (16 mod 32: a quarter
// warp's 16-byte loads of rows g and g + 1 take the 32 banks once); the
// warps' result tiles (16 rows of 8 columns, one float of padding) follow
// the staged rows in shared memory, written and read between warp
// barriers.

// CHECK-LABEL: func.func @forward
// CHECK: gpu.launch
// The staged h: 32 rows (a multiple of the tiles' 16) of 144 floats.
// CHECK: memref.view {{.*}} to memref<4608xf32, #gpu.address_space<workgroup>>
// The 16 warps' tiles: 16 x 16 x 9 floats.
// CHECK: memref.view {{.*}} to memref<2304xf32, #gpu.address_space<workgroup>>
// The weights rounded to TF32 once, before the loop: + 2^12, low 13 bits cleared.
// CHECK: arith.addi %{{.*}}, %c4096_i32
// CHECK: arith.andi %{{.*}}, %c-8192_i32
// CHECK: scf.for
// CHECK: lstm.warp_barrier
// CHECK: vector.load {{.*}} vector<4xf32>
// CHECK: vector.load {{.*}} vector<4xf32>
// CHECK: lstm.warp_mma[{{.*}}] [{{.*}}] [%[[Z:cst[_0-9]*]], %[[Z]], %[[Z]], %[[Z]]]{{$}}
// CHECK: lstm.warp_mma[{{.*}}] [{{.*}}] [%[[Z]], %[[Z]], %[[Z]], %[[Z]]]
// CHECK-COUNT-14: lstm.warp_mma
// CHECK-NOT: lstm.warp_mma
// The two chains summed, the tile stored, the warp synchronised, and the
// lanes' elements read back.
// CHECK: arith.addf %d0
// CHECK: memref.store
// CHECK: lstm.warp_barrier
// CHECK: memref.load
// CHECK: lstm.grid_barrier

// BF16-LABEL: func.func @forward
// The weights as pairs of bf16 in an i32, the first in the lower half.
// BF16: arith.truncf %{{.*}} : vector<2xf32> to vector<2xbf16>
// BF16: vector.bitcast %{{.*}} : vector<2xbf16> to vector<1xi32>
// BF16-COUNT-8: lstm.warp_mma{{.*}} bf16
// BF16-NOT: lstm.warp_mma

// Without tensor-cores, or where the warps' result tiles (9 KiB in
// 512-thread blocks, 4.5 in 256)
// would take more than half of the shared memory: dot products and a
// butterfly of shuffles.
// FMA-LABEL: func.func @forward
// FMA-NOT: lstm.warp_mma
// FMA: gpu.shuffle xor

// A splat-constant weight (the layer norm's averaging matrix) takes no
// registers in the dot products; its tiles would: the dot products.
// SPLAT-LABEL: func.func @forward
// SPLAT: gpu.launch
// SPLAT-NOT: lstm.warp_mma
// SPLAT: gpu.shuffle xor

// K = 20, not a multiple of 16: staged rows of 48 floats (32, plus 16 as
// it is a multiple of 32); the terms past K are zeros on both sides (the
// weights' clamped loads, and the staged padding, never written, selected
// away).
// ODD-LABEL: func.func @forward
// ODD: gpu.launch
// ODD: memref.view {{.*}} to memref<{{[0-9]+}}xf32
// ODD: arith.cmpi ult, %{{.*}}, %c20
// ODD: arith.minui %{{.*}}, %c19
// ODD: scf.for
// ODD: arith.muli %{{.*}}, %c48
// ODD: vector.load
// ODD: arith.cmpi ult, %{{.*}}, %c20
// ODD: arith.select
// ODD: lstm.warp_mma

// NVVM: nvvm.bar.warp.sync %{{.*}} : i32
// NVVM: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<tf32>, multiplicandBPtxType = #nvvm.mma_type<tf32>, shape = #nvvm.shape<m = 16, n = 8, k = 8>}

// Under the cost model's choice of the kernel, a second choice by the
// batch: from 16 rows (TF32; 4 under bf16) the tensor-core kernel, below
// it a kernel of dot products; the per-step layer in the outer else.
// SPLIT-LABEL: func.func @forward
// SPLIT: scf.if
// SPLIT: %[[LARGE:.*]] = arith.cmpi uge, %{{.*}}, %c16 : index
// SPLIT: scf.if %[[LARGE]]
// SPLIT: gpu.launch
// SPLIT: lstm.warp_mma
// SPLIT: } else {
// SPLIT: gpu.launch
// SPLIT-NOT: lstm.warp_mma
// SPLIT: gpu.shuffle xor
// SPLIT: } else {
// SPLIT: lstm.layer
// SPLIT-SAME: lstm.persistent_fallback
// SPLIT-BF16: arith.cmpi uge, %{{.*}}, %c4 : index

// A stack's kernel likewise: stack3's three layers in one kernel on tensor
// cores, and in one of dot products below 16 rows.
// STACK-LABEL: func.func @forward
// STACK: %[[LARGE:.*]] = arith.cmpi uge, %{{.*}}, %c16 : index
// STACK: scf.if %[[LARGE]]
// STACK: gpu.launch
// STACK: lstm.warp_mma
// STACK: } else {
// STACK: gpu.launch
// STACK-NOT: lstm.warp_mma
// STACK: gpu.shuffle xor
// STACK-NOT: gpu.launch
// STACK: return

// tensor-cores-from-batch=1: the tensor cores at every batch, one kernel.
// EVERY-LABEL: func.func @forward
// EVERY-NOT: arith.cmpi uge
// EVERY: gpu.launch
// EVERY: lstm.warp_mma
// EVERY-NOT: gpu.launch

// BAD: lstm-to-persistent: tensor-cores-from-batch must be 0 (chosen) or a batch size, got -1
