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
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true tensor-cores-from-batch=1 shared-memory=229376 tensor-cores-split-depth=4" | FileCheck %s --check-prefix=DEPTH
// RUN: lstm-opt %S/../../../examples/lstm.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true tensor-cores-from-batch=1 shared-memory=229376" | FileCheck %s --check-prefix=NODEPTH
// RUN: lstm-opt %S/Inputs/layer-h20.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true tensor-cores-from-batch=1 shared-memory=229376 tensor-cores-split-depth=2" | FileCheck %s --check-prefix=ODD-DEPTH
// RUN: lstm-opt %S/../../../examples/cho_gru.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true tensor-cores-from-batch=1 shared-memory=229376 tensor-cores-split-depth=2" | FileCheck %s --check-prefix=SHARE
// RUN: lstm-opt %S/Inputs/layer-h320.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true tensor-cores-from-batch=1 shared-memory=229376 tensor-cores-split-depth=0" | FileCheck %s --check-prefix=FIT
// RUN: lstm-opt %S/Inputs/layer-h320.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true tensor-cores-from-batch=1 shared-memory=229376" | FileCheck %s --check-prefix=NOFIT
// RUN: not lstm-opt %S/../../../examples/lstm.mlir "--lstm-to-persistent=tensor-cores=true tensor-cores-split-depth=3" 2>&1 | FileCheck %s --check-prefix=BAD-DEPTH
// RUN: not lstm-opt %S/../../../examples/lstm.mlir "--lstm-to-persistent=tensor-cores=true tensor-cores-split-depth=-2" 2>&1 | FileCheck %s --check-prefix=BAD-NEGATIVE
// RUN: lstm-opt %S/Inputs/layer-h1000.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true shared-memory=229376" | FileCheck %s --check-prefix=WIDE
// RUN: lstm-opt %S/Inputs/layer-h1000.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true shared-memory=229376 tensor-cores-split-depth=1" | FileCheck %s --check-prefix=WIDE-DOTS
// RUN: lstm-opt %S/Inputs/layer-h1000.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=always=true tensor-cores=true shared-memory=229376 tensor-cores-split-depth=0" | FileCheck %s --check-prefix=WIDE-ALWAYS
// RUN: lstm-opt %S/Inputs/gru-h1000.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=tensor-cores=true shared-memory=229376" | FileCheck %s --check-prefix=WIDE-GRU

// The products on tensor cores: an LSTM of H = 128 (K = 128, four gate
// columns a unit) takes two units a warp at once, one tile of 8 weight
// rows; each 16 of K is two m16n8k8 TF32 instructions (one m16n8k16 under
// bf16), 16 a product, dealt out to two accumulators in turn (512-thread
// blocks). The staged rows are padded to 144 floats (16 mod 32: a quarter
// warp's 16-byte loads of rows g and g + 1 take the 32 banks once); the
// warps' result tiles (16 rows of 8 columns, one float of padding) follow
// the staged rows in shared memory, written and read between warp
// barriers. (Under the pass's default 32 KiB of shared memory the depth
// split's two tiles a warp would take more than half of it: one tile a
// warp, each warp the whole depth.)

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

