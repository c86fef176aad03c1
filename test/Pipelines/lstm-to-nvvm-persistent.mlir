// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The persistent kernels' staging through the NVVM pipeline: from sm_80 on,
// asynchronous 16-byte copies that bypass L1 (cp.async.cg), one group, a
// wait for it and the block barrier; before sm_80 (no cp.async), loads and
// stores through registers.
// RUN: lstm-opt %s --lstm-to-nvvm="persistent=true" --mlir-print-ir-before=gpu-module-to-binary -o /dev/null 2>&1 | FileCheck %s
// RUN: lstm-opt %s --lstm-to-nvvm="persistent=true chip=sm_75" --mlir-print-ir-before=gpu-module-to-binary -o /dev/null 2>&1 | FileCheck %s --check-prefix=SM75
// Under the tf32 compute type the kernel is the same (fp32 FMAs); under
// bf16 it rounds its products' operands to bf16 (cvt.rn.bf16.f32 from
// llvm.fptrunc) before the fp32 FMAs.
// RUN: lstm-opt %s --lstm-to-nvvm="persistent=true compute-type=tf32" --mlir-print-ir-before=gpu-module-to-binary -o /dev/null 2>&1 | FileCheck %s
// RUN: lstm-opt %s --lstm-to-nvvm="persistent=true compute-type=bf16" --mlir-print-ir-before=gpu-module-to-binary -o /dev/null 2>&1 | FileCheck %s --check-prefix=BF16
// Without the per-step fallback (per-step-fallback=false), the per-step
// lowering beside the kernel is not compiled: no step kernels and no GEMM
// call; where the kernel does not run, the host code calls the runtime,
// which records the failure.
// RUN: lstm-opt %s --lstm-to-nvvm="persistent=true" --mlir-print-ir-before=gpu-module-to-binary -o /dev/null 2>&1 | FileCheck %s --check-prefix=FALLBACK
// RUN: lstm-opt %s --lstm-to-nvvm="persistent=true per-step-fallback=false" --mlir-print-ir-before=gpu-module-to-binary -o /dev/null 2>&1 | FileCheck %s --check-prefix=NO-FALLBACK
// FALLBACK-NOT: lstmRuntimeMissingPerStepFallback
// FALLBACK: gpu.module @lstm_persistent_rnn_0
// FALLBACK: llvm.func @rnn_kernel_0(
// FALLBACK: llvm.func @lstm_persistent_rnn_0(
// FALLBACK: llvm.func @lstmRuntimeGemmStridedBatched(
// NO-FALLBACK: llvm.func @lstmRuntimeMissingPerStepFallback(i64)
// NO-FALLBACK: llvm.func @rnn(
// NO-FALLBACK: gpu.launch_func {{.*}}@lstm_kernels_i32::@lstm_persistent_rnn_0 blocks
// NO-FALLBACK: llvm.call @lstmRuntimeMissingPerStepFallback(%{{.*}}) : (i64) -> ()
// The layer's results are the kernel's buffers as they are: no kernel copies
// them into the function's results after the cost model's scf.if (whose
// tensor.empty branch bufferized to fully dynamic layouts before
// empty-tensor-to-alloc-tensor ran ahead of one-shot-bufferize).
// NO-FALLBACK-NOT: gpu.launch_func
// (The kernel is then the module's only one: its module is the persistent
// kernels' own, lstm-narrow-kernel-indices'.)
// NO-FALLBACK: gpu.module @lstm_kernels_i32
// NO-FALLBACK-NOT: llvm.func @rnn_kernel_0(
// NO-FALLBACK: llvm.func @lstm_persistent_rnn_0(
// NO-FALLBACK-NOT: lstmRuntimeGemm
// BF16: llvm.func @lstm_persistent_rnn_0(
// BF16: %[[B:.*]] = llvm.fptrunc %{{.*}} : f32 to bf16
// BF16-NEXT: %[[R:.*]] = llvm.fpext %[[B]] : bf16 to f32
// BF16: llvm.intr.fma(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, f32) -> f32

// CHECK: llvm.func @lstm_persistent_rnn_0(
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.commit.group
// CHECK-NEXT: nvvm.cp.async.wait.group 0
// CHECK-NEXT: nvvm.barrier0
// SM75: llvm.func @lstm_persistent_rnn_0(
// SM75-NOT: nvvm.cp.async
// SM75: llvm.load {{.*}} : !llvm.ptr -> f32
// SM75: llvm.store {{.*}} : f32, !llvm.ptr<3>
// SM75-NOT: nvvm.cp.async
func.func @rnn(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>,
               %R: tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>)
      init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %p = lstm.gate identity(%h : tensor<?x8xf32>) weights(%R : tensor<8x8xf32>)
        -> tensor<?x8xf32>
    %hn = lstm.pointwise ins(%xt, %p : tensor<?x8xf32>, tensor<?x8xf32>)
        -> tensor<?x8xf32> {
    ^bb0(%a: f32, %b: f32):
      %s = arith.addf %a, %b : f32
      %t = math.tanh %s : f32
      lstm.pointwise_yield %t : f32
    }
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}
