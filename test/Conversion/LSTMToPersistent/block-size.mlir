// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %S/Inputs/layer-h544.mlir --lstm-optimize=wavefront=false --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT
// RUN: lstm-opt %S/Inputs/layer-h544.mlir --lstm-optimize=wavefront=false --lstm-to-persistent | FileCheck %s
// RUN: lstm-opt %S/Inputs/layer-h544.mlir --lstm-optimize=wavefront=false --lstm-to-persistent=block-size=512 | FileCheck %s --check-prefix=WIDE
// RUN: lstm-opt %S/Inputs/layer-h544.mlir --lstm-optimize=wavefront=false "--lstm-to-persistent=block-size=512 max-blocks=16" | FileCheck %s --check-prefix=MANY
// RUN: lstm-opt %S/Inputs/layer-h4096.mlir --lstm-optimize=wavefront=false --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=H4096
// RUN: lstm-opt %S/Inputs/layer-h4096.mlir --lstm-optimize=wavefront=false --lstm-to-persistent | FileCheck %s --check-prefix=MANY

// block-size 0 (the default): at H = 544 a warp's unit needs 4 columns of
// ceil(544 / 32) = 17 weights a lane, 68, more than the 64 registers a lane
// of a 512-thread block keeps weights in, within the 128 of a 256-thread
// block's. So the layer gets 256-thread blocks (109 of 5 units) to the
// cost model's bound, 2^24 multiply-adds a step over 4 · 544 · 544 a row
// (B <= 14), then the kernel of 512-thread blocks whose warps read their
// weights from memory to its bound, 2^26 (B <= 56), then the per-step
// lowering.
// REPORT: @forward layer 0 (forward): {{.*}} persistent=B<=56
// CHECK-LABEL: func.func @forward
// CHECK: %[[B:.*]] = tensor.dim %expanded, %c1
// CHECK: arith.cmpi ule, %[[B]], %c14 : index
// CHECK: arith.cmpi ule, %c109, %{{.*}} : index
// CHECK: %[[R:.*]]:3 = scf.if
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c109{{.*}}) threads({{.*}}) in (%{{.*}} = %c256,
// CHECK-SAME: function(@lstm_persistent_forward_0)
// CHECK: } else {
// CHECK: arith.cmpi ule, %[[B]], %c56 : index
// CHECK: %[[M:.*]]:3 = scf.if
// CHECK: gpu.launch blocks({{.*}}) in ({{.*}} = %c109{{.*}}) threads({{.*}}) in (%{{.*}} = %c512,
// CHECK-SAME: function(@lstm_persistent_forward_0_memory)
// CHECK: } else {
// CHECK: lstm.layer {{.*}}lstm.persistent_fallback
// CHECK: scf.yield
// CHECK: scf.yield %[[M]]#0, %[[M]]#1, %[[M]]#2
// CHECK: return %[[R]]#0

// 512 threads asked for: the warps read their weights from memory at every
// step, a kernel to a smaller step, 2^26 multiply-adds: B <= 56.
// WIDE-LABEL: func.func @forward
// WIDE: arith.cmpi ule, %{{.*}}, %c56 : index
// WIDE: scf.if
// WIDE: gpu.launch blocks({{.*}}) in ({{.*}} = %c109{{.*}}) threads({{.*}}) in (%{{.*}} = %c512,
// WIDE: } else {
// WIDE: lstm.layer {{.*}}lstm.persistent_fallback

// Where a warp would take several units (16 blocks of 34 units, 16 warps
// each) it reads each unit's weights in turn: the cost model keeps the
// per-step lowering (no kernel, no branch).
// MANY-LABEL: func.func @forward
// MANY-NOT: gpu.launch
// MANY-NOT: scf.if
// MANY: lstm.layer
// MANY-NOT: gpu.launch

// H = 4096 by default: 128 blocks of 32 units, two a warp even in 512-thread
// blocks; the report says why the layer keeps the per-step lowering.
// H4096: @forward layer 0 (forward): {{.*}} persistent=no (the cost model: a warp would take 2 units, reading their weights from memory, the per-step GEMMs are faster)