// The depth split (tensor-cores-split-depth=4): the block's 4 row groups
// of each unit slot (8 units a block, 2 at once, 512 threads) split each
// tile's K = 128 four ways, a
// warp taking chunks part and part + 4 of 16: 4 instructions, each its own
// chain. Each warp has two tiles of scratch (16 warps x 2 x 16 x 9
// floats), alternating; the four warps meet at named barrier 1 + slot + 4
// · tile group, and the set's warps take the tile's rounds of 32 elements
// in turn from warp j mod 4 (the j-th tile): here one round (16 rows of
// two units), taken by the warp whose rotation is 0, which sums the 4
// partial tiles (1152 floats apart: 4 slots' warps of 2 tiles) and
// evaluates.
// DEPTH-LABEL: func.func @forward
// DEPTH: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c512,
// DEPTH: memref.view {{.*}} to memref<4608xf32, #gpu.address_space<workgroup>>
// DEPTH: %[[WARP:.*]] = arith.divui %arg10, %c32
// DEPTH: %[[SLOT:.*]] = arith.remui %[[WARP]], %c4
// DEPTH: %[[GROUP:.*]] = arith.divui %[[WARP]], %c4
// DEPTH: scf.for
// DEPTH: %[[PART:.*]] = arith.remui %[[GROUP]], %c4
// DEPTH: %[[TILES:.*]] = arith.divui %[[GROUP]], %c4
// DEPTH: %[[SET:.*]] = arith.addi %[[SLOT]], %{{.*}}
// DEPTH: %[[ID1:.*]] = arith.addi %c1{{.*}}, %[[SET]]
// DEPTH: %[[ID:.*]] = arith.index_cast %[[ID1]] : index to i32
// DEPTH: scf.for %{{.*}} = %[[TILES]] to %{{.*}} step %c1
// DEPTH: %[[J:.*]] = arith.remui %{{.*}}, %c4
// DEPTH: %[[P4:.*]] = arith.addi %[[PART]], %c4
// DEPTH: %[[BACK:.*]] = arith.subi %[[P4]], %[[J]]
// DEPTH: %[[ROT:.*]] = arith.remui %[[BACK]], %c4
// DEPTH: %[[Q0:.*]] = arith.addi %[[PART]], %c0
// DEPTH: arith.muli %[[Q0]], %c16
// DEPTH: vector.load
// DEPTH: lstm.warp_mma[{{.*}}] [{{.*}}] [%[[Z:cst[_0-9]*]], %[[Z]], %[[Z]], %[[Z]]]{{$}}
// DEPTH: lstm.warp_mma[{{.*}}] [{{.*}}] [%[[Z]], %[[Z]], %[[Z]], %[[Z]]]
// DEPTH: %[[Q1:.*]] = arith.addi %[[PART]], %c4
// DEPTH: arith.muli %[[Q1]], %c16
// DEPTH-COUNT-2: lstm.warp_mma[{{.*}}] [{{.*}}] [%[[Z]], %[[Z]], %[[Z]], %[[Z]]]
// DEPTH-NOT: lstm.warp_mma
// DEPTH: lstm.warps_barrier %[[ID]] warps 4 : i32
// DEPTH: %[[ROUND:.*]] = arith.addi %[[ROT]], %c0
// DEPTH: %[[FIRSTUNIT:.*]] = arith.muli %[[ROUND]], %c2
// DEPTH: %[[LIVE:.*]] = arith.cmpi ult, %[[FIRSTUNIT]], %c2
// DEPTH: scf.if %[[LIVE]]
// DEPTH: %[[P0:.*]] = memref.load
// DEPTH: arith.addi %{{.*}}, %c1152
// DEPTH: %[[P1:.*]] = memref.load
// DEPTH: arith.addf %[[P0]], %[[P1]]
// DEPTH: arith.addi %{{.*}}, %c2304
// DEPTH: arith.addi %{{.*}}, %c3456
// DEPTH-NOT: lstm.warp_mma
// DEPTH: lstm.grid_barrier

// Cho's GRU (four units at once: 64 elements a tile, two rounds of 32)
// split two ways: each warp of the set evaluates one round, the units
// lane / 16 + 2 · rotation, with no warp left out.
// SHARE-LABEL: func.func @forward
// SHARE: lstm.warps_barrier %{{.*}} warps 2 : i32
// SHARE-NOT: scf.if
// SHARE: %[[LANEUNIT:.*]] = arith.divui %{{.*}}, %c16
// SHARE: %[[FIRST:.*]] = arith.addi %[[LANEUNIT]], %c0
// SHARE: %[[TURN:.*]] = arith.muli %[[ROT:.*]], %c2
// SHARE: arith.addi %[[FIRST]], %[[TURN]]

// By default no split (tensor-cores-split-depth=1), and with 0 none where
// the whole depth's fragments fit the registers (K = 128: 32 of a lane's
// 64): each warp the whole depth (16 instructions), one tile of scratch a
// warp, warp barriers.
// NODEPTH-LABEL: func.func @forward
// NODEPTH: memref.view {{.*}} to memref<2304xf32, #gpu.address_space<workgroup>>
// NODEPTH-NOT: lstm.warps_barrier
// NODEPTH: lstm.warp_barrier
// NODEPTH-COUNT-16: lstm.warp_mma
// NODEPTH-NOT: lstm.warp_mma
// NODEPTH: lstm.warp_barrier
// NODEPTH-NOT: lstm.warps_barrier

