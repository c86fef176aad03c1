// The report on every example kind, before and after the passes. The IR is
// unchanged (the module still prints).
// RUN: lstm-opt %examples/lstm.mlir --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM
// RUN: lstm-opt %examples/lstm.mlir --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM-HOIST
// RUN: lstm-opt %examples/lstm.mlir --lstm-combine-gate-gemms --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM-COMB
// RUN: lstm-opt %examples/lstm.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM-BOTH
// RUN: lstm-opt %examples/gru.mlir --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRU
// RUN: lstm-opt %examples/gru.mlir --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=GRU-HOIST
// RUN: lstm-opt %examples/cho_gru.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHO-BOTH
// RUN: lstm-opt %examples/stack3.mlir --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %examples/stack3.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=STACK-BOTH
// RUN: lstm-opt %examples/bidirectional.mlir --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=BIDIR-HOIST
// RUN: lstm-opt %examples/lstm.mlir --lstm-optimize=differentiate=true --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: lstm-opt %s --lstm-schedule-report 2>&1 | FileCheck %s
// RUN: rm -f %t.txt && lstm-opt %s --lstm-schedule-report=output-file=%t.txt -o /dev/null && FileCheck %s --check-prefix=FILE < %t.txt
// RUN: lstm-opt %s --lstm-schedule-report=output-file=- -o /dev/null | FileCheck %s --check-prefix=FILE

// 8 products (4 gates x {x_t, h}); 4 gate epilogues + 3 mulf + addf + tanh.
// LSTM: @forward layer 0 (forward): gemms/step=8 pointwise/step=9 hoisted-gemms=0 steps=T
// LSTM-HOIST: @forward layer 0 (forward): gemms/step=4 pointwise/step=9 hoisted-gemms=1 steps=T
// LSTM-COMB: @forward layer 0 (forward): gemms/step=2 pointwise/step=9 hoisted-gemms=0 steps=T
// LSTM-BOTH: @forward layer 0 (forward): gemms/step=1 pointwise/step=9 hoisted-gemms=1 steps=T gemms-after=0
// The training functions: the backward layer of the LSTM has one GEMM and
// one fused kernel per step, and four GEMMs after its loop (dX, dW, dR and
// the bias gradients as 1ᵀ·dG); the forward's saved h_{t-1} feeds one of
// them.
// TRAIN: @forward layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=1 steps=T gemms-after=0
// TRAIN-NEXT: @forward_grad layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=1 steps=T gemms-after=1
// TRAIN-NEXT: @forward_grad layer 1 (reverse): gemms/step=1 pointwise/step=1 hoisted-gemms=0 steps=T gemms-after=4
// TRAIN-NEXT: @forward_train layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=1 steps=T gemms-after=0
// TRAIN-NEXT: @forward_backward layer 0 (reverse): gemms/step=1 pointwise/step=1 hoisted-gemms=0 steps=T gemms-after=4

// The GRU's identity gate for x_n (with b_in) folds into the hoisted GEMM.
// GRU: @forward layer 0 (forward): gemms/step=6 pointwise/step=11 hoisted-gemms=0 steps=T
// GRU-HOIST: @forward layer 0 (forward): gemms/step=3 pointwise/step=10 hoisted-gemms=1 steps=T

// Cho's GRU, R_n (r ⊙ h) stays on its own next to the combined R_r, R_z GEMM.
// CHO-BOTH: @forward layer 0 (forward): gemms/step=2 pointwise/step={{[0-9]+}} hoisted-gemms=1 steps=T

// STACK: @forward layer 0 (forward): gemms/step=8 pointwise/step=9 hoisted-gemms=0 steps=T
// STACK-NEXT: @forward layer 1 (forward): gemms/step=8 pointwise/step=9 hoisted-gemms=0 steps=T
// STACK-NEXT: @forward layer 2 (forward): gemms/step=8 pointwise/step=9 hoisted-gemms=0 steps=T
// STACK-BOTH: @forward layer 0 (forward): gemms/step=1 pointwise/step=9 hoisted-gemms=1 steps=T
// STACK-BOTH-NEXT: @forward layer 1 (forward): gemms/step=1 pointwise/step=9 hoisted-gemms=1 steps=T
// STACK-BOTH-NEXT: @forward layer 2 (forward): gemms/step=1 pointwise/step=9 hoisted-gemms=1 steps=T

// BIDIR-HOIST: @forward layer 0 (forward): gemms/step=4 pointwise/step=9 hoisted-gemms=1 steps=T
// BIDIR-HOIST-NEXT: @forward layer 1 (reverse): gemms/step=4 pointwise/step=9 hoisted-gemms=1 steps=T

