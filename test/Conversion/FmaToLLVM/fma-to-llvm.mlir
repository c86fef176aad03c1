// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(gpu.module(lstm-fma-to-llvm))" | FileCheck %s
// RUN: lstm-opt %s --split-input-file \
// RUN:   --pass-pipeline="builtin.module(gpu.module(lstm-fma-to-llvm,convert-gpu-to-nvvm))" \
// RUN:   | FileCheck %s --check-prefix=NVVM

// f32 and f64 fused multiply-adds without fast-math flags become LLVM's
// intrinsic. Other types, and an fma with flags, keep upstream's lowering.
// CHECK-LABEL: gpu.module @kinds
// CHECK: gpu.func @fmas(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32, %[[D:.*]]: f64
// CHECK-NEXT: %[[S:.*]] = llvm.intr.fma(%[[A]], %[[B]], %[[C]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[T:.*]] = llvm.intr.fma(%[[S]], %[[B]], %[[C]]) : (f32, f32, f32) -> f32
// CHECK-NEXT: %[[U:.*]] = llvm.intr.fma(%[[D]], %[[D]], %[[D]]) : (f64, f64, f64) -> f64
// CHECK-NEXT: math.fma %{{.*}}, %{{.*}}, %{{.*}} : f16
// CHECK-NEXT: math.fma %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NEXT: math.fma %[[T]], %[[B]], %[[C]] fastmath<fast> : f32
gpu.module @kinds {
  gpu.func @fmas(%a: f32, %b: f32, %c: f32, %d: f64, %h: f16, %v: vector<4xf32>)
      -> (f64, f16, vector<4xf32>, f32) {
    %s = math.fma %a, %b, %c : f32
    %t = math.fma %s, %b, %c : f32
    %u = math.fma %d, %d, %d : f64
    %w = math.fma %h, %h, %h : f16
    %x = math.fma %v, %v, %v : vector<4xf32>
    %y = math.fma %t, %b, %c fastmath<fast> : f32
    gpu.return %u, %w, %x, %y : f64, f16, vector<4xf32>, f32
  }
}

// -----

// Through the NVVM lowering: the intrinsic stays, and no libdevice function
// is declared for it (upstream's lowering alone would call __nv_fmaf).
// NVVM-LABEL: gpu.module @lowered
// NVVM-NOT: __nv_fma
// NVVM: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32
// NVVM-NOT: __nv_fma
gpu.module @lowered {
  gpu.func @fma(%a: f32, %b: f32, %c: f32) -> f32 {
    %s = math.fma %a, %b, %c : f32
    gpu.return %s : f32
  }
}