// K = 20 split two ways: the second warp's chunk (q = 1) holds terms 16 to
// 19 and zeros past them; the clamp and the selects take the chunk's
// terms from q, not from a constant.
// ODD-DEPTH-LABEL: func.func @forward
// ODD-DEPTH: gpu.launch
// ODD-DEPTH: %[[PART:.*]] = arith.remui %{{.*}}, %c2{{.*}} : index
// ODD-DEPTH: %[[Q:.*]] = arith.addi %[[PART]], %c0{{.*}} : index
// ODD-DEPTH: %[[K16:.*]] = arith.muli %[[Q]], %c16
// ODD-DEPTH: %[[K:.*]] = arith.addi %[[K16]], %c0
// ODD-DEPTH: %[[T:.*]] = arith.addi %{{.*}}, %[[K]]
// ODD-DEPTH: arith.minui %[[T]], %c19
// ODD-DEPTH: arith.cmpi ult, %[[T]], %c20
// ODD-DEPTH: scf.for
// ODD-DEPTH: lstm.warp_mma
// ODD-DEPTH: lstm.warps_barrier %{{.*}} warps 2 : i32

// Where they do not (K = 320: 80 registers a lane, 64 in 512-thread
// blocks), tensor-cores-split-depth=0 takes the least split that fits: two
// warps a tile, 10 chunks of 16 each, 20 instructions. By default the
// layer takes 256-thread blocks instead, whose 128 registers a lane hold
// the whole depth: 40 instructions a warp, no split.
// FIT-LABEL: func.func @forward
// FIT: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c512,
// FIT: scf.for
// FIT-COUNT-20: lstm.warp_mma
// FIT-NOT: lstm.warp_mma
// FIT: lstm.warps_barrier %{{.*}} warps 2 : i32

// NOFIT-LABEL: func.func @forward
// NOFIT: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256,
// NOFIT-NOT: lstm.warps_barrier
// NOFIT: scf.for
// NOFIT-COUNT-40: lstm.warp_mma
// NOFIT-NOT: lstm.warp_mma
// NOFIT-NOT: lstm.warps_barrier

// BAD-DEPTH: lstm-to-persistent: tensor-cores-split-depth must be -1 (chosen), 0 (to fit) or a power of two up to 32, got 3
// BAD-NEGATIVE: lstm-to-persistent: tensor-cores-split-depth must be -1 (chosen), 0 (to fit) or a power of two up to 32, got -2

// A layer of H = 1000 (K = 1000): its dot products keep their weights in
// registers in 256-thread blocks and run to B = 4 (2^24 multiply-adds a
// step), below the 16 the tensor cores start at, so the chosen depth split
// (-1) fits the fragments with two warps a tile, and the tensor cores'
// bound takes the kernel to B = 33 (2^27 multiply-adds a step; 1000
// staged floats a row would allow 65). Its staged chunks are whole tiles:
// 48 rows, where the shared memory ends, not the bound.
// WIDE-LABEL: func.func @forward
// WIDE: arith.cmpi ule, %{{.*}}, %c33 : index
// WIDE: arith.minui %{{.*}}, %c48 : index
// WIDE: arith.cmpi uge, %{{.*}}, %c16 : index
// WIDE: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256,
// WIDE-COUNT-64: lstm.warp_mma
// WIDE: lstm.warps_barrier %{{.*}} warps 2 : i32
// WIDE: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256,
// WIDE-NOT: lstm.warp_mma

// Without the split (1) the fragments do not fit: the dot products, in
// registers to B = 4, and the kernel that reads its weights from memory
// to 16.
// WIDE-DOTS-LABEL: func.func @forward
// WIDE-DOTS-NOT: lstm.warp_mma
// WIDE-DOTS: arith.cmpi ule, %{{.*}}, %c4 : index
// WIDE-DOTS-NOT: lstm.warp_mma
// WIDE-DOTS: arith.cmpi ule, %{{.*}}, %c16 : index
// WIDE-DOTS-NOT: lstm.warp_mma

// Without the cost model (always) the chunks are not bounded by a batch
// (they were 4 rows, the dot products' bound: a tile of 16 and a block
// barrier for every 4 rows).
// WIDE-ALWAYS-LABEL: func.func @forward
// WIDE-ALWAYS: arith.minui %{{.*}}, %c48 : index
// WIDE-ALWAYS: lstm.warps_barrier %{{.*}} warps 2 : i32

// Cho's GRU at H = 1000: four units at once split four ways fit where two
// split two ways do not (the layout tries every count of units).
// WIDE-GRU-LABEL: func.func @forward
// WIDE-GRU: arith.cmpi ule, %{{.*}}, %c32 : index
// WIDE-GRU: arith.cmpi uge, %{{.*}}, %c16 : index
// WIDE-GRU-COUNT-64: lstm.warp_mma
// WIDE-GRU: lstm.warps_barrier %{{.*}} warps 4 : i32