// Several functions, static T, ops with a region count once, bare GEMMs
// count no pointwise kernel, views and scalar constants count nothing.
// CHECK: @first layer 0 (reverse): gemms/step=3 pointwise/step=4 hoisted-gemms=0 steps=7
// CHECK-NEXT: @second layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=0 steps=T
// CHECK-NEXT: @second layer 1 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=0 steps=T
// CHECK: func.func @first
// FILE: @first layer 0 (reverse): gemms/step=3 pointwise/step=4 hoisted-gemms=0 steps=7
// FILE-NEXT: @second layer 0 (forward)
// FILE-NEXT: @second layer 1 (forward)
func.func @first(%x: tensor<7x?x4xf32>, %h0: tensor<?x8xf32>,
                 %W: tensor<16x4xf32>, %R: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer reverse ins(%x : tensor<7x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    // A bare GEMM: one GEMM, no pointwise kernel.
    %p = lstm.gate identity (%xt : tensor<?x4xf32>) weights(%W : tensor<16x4xf32>) -> tensor<?x16xf32>
    %c0 = arith.constant 0 : index
    %b = tensor.dim %p, %c0 : tensor<?x16xf32>
    %p0 = tensor.extract_slice %p[0, 0] [%b, 8] [1, 1] : tensor<?x16xf32> to tensor<?x8xf32>
    // Two GEMMs and an epilogue.
    %a = lstm.gate sigmoid (%h, %h : tensor<?x8xf32>, tensor<?x8xf32>) weights(%R, %R : tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %f = lstm.one_minus %a : tensor<?x8xf32>
    %g = lstm.gate tanh add(%p0 : tensor<?x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %f, %g : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

func.func @second(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %R: tensor<4x4xf32>)
    -> tensor<?x4xf32> {
  %y, %h1 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %a = lstm.gate identity (%h : tensor<?x4xf32>) weights(%R : tensor<4x4xf32>) -> tensor<?x4xf32>
    // A region stands for a fused pointwise kernel: one, whatever it holds.
    %c0 = arith.constant 0 : index
    %b = tensor.dim %h, %c0 : tensor<?x4xf32>
    %e = tensor.empty(%b) : tensor<?x4xf32>
    %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
        ins(%a, %xt : tensor<?x4xf32>, tensor<?x4xf32>) outs(%e : tensor<?x4xf32>) {
    ^bb0(%u: f32, %v: f32, %o: f32):
      %m = arith.mulf %u, %v : f32
      %t = math.tanh %m : f32
      linalg.yield %t : f32
    } -> tensor<?x4xf32>
    lstm.yield out(%s : tensor<?x4xf32>) state(%s : tensor<?x4xf32>)
  }
  %hT = lstm.layer forward ins(%y : tensor<?x?x4xf32>) init(%h1 : tensor<?x4xf32>) -> (), (tensor<?x4xf32>) {
  ^bb0(%yt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %a = lstm.gate identity (%h : tensor<?x4xf32>) weights(%R : tensor<4x4xf32>) -> tensor<?x4xf32>
    %s = arith.addf %a, %yt : tensor<?x4xf32>
    lstm.yield state(%s : tensor<?x4xf32>)
  }
  return %hT : tensor<?x4xf32>
}

// A wavefronted stack is one line: per diagonal, its batched GEMMs (the
// batched input GEMM of layers 1-2, the batched recurrent GEMM) and
// pointwise kernels, over T + L - 1 diagonals; layer 0's input GEMM (its
// input size differs) is made once for all steps before the loop.
// RUN: lstm-opt %examples/stack3.mlir --lstm-optimize --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=WAVE
// WAVE: @forward wavefront of 3 layers (forward): gemms/step=2 pointwise/step={{[0-9]+}} hoisted-gemms=1 steps=T+2
// With the input size equal to the hidden size nothing is made before the
// loop (x_t joins the batched operand); a reverse GRU stack whose layer 0
// reads 8 features makes its three gates' input products before it.
// RUN: lstm-opt %S/Inputs/wavefront-rnn2.mlir --lstm-wavefront --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=EQUAL-SIZES
// EQUAL-SIZES: @forward wavefront of 2 layers (forward): gemms/step=2 pointwise/step=2 hoisted-gemms=0 steps=T+1
// RUN: lstm-opt %S/Inputs/wavefront-gru4-reverse.mlir --lstm-wavefront --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REVERSE-GRU
// REVERSE-GRU: @forward wavefront of 4 layers (reverse): gemms/step=6 pointwise/step={{[0-9]+}} hoisted-gemms=3 steps=T+3
// WAVE-NOT: layer
