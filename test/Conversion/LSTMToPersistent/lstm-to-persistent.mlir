// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-to-persistent="always=true async-copies=false row-tiles=false" -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-to-persistent=always=true -split-input-file | FileCheck %s --check-prefix=ASYNC
// RUN: lstm-opt %s --lstm-to-persistent="always=true async-copies=false units-at-once=1" -split-input-file | FileCheck %s --check-prefix=TILES
// RUN: lstm-opt %s --lstm-to-persistent="max-blocks=2 block-size=32 always=true" -split-input-file | FileCheck %s --check-prefix=TILED
// RUN: lstm-opt %s --lstm-to-persistent -split-input-file | FileCheck %s --check-prefix=COST
// RUN: lstm-opt %s --lstm-to-persistent="max-blocks=2 block-size=32" -split-input-file | FileCheck %s --check-prefix=COST-MEMORY
// RUN: lstm-opt %s --lstm-to-persistent=per-step-fallback=false -split-input-file | FileCheck %s --check-prefix=NO-FALLBACK
// RUN: lstm-opt %s --lstm-to-persistent=shared-memory=65536 -split-input-file | FileCheck %s --check-prefix=OPT-IN
// RUN: not lstm-opt %s --lstm-to-persistent=block-size=48 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD
// RUN: not lstm-opt %s --lstm-to-persistent=shared-memory=2 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD-BUDGET

// BAD: error: lstm-to-persistent: block-size must be 0 (chosen per layer) or a multiple of 32 in [32, 1024], and max-blocks at least 1
// BAD-BUDGET: error: lstm-to-persistent: shared-memory must be in [4, 2147483647] bytes, got 2

// A cell of the form lstm-optimize{wavefront=false} leaves: a recurrent
// product of the state h, read through a column slice by the one pointwise
// op that makes the output and both new states; a reverse layer.

// CHECK-LABEL: func.func @cell
// CHECK-SAME: (%[[X:.*]]: tensor<?x?x8xf32>, %[[H0:.*]]: tensor<?x4xf32>, %[[C0:.*]]: tensor<?x4xf32>, %[[R:.*]]: tensor<8x4xf32>, %[[B:.*]]: tensor<4xf32>)
// The extents the kernel indexes with are checked first.
// CHECK: cf.assert {{.*}} "lstm.layer: initial state #0 has a different batch size than the input
// CHECK: cf.assert {{.*}} "lstm.layer: initial state #1 has a different batch size than the input
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK: %[[BATCH:.*]] = tensor.dim %[[X]], %{{.*}}
// CHECK: %[[XB:.*]] = bufferization.to_buffer %[[X]] read_only : tensor<?x?x8xf32> to memref<?x?x8xf32, strided<[?, ?, ?], offset: ?>>
// CHECK: %[[H0B:.*]] = bufferization.to_buffer %[[H0]] read_only
// CHECK: %[[C0B:.*]] = bufferization.to_buffer %[[C0]] read_only
// CHECK: %[[BB:.*]] = bufferization.to_buffer %[[B]] read_only : tensor<4xf32>
// CHECK: %[[RB:.*]] = bufferization.to_buffer %[[R]] read_only : tensor<8x4xf32>
// Two buffers per state, used alternately; the output and the finals.
// CHECK: %[[HS:.*]] = memref.alloc(%[[BATCH]]) : memref<2x?x4xf32>
// CHECK: %[[CS:.*]] = memref.alloc(%[[BATCH]]) : memref<2x?x4xf32>
// CHECK: %[[Y:.*]] = memref.alloc(%[[T]], %[[BATCH]]) : memref<?x?x4xf32>
// CHECK: %[[HT:.*]] = memref.alloc(%[[BATCH]]) : memref<?x4xf32>
// CHECK: %[[CT:.*]] = memref.alloc(%[[BATCH]]) : memref<?x4xf32>
// The barrier counts k·G arrivals in 32 bits: T is bounded.
// CHECK: cf.assert {{.*}} "lstm.layer: the sequence is too long for a persistent kernel of 4 blocks (at most 536870910 steps)
// CHECK: %[[COUNTER:.*]] = memref.alloc() : memref<1xi32>
// CHECK: gpu.memset %[[COUNTER]], %{{.*}} : memref<1xi32>, i32
// One block per unit here (N = 4), 512 threads, and the shared memory to
// stage h in: at most 32 KiB (2048 rows of 4 floats), only the batch's
// rows where there are fewer (what a block does not take is L1 cache).
// CHECK: %[[ROWS:.*]] = arith.minui %[[BATCH]], %c2048
// CHECK: %[[BYTES:.*]] = arith.muli %[[ROWS]], %c16
// CHECK: %[[SMEM:.*]] = arith.index_cast %[[BYTES]] : index to i32
// CHECK: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c512{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[SMEM]] module(@lstm_persistent_cell_0) function(@lstm_persistent_cell_0)
// Each staged value's view starts where the one before ends at this batch.
// CHECK: %[[SHARED:.*]] = gpu.dynamic_shared_memory
// CHECK: %[[VROWS:.*]] = arith.minui %[[BATCH]], %c2048
// CHECK: %[[VBYTES:.*]] = arith.muli %[[VROWS]], %c16
// CHECK: %[[AT:.*]] = arith.muli %[[VBYTES]], %c0
// CHECK: %[[STAGED:.*]] = memref.view %[[SHARED]][%[[AT]]][] : memref<?xi8, #gpu.address_space<workgroup>> to memref<8192xf32, #gpu.address_space<workgroup>>
// CHECK: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// CHECK: %[[LANE:.*]] = arith.remui %[[TID]], %c32
// The warp's weights, loaded once: column 4 + n of the product is row
// 4 + n of R; lane l holds its element l (clamped to K - 1, zero past it).
// CHECK: %[[WROW:.*]] = arith.addi %{{.*}}, %c4
// CHECK: %[[K0:.*]] = arith.minui %{{.*}}, %c3
// CHECK: %[[W:.*]] = memref.load %[[RB]][%[[WROW]], %[[K0]]]
// CHECK: %[[WREG:.*]] = arith.select %{{.*}}, %[[W]], %{{.*}} : f32
// The states start as the initial states, then the grid meets.
// CHECK: memref.load %[[H0B]]
// CHECK: memref.store {{.*}}, %[[HS]]
// CHECK: memref.load %[[C0B]]
// CHECK: memref.store {{.*}}, %[[CS]]
// CHECK: lstm.grid_barrier %[[COUNTER]][%c1{{.*}}] : memref<1xi32>
// The time loop in the kernel; a reverse layer reads step T - 1 - t.
// CHECK: scf.for %[[STEP:.*]] = %{{.*}} to %[[T]]
// CHECK: %[[CUR:.*]] = arith.remui %[[STEP]], %c2
// CHECK: %[[NEXT:.*]] = arith.subi %c1{{.*}}, %[[CUR]]
// CHECK: %[[LAST:.*]] = arith.subi %[[T]], %c1
// CHECK: %[[REV:.*]] = arith.subi %[[LAST]], %[[STEP]]
// The rows in chunks that fit the shared memory (8192 / K = 2048 rows).
// CHECK: scf.for %[[FIRST:.*]] = %{{.*}} to %[[BATCH]] step %c2048
// First the operands of the lane's row in the warp's first group of rows
// (lane l < 4: the chunk's row group + 16 l; the 16 row groups are the
// block's warps) that do not depend on the states being staged: the input
// slice at column 4 + n of step T - 1 - t, the bias, the state c.
// CHECK: arith.minui %[[LANE]], %c3
// CHECK: arith.muli %{{.*}}, %c16
// CHECK: %[[EX:.*]] = memref.load %[[XB]][%[[REV]], %{{.*}}, %{{.*}}]
// CHECK: %[[EB:.*]] = memref.load %[[BB]]
// CHECK: %[[EC:.*]] = memref.load %[[CS]][%[[CUR]],
// CHECK-NOT: memref.load %[[XB]]
// Every thread copies h of the chunk's rows, eight elements at a time, the
// loads first.
// CHECK: scf.for %{{.*}} = %[[TID]] to %{{.*}} step %c4096
// CHECK-COUNT-8: memref.load %[[HS]][%[[CUR]],
// CHECK-COUNT-8: memref.store %{{.*}}, %[[STAGED]]
// CHECK: lstm.block_barrier
// CHECK-NOT: wait_async_copies
// The warp's rows in groups of four (one column of K = 4: one partial sum
// per row and lane), a last single row apart; the first group takes the
// operands loaded early, the others load theirs.
// CHECK: %[[GROUPS:.*]] = arith.divui %{{.*}}, %c4
// CHECK: scf.for %[[G:.*]] = %{{.*}} to %[[GROUPS]] step
// CHECK: %[[AT:.*]] = arith.muli %[[G]], %c4
// CHECK: %[[ISFIRST:.*]] = arith.cmpi eq, %[[AT]], %c0
// CHECK: %[[OPS:.*]]:3 = scf.if %[[ISFIRST]] -> (f32, f32, f32) {
// CHECK-NEXT: scf.yield %[[EX]], %[[EB]], %[[EC]]
// CHECK: } else {
// CHECK: %[[NX:.*]] = memref.load %[[XB]][%[[REV]],
// CHECK: %[[NB:.*]] = memref.load %[[BB]]
// CHECK: %[[NC:.*]] = memref.load %[[CS]][%[[CUR]],
// CHECK: scf.yield %[[NX]], %[[NB]], %[[NC]]
// The four rows' dot products of the staged rows with the weights in
// registers; the four sums over the warp: two rounds of a butterfly that
// halve what each lane holds, three that add; lane j reads row j's sum
// from lane j << 3.
// CHECK-COUNT-4: memref.load %[[STAGED]]
// CHECK-COUNT-4: math.fma %{{.*}}, %[[WREG]], %{{.*}}
// CHECK: arith.select
// CHECK: gpu.shuffle  xor %{{.*}}, %c16
// CHECK: gpu.shuffle  xor %{{.*}}, %c16
// CHECK: gpu.shuffle  xor %{{.*}}, %c8
// CHECK-NOT: arith.select
// CHECK: gpu.shuffle  xor %{{.*}}, %c4
// CHECK: gpu.shuffle  xor %{{.*}}, %c2
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NEXT: %[[SUM:.*]] = arith.addf
// CHECK: %[[AT:.*]] = arith.shli %{{.*}}, %c3
// CHECK: %[[SRC:.*]] = arith.index_cast %[[AT]] : index to i32
// CHECK: %[[COL:.*]], %{{.*}} = gpu.shuffle  idx %[[SUM]], %[[SRC]], %c32
// Lanes 0-3 store their rows' results.
// CHECK: arith.cmpi ult, %[[LANE]], %c4
// CHECK: %[[PRE:.*]] = arith.addf %[[COL]], %[[OPS]]#0
// CHECK: arith.addf %[[PRE]], %[[OPS]]#1
// CHECK: math.tanh
// CHECK: arith.addf %{{.*}}, %[[OPS]]#2
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[Y]][%[[REV]],
// CHECK: memref.store %{{.*}}, %[[HS]][%[[NEXT]],
// CHECK: memref.store %{{.*}}, %[[CS]][%[[NEXT]],
// A last single row: its sum in every lane, lane 0 stores.
// CHECK: scf.if
// CHECK: math.fma %{{.*}}, %[[WREG]], %{{.*}}
// CHECK-NOT: arith.select
// CHECK: gpu.shuffle  xor %{{.*}}, %c16
// CHECK: gpu.shuffle  idx %{{.*}}, %c0_i32
// CHECK: arith.cmpi ult, %[[LANE]], %c1
// CHECK: math.tanh
// The next chunk, if any, overwrites the staged rows.
// CHECK: %[[NEXTCHUNK:.*]] = arith.addi %[[FIRST]], %c2048
// CHECK: %[[MORE:.*]] = arith.cmpi ult, %[[NEXTCHUNK]], %[[BATCH]]
// CHECK: scf.if %[[MORE]] {
// CHECK-NEXT: lstm.block_barrier
// CHECK: lstm.grid_barrier %[[COUNTER]]
// The finals from the buffer of the last step.
// CHECK: arith.remui %[[T]], %c2
// CHECK: memref.store %{{.*}}, %[[HT]]
// CHECK: memref.store %{{.*}}, %[[CT]]
// CHECK: gpu.terminator
// CHECK: %[[YT:.*]] = bufferization.to_tensor %[[Y]] restrict writable
// CHECK: %[[HTT:.*]] = bufferization.to_tensor %[[HT]] restrict writable
// CHECK: %[[CTT:.*]] = bufferization.to_tensor %[[CT]] restrict writable
// CHECK-NOT: lstm.layer
// CHECK: return %[[YT]], %[[HTT]], %[[CTT]]

// With asynchronous copies (the default; N = 4 is a multiple of 4 floats),
// thread i starts the 16-byte copy of row i of the chunk (N / 4 = 1 copy a
// row) from h's buffer of this step into its staged row, bypassing L1; the
// block barrier first waits for the thread's copies.
// ASYNC-LABEL: func.func @cell
// ASYNC: %[[HS:.*]] = memref.alloc(%{{.*}}) : memref<2x?x4xf32>
// ASYNC: gpu.launch blocks({{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in
// ASYNC: %[[STAGED:.*]] = memref.view
// ASYNC: scf.for %[[STEP:.*]] = %{{.*}} to
// ASYNC: %[[CUR:.*]] = arith.remui %[[STEP]], %c2
// ASYNC: scf.for %[[FIRST:.*]] = %{{.*}} to %{{.*}} step %c2048
// ASYNC: scf.for %[[I:.*]] = %[[TID]] to %{{.*}} step %c512
// ASYNC: %[[LOCAL:.*]] = arith.divui %[[I]], %c1
// ASYNC: %[[ROW:.*]] = arith.addi %[[FIRST]], %[[LOCAL]]
// ASYNC: nvgpu.device_async_copy %[[HS]][%[[CUR]], %[[ROW]], %{{.*}}], %[[STAGED]][%{{.*}}], 4 {bypassL1} : memref<2x?x4xf32> to memref<8192xf32, #gpu.address_space<workgroup>>
// ASYNC-NOT: memref.store %{{.*}}, %[[STAGED]]
// ASYNC: lstm.block_barrier wait_async_copies
// ASYNC: math.fma
// The products read h: every block's new h before the next step.
// ASYNC: lstm.grid_barrier

// At most 2 blocks of one warp: each block owns 2 of the 4 units, and its
// warp both, in turn: its weights are read from memory at every step (K = 4
// < 128: the main loop, four terms at a time, runs no iteration here; the
// rest one at a time).
// TILED-LABEL: func.func @cell
// TILED-SAME: %[[R:[^:]*]]: tensor<8x4xf32>
// TILED: %[[RB:.*]] = bufferization.to_buffer %[[R]]
// TILED: gpu.launch blocks({{.*}}) in ({{.*}} = %c2{{.*}}, {{.*}}) threads({{.*}}) in ({{.*}} = %c32{{.*}},
// TILED: %[[STAGED:.*]] = memref.view
// TILED: scf.for
// TILED: lstm.block_barrier
// TILED: scf.for %{{.*}} = %c0{{.*}} to %c2{{.*}} step %c1
// TILED: scf.for %{{.*}} = %{{.*}} to %c0{{.*}} step %c128{{.*}} iter_args
// TILED-COUNT-4: math.fma
// TILED: arith.ceildivui
// TILED: scf.for %[[K:.*]] = %{{.*}} to %c4{{.*}} step %c32{{.*}} iter_args
// TILED: memref.load %[[STAGED]]
// TILED: memref.load %[[RB]][%{{.*}}, %[[K]]]
// TILED: math.fma
// The cost model: the weights fit in registers (one per lane); a step's
// work is B · 4 · 4 multiply-adds, under 2^24 while B <= 1048576; and its 4
// blocks must all be resident: at most the GPU's SM count, asked of the
// runtime (declared in the module); and (T + 1) · B rows of its widest
// row (the input's 8) below 2^30, for the kernel's 32-bit indices
// (lstm-narrow-kernel-indices). The kernel in the then branch, the
// per-step layer, marked, in the else.
// COST: func.func private @lstmRuntimeGpuMultiprocessors() -> i32
// COST-LABEL: func.func @cell
// COST-SAME: (%[[X:[^:]*]]: tensor<?x?x8xf32>
// COST: %[[B:.*]] = tensor.dim %[[X]], %c1
// COST: %[[SMALL:.*]] = arith.cmpi ule, %[[B]], %c1048576
// COST: %[[SMS:.*]] = call @lstmRuntimeGpuMultiprocessors() : () -> i32
// COST: %[[SMSI:.*]] = arith.index_cast %[[SMS]] : i32 to index
// COST: %[[FITS:.*]] = arith.cmpi ule, %c4, %[[SMSI]] : index
// COST: %[[RUNS:.*]] = arith.andi %[[SMALL]], %[[FITS]] : i1
// COST: %[[T:.*]] = tensor.dim %[[X]], %c0
// COST: %[[T1:.*]] = arith.addi %[[T]], %c1
// COST: %[[ROWS:.*]] = arith.muli %[[T1]], %[[B]] : index
// COST: %[[SHORT:.*]] = arith.cmpi ult, %[[ROWS]], %c134217728 : index
// COST: %[[USE:.*]] = arith.andi %[[RUNS]], %[[SHORT]] : i1
// COST: %[[R:.*]]:3 = scf.if %[[USE]]
// COST: gpu.launch
// COST: scf.yield
// COST: } else {
// COST: %[[Y:.*]], %[[F:.*]]:2 = lstm.layer reverse {{.*}} attributes {lstm.persistent_fallback}
// The fallback's results are copied into buffers of their own (the
// kernel's are), so that the branch's result needs no copy after it.
// COST: %[[YV:.*]] = bufferization.to_buffer %[[Y]] read_only
// COST: %[[YB:.*]] = memref.alloc
// COST: memref.copy %[[YV]], %[[YB]]
// COST: %[[YC:.*]] = bufferization.to_tensor %[[YB]] restrict writable
// COST: scf.yield %[[YC]], %{{.*}}, %{{.*}} :
// COST: return %[[R]]#0, %[[R]]#1, %[[R]]#2

// Without the per-step fallback the else branch compiles no per-step
// layer: it calls the runtime with the batch size (the run fails, saying
// that the kernel does not run and the library has no fallback) and yields
// empty tensors of the layer's result extents, known from its operands.
// NO-FALLBACK: func.func private @lstmRuntimeMissingPerStepFallback(i64)
// NO-FALLBACK-LABEL: func.func @cell
// NO-FALLBACK-SAME: (%[[X:[^:]*]]: tensor<?x?x8xf32>, %[[H0:[^:]*]]: tensor<?x4xf32>, %[[C0:[^:]*]]: tensor<?x4xf32>
// NO-FALLBACK: %[[R:.*]]:3 = scf.if
// NO-FALLBACK: gpu.launch
// NO-FALLBACK: } else {
// NO-FALLBACK-NOT: lstm.layer
// NO-FALLBACK: %[[T:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x8xf32>
// NO-FALLBACK: %[[B:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x8xf32>
// NO-FALLBACK: %[[BH:.*]] = tensor.dim %[[H0]], %{{.*}} : tensor<?x4xf32>
// NO-FALLBACK: %[[BC:.*]] = tensor.dim %[[C0]], %{{.*}} : tensor<?x4xf32>
// NO-FALLBACK: %[[BATCH:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x?x8xf32>
// NO-FALLBACK: %[[BATCH64:.*]] = arith.index_cast %[[BATCH]] : index to i64
// NO-FALLBACK: call @lstmRuntimeMissingPerStepFallback(%[[BATCH64]]) : (i64) -> ()
// NO-FALLBACK: %[[Y:.*]] = tensor.empty(%[[T]], %[[B]]) : tensor<?x?x4xf32>
// NO-FALLBACK: %[[H:.*]] = tensor.empty(%[[BH]]) : tensor<?x4xf32>
// NO-FALLBACK: %[[C:.*]] = tensor.empty(%[[BC]]) : tensor<?x4xf32>
// NO-FALLBACK-NEXT: scf.yield %[[Y]], %[[H]], %[[C]] :
// NO-FALLBACK-NEXT: }
// NO-FALLBACK-NEXT: return %[[R]]#0, %[[R]]#1, %[[R]]#2

// 64 KiB to stage in (4096 rows of K = 4): more than a block may use
// without opting in once its tile has more than 3072 rows (a batch of more
// than 4 · 3072, the 4 blocks' tiles of rows), so the run-time choice also
// asks the GPU whether it gives what this batch needs (the runtime opts the
// kernel in at its launch).
// OPT-IN-DAG: func.func private @lstmRuntimeGpuSharedMemoryPerBlock() -> i32
// OPT-IN-DAG: func.func private @lstmRuntimeGpuMultiprocessors() -> i32
// OPT-IN-LABEL: func.func @cell
// OPT-IN: %[[SMALL:.*]] = arith.cmpi ule, %{{.*}}, %c1048576
// OPT-IN: call @lstmRuntimeGpuMultiprocessors()
// OPT-IN: %[[FITS:.*]] = arith.cmpi ule, %c4, %{{.*}} : index
// OPT-IN: %[[RUNS:.*]] = arith.andi %[[SMALL]], %[[FITS]] : i1
// OPT-IN: %[[SHORT:.*]] = arith.cmpi ult, %{{.*}}, %c134217728 : index
// OPT-IN: %[[BOTH:.*]] = arith.andi %[[RUNS]], %[[SHORT]] : i1
// OPT-IN: %[[SMEM:.*]] = call @lstmRuntimeGpuSharedMemoryPerBlock() : () -> i32
// OPT-IN: %[[SMEMI:.*]] = arith.index_cast %[[SMEM]] : i32 to index
// OPT-IN: %[[LIMIT:.*]] = arith.maxui %[[SMEMI]], %c49152 : index
// OPT-IN: %[[TILE:.*]] = arith.ceildivui %{{.*}}, %c4{{.*}} : index
// OPT-IN: %[[ROWS:.*]] = arith.minui %[[TILE]], %c4096 : index
// OPT-IN: %[[NEED:.*]] = arith.muli %[[ROWS]], %c16{{.*}} : index
// OPT-IN-NEXT: %[[SMEMFITS:.*]] = arith.cmpi ule, %[[NEED]], %[[LIMIT]] : index
// OPT-IN: %[[USE:.*]] = arith.andi %[[BOTH]], %[[SMEMFITS]] : i1
// OPT-IN: scf.if %[[USE]]
// OPT-IN: gpu.launch {{.*}} dynamic_shared_memory_size %{{.*}} module
// OPT-IN: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c4096{{(_[0-9]+)?}} {

// Row tiles (the default; the CHECK lines above have row-tiles=false): a
// block of 16 warps has warps to spare for N = 4 units, so it takes all 4
// (4 row groups), and the 4 blocks split the batch's rows instead of the
// units: block b takes units of tile b / 4 (the only one) and rows
// [r · ⌈B/4⌉, (r + 1) · ⌈B/4⌉) ∩ [0, B) of tile r = b mod 4. Its shared
// memory holds its tile's rows, not the batch's.
// TILES-LABEL: func.func @cell
// TILES: cf.assert {{.*}} "lstm.layer: initial state #1 has a different batch size than the input
// TILES: tensor.dim
// TILES: %[[BATCH:.*]] = tensor.dim
// TILES: %[[HTILE:.*]] = arith.ceildivui %[[BATCH]], %c4
// TILES: %[[HROWS:.*]] = arith.minui %[[HTILE]], %c2048
// TILES: %[[HBYTES:.*]] = arith.muli %[[HROWS]], %c16
// TILES: %[[SMEM:.*]] = arith.index_cast %[[HBYTES]] : index to i32
// TILES: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c512{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %[[SMEM]]
// TILES: %[[UTILE:.*]] = arith.divui %[[BID]], %c4
// TILES: %[[RTILE:.*]] = arith.remui %[[BID]], %c4
// TILES: %[[TROWS:.*]] = arith.ceildivui %[[BATCH]], %c4
// TILES: %[[AT:.*]] = arith.muli %[[RTILE]], %[[TROWS]]
// TILES: %[[BEGIN:.*]] = arith.minui %[[AT]], %[[BATCH]]
// TILES: %[[PAST:.*]] = arith.addi %[[BEGIN]], %[[TROWS]]
// TILES: %[[END:.*]] = arith.minui %[[PAST]], %[[BATCH]]
// TILES: %[[VROWS:.*]] = arith.minui %[[TROWS]], %c2048
// TILES: arith.muli %[[VROWS]], %c16
// The warp's unit: unit tile · 4 + its slot (warp mod 4).
// TILES: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// TILES: %[[SLOT:.*]] = arith.remui %[[WARP]], %c4
// TILES: %[[FIRSTUNIT:.*]] = arith.muli %[[UTILE]], %c4
// TILES: arith.addi %[[FIRSTUNIT]], %[[SLOT]]
// The initial states of the tile's elements: rows from BEGIN.
// TILES: %[[COUNT:.*]] = arith.subi %[[END]], %[[BEGIN]]
// TILES: %[[ITEMS:.*]] = arith.muli %[[COUNT]], %c4
// TILES: scf.for %[[ITEM:.*]] = %[[TID]] to %[[ITEMS]] step %c512
// TILES: %[[LOCAL:.*]] = arith.divui %[[ITEM]], %c4
// TILES: arith.addi %[[BEGIN]], %[[LOCAL]]
// The steps' chunks of rows: the tile's.
// TILES: lstm.grid_barrier
// TILES: scf.for %{{.*}} = %{{.*}} to %{{.*}}
// TILES: scf.for %[[FIRST:.*]] = %[[BEGIN]] to %[[END]] step %c2048
// TILES: %[[LEFT:.*]] = arith.subi %[[END]], %[[FIRST]]
// TILES: arith.minui %c2048{{.*}}, %[[LEFT]]
// The final states of the tile's elements.
// TILES: arith.subi %[[END]], %[[BEGIN]]

// Two units per warp: the weights cannot stay in registers, and the cost
// model keeps the per-step lowering.
// COST-MEMORY-LABEL: func.func @cell
// COST-MEMORY-NOT: gpu.launch
// COST-MEMORY: lstm.layer reverse
// COST-MEMORY-NOT: lstm.persistent_fallback
func.func @cell(%x: tensor<?x?x8xf32>, %h0: tensor<?x4xf32>, %c0: tensor<?x4xf32>,
                %R: tensor<8x4xf32>, %b: tensor<4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %y, %hT, %cT = lstm.layer reverse ins(%x : tensor<?x?x8xf32>)
      init(%h0, %c0 : tensor<?x4xf32>, tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>, tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x4xf32>, %c: tensor<?x4xf32>):
    %zero = arith.constant 0 : index
    %p = lstm.gate identity(%h : tensor<?x4xf32>) weights(%R : tensor<8x4xf32>)
        -> tensor<?x8xf32>
    %dp = tensor.dim %p, %zero : tensor<?x8xf32>
    %p1 = tensor.extract_slice %p[0, 4] [%dp, 4] [1, 1]
        : tensor<?x8xf32> to tensor<?x4xf32>
    %dx = tensor.dim %xt, %zero : tensor<?x8xf32>
    %x1 = tensor.extract_slice %xt[0, 4] [%dx, 4] [1, 1]
        : tensor<?x8xf32> to tensor<?x4xf32>
    %hn, %cn = lstm.pointwise ins(%p1, %x1, %b, %c : tensor<?x4xf32>,
        tensor<?x4xf32>, tensor<4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32>, tensor<?x4xf32> {
    ^bb0(%a: f32, %u: f32, %v: f32, %w: f32):
      %s = arith.addf %a, %u : f32
      %t = arith.addf %s, %v : f32
      %n = math.tanh %t : f32
      %m = arith.addf %n, %w : f32
      lstm.pointwise_yield %n, %m : f32, f32
    }
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn, %cn : tensor<?x4xf32>, tensor<?x4xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A product of a value the step computes (Cho's GRU reads R_n (r ⊙ h)):
// its columns need the whole of r ⊙ h, made by other blocks in the same
// step. The step has two phases: the first computes r ⊙ h (here x ⊙ h)
// into a global scratch buffer; after a grid barrier the second stages it
// in shared memory, computes the product and the second pointwise op.
// The scratch buffer alternates by step, as the states do. Here the product
// reads x ⊙ h only, no state: each block reads only its own units' h, so
// the step ends with a block barrier, not a grid barrier (the phase's grid
// barrier keeps a block from writing the scratch buffer of step t + 2
// while another stages step t's).
// CHECK-LABEL: func.func @dependent_product
// CHECK: %[[HS:.*]] = memref.alloc(%{{.*}}) : memref<2x?x4xf32>
// CHECK: %[[Y:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x4xf32>
// CHECK: %[[HT:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: %[[SCRATCH:.*]] = memref.alloc(%{{.*}}) : memref<2x?x4xf32>
// Barriers 1 + T, each counting 4 blocks.
// CHECK: "lstm.layer: the sequence is too long for a persistent kernel of 4 blocks (at most 536870910 steps)
// CHECK: %[[COUNTER:.*]] = memref.alloc() : memref<1xi32>
// CHECK: gpu.launch
// CHECK: lstm.grid_barrier %[[COUNTER]][%c1{{.*}}]
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK: %[[CUR:.*]] = arith.remui %[[T]], %c2
// Phase 0: nothing to stage (the whole batch at once, no block barrier
// before the work); x ⊙ h, written to the step's scratch buffer.
// CHECK: scf.for %{{.*}} = %c0{{.*}} to %{{.*}} step %c1073741823
// CHECK-NOT: lstm.block_barrier
// CHECK: %[[RH:.*]] = arith.mulf
// CHECK: memref.store %[[RH]], %[[SCRATCH]][%[[CUR]],
// CHECK: %[[T2:.*]] = arith.muli %[[T]], %c1
// CHECK: %[[B0:.*]] = arith.addi %[[T2]], %c2
// CHECK: lstm.grid_barrier %[[COUNTER]][%[[B0]]]
// Phase 1: the scratch rows staged, the product, tanh, the stores.
// CHECK: memref.load %[[SCRATCH]][%[[CUR]],
// CHECK: %[[STAGED:.*]] = memref.load %view
// CHECK: math.fma
// CHECK: math.tanh
// CHECK: memref.store %{{.*}}, %[[Y]]
// CHECK: memref.store %{{.*}}, %[[HS]]
// CHECK-NOT: lstm.grid_barrier
// CHECK: lstm.block_barrier
// CHECK-NEXT: }
// CHECK-NOT: lstm.grid_barrier
// CHECK: gpu.terminator
func.func @dependent_product(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                             %R: tensor<4x4xf32>) -> tensor<?x?x4xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %r = lstm.pointwise ins(%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32> {
    ^bb0(%a: f32, %b: f32):
      %m = arith.mulf %a, %b : f32
      lstm.pointwise_yield %m : f32
    }
    %p = lstm.gate identity(%r : tensor<?x4xf32>) weights(%R : tensor<4x4xf32>)
        -> tensor<?x4xf32>
    %hn = lstm.pointwise ins(%p : tensor<?x4xf32>) -> tensor<?x4xf32> {
    ^bb0(%a: f32):
      %t = math.tanh %a : f32
      lstm.pointwise_yield %t : f32
    }
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y : tensor<?x?x4xf32>
}

// -----

// Lengths (packed sequences) are not handled by the kernel yet.
// CHECK-LABEL: func.func @lengths
// CHECK-NOT: gpu.launch
// CHECK: lstm.layer
func.func @lengths(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                   %R: tensor<4x4xf32>, %len: tensor<?xi64>) -> tensor<?x?x4xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x4xf32>) lengths(%len : tensor<?xi64>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %p = lstm.gate identity(%h : tensor<?x4xf32>) weights(%R : tensor<4x4xf32>)
        -> tensor<?x4xf32>
    %hn = lstm.pointwise ins(%p, %xt : tensor<?x4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      %t = math.tanh %s : f32
      lstm.pointwise_yield %t : f32
    }
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y : tensor<?x?x4xf32>
}

// -----

// An output that is a state argument (a training forward saves h_{t-1}):
// the lane that stores the row's results copies the state at the start of
// the step into it, from the rows the step staged (the product reads h):
// row r of the chunk, column n.
// CHECK-LABEL: func.func @saved_state
// CHECK: %[[HS:.*]] = memref.alloc(%{{.*}}) : memref<2x?x4xf32>
// CHECK: %[[Y:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x4xf32>
// CHECK: %[[SAVED:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x4xf32>
// CHECK: gpu.launch
// CHECK: %[[STAGED:.*]] = memref.view
// CHECK: scf.for %[[T:.*]] = %{{.*}} to %{{.*}} step %c1
// CHECK: %[[CUR:.*]] = arith.remui %[[T]], %c2
// CHECK: memref.load %[[HS]][%[[CUR]],
// CHECK: memref.store %{{.*}}, %[[STAGED]]
// CHECK: math.tanh
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[Y]][%[[T]],
// CHECK: %[[RK:.*]] = arith.muli %[[R:.*]], %c4
// CHECK: %[[AT:.*]] = arith.addi %[[RK]], %[[N:.*]] : index
// CHECK: %[[OLD:.*]] = memref.load %[[STAGED]][%[[AT]]]
// CHECK: memref.store %[[OLD]], %[[SAVED]][%[[T]], %{{.*}}, %[[N]]]
// CHECK-NOT: memref.load %[[HS]][%[[CUR]], %{{.*}}, %[[N]]]
// CHECK: lstm.grid_barrier
func.func @saved_state(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                       %R: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %y, %saved, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %p = lstm.gate identity(%h : tensor<?x4xf32>) weights(%R : tensor<4x4xf32>)
        -> tensor<?x4xf32>
    %hn = lstm.pointwise ins(%p, %xt : tensor<?x4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      %t = math.tanh %s : f32
      lstm.pointwise_yield %t : f32
    }
    lstm.yield out(%hn, %h : tensor<?x4xf32>, tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y, %saved : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// The form of a backward step: the pointwise op makes two N-wide pieces of
// dG, assembled by insert_slices into [B, 2N] (an output, and the input of
// a product of K = 2N whose [B, N] result is the new state dh). Phase 0
// computes the pieces (into scratch buffers, and into the output at
// columns n and N + n); phase 1 stages them side by side in rows of 2N and
// computes the product, written as the state.
// CHECK-LABEL: func.func @backward_like
// CHECK: %[[HS:.*]] = memref.alloc(%{{.*}}) : memref<2x?x4xf32>
// CHECK: %[[DG:.*]] = memref.alloc(%{{.*}}, %{{.*}}) : memref<?x?x8xf32>
// CHECK: %[[HT:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK: %[[P0:.*]] = memref.alloc(%{{.*}}) : memref<2x?x4xf32>
// CHECK: %[[P1:.*]] = memref.alloc(%{{.*}}) : memref<2x?x4xf32>
// CHECK: gpu.launch
// Phase 0: the pieces, to the output (piece 1 at column 4 + n) and to
// their scratch buffers.
// CHECK: math.tanh
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[DG]][%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: %[[COL1:.*]] = arith.addi %{{.*}}, %c4
// CHECK: memref.store %{{.*}}, %[[DG]][%{{.*}}, %{{.*}}, %[[COL1]]]
// CHECK: memref.store %{{.*}}, %[[P0]]
// CHECK: memref.store %{{.*}}, %[[P1]]
// CHECK: lstm.grid_barrier
// Phase 1: both pieces staged into rows of 8, the second at column 4.
// CHECK: memref.load %[[P0]]
// CHECK: memref.load %[[P1]]
// CHECK: arith.muli %{{.*}}, %c8
// CHECK: arith.addi %{{.*}}, %c4
// CHECK: lstm.block_barrier
// The product (K = 8) is the new state; no product reads a state, so the
// step ends with a block barrier.
// CHECK: math.fma
// CHECK: memref.store %{{.*}}, %[[HS]]
// CHECK-NOT: lstm.grid_barrier
// CHECK: lstm.block_barrier
// CHECK-NEXT: }
func.func @backward_like(%dy: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                         %RT: tensor<4x8xf32>) -> tensor<?x?x8xf32> {
  %dg, %hT = lstm.layer reverse ins(%dy : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x4xf32>) {
  ^bb0(%dyt: tensor<?x4xf32>, %dh: tensor<?x4xf32>):
    %c0 = arith.constant 0 : index
    %b = tensor.dim %dh, %c0 : tensor<?x4xf32>
    %empty = tensor.empty(%b) : tensor<?x8xf32>
    %g0, %g1 = lstm.pointwise ins(%dyt, %dh : tensor<?x4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32>, tensor<?x4xf32> {
    ^bb0(%a: f32, %h: f32):
      %s = arith.addf %a, %h : f32
      %t = math.tanh %s : f32
      %m = arith.mulf %s, %h : f32
      lstm.pointwise_yield %t, %m : f32, f32
    }
    %i0 = tensor.insert_slice %g1 into %empty[0, 4] [%b, 4] [1, 1]
        : tensor<?x4xf32> into tensor<?x8xf32>
    %i1 = tensor.insert_slice %g0 into %i0[0, 0] [%b, 4] [1, 1]
        : tensor<?x4xf32> into tensor<?x8xf32>
    %dhn = lstm.gate identity(%i1 : tensor<?x8xf32>) weights(%RT : tensor<4x8xf32>)
        -> tensor<?x4xf32>
    lstm.yield out(%i1 : tensor<?x8xf32>) state(%dhn : tensor<?x4xf32>)
  }
  return %dg : tensor<?x?x8xf32>
}

// -----

// The per-step fallback copies into buffers of their own only the results
// that its lowering makes views of a state's stack (y = h here) and the
// finals; an output that is no state (g, as a training forward's gates) is
// a buffer of its own there already and is yielded as it is.
// COST-LABEL: func.func @plain_output
// COST: } else {
// COST: %[[OUT:.*]]:2, %[[FIN:.*]] = lstm.layer forward {{.*}} attributes {lstm.persistent_fallback}
// COST: %[[YV:.*]] = bufferization.to_buffer %[[OUT]]#0 read_only
// COST: memref.copy %[[YV]]
// COST-NOT: bufferization.to_buffer %[[OUT]]#1
// COST: %[[FV:.*]] = bufferization.to_buffer %[[FIN]] read_only
// COST: memref.copy %[[FV]]
// COST: scf.yield %{{.*}}, %[[OUT]]#1, %{{.*}} :
func.func @plain_output(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                        %R: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %y, %g, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %p = lstm.gate identity(%h : tensor<?x4xf32>) weights(%R : tensor<4x4xf32>)
        -> tensor<?x4xf32>
    %gn = lstm.pointwise ins(%p, %xt : tensor<?x4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      lstm.pointwise_yield %s : f32
    }
    %hn = lstm.pointwise ins(%gn : tensor<?x4xf32>) -> tensor<?x4xf32> {
    ^bb0(%a: f32):
      %t = math.tanh %a : f32
      lstm.pointwise_yield %t : f32
    }
    lstm.yield out(%hn, %gn : tensor<?x4xf32>, tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y, %g : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}
