// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The report on each cell kind, before and after the passes (the IR is
// unchanged: the module still prints). The LSTM, Cho's GRU and the 3-layer
// LSTM stack are the small inputs of Inputs/ (x of 4 features, h of 8);
// PyTorch's GRU and a bidirectional layer are cases of this file.
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM-HOIST
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM-COMB
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM-BOTH
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-optimize=differentiate=true --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=TRAIN
// RUN: lstm-opt %S/Inputs/cho-gru.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHO-BOTH
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=STACK-BOTH
// RUN: lstm-opt %s -split-input-file --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: lstm-opt %s -split-input-file --lstm-hoist-input-projection --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=HOIST
// RUN: lstm-opt %s -split-input-file --lstm-schedule-report 2>&1 | FileCheck %s
// An output file holds the report of one module (each split would write it
// anew): these two read the file whole, as one module.
// RUN: rm -f %t.txt && lstm-opt %s --lstm-schedule-report=output-file=%t.txt -o /dev/null && FileCheck %s --check-prefix=FILE < %t.txt
// RUN: lstm-opt %s --lstm-schedule-report=output-file=- -o /dev/null | FileCheck %s --check-prefix=FILE
// What lstm-to-persistent does with each layer (persistent=true):
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-optimize=wavefront=false --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-UNFUSED
// RUN: lstm-opt %S/Inputs/cho-gru.mlir --lstm-optimize=wavefront=false --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-CHO
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-optimize --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-WAVE
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-optimize=wavefront=false --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-STACK
// RUN: lstm-opt %examples/rnn_tanh.mlir --lstm-optimize=wavefront=false --lstm-schedule-report=persistent=true -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-RNN
// The kernels as lstm-to-nvvm{persistent=true} builds them for the compute
// type and the chip (tensor cores from sm_80 on, unless tensor-cores=false):
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-optimize=wavefront=false --lstm-schedule-report="persistent=true compute-type=tf32" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-TF32
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-optimize=wavefront=false --lstm-schedule-report="persistent=true compute-type=bf16" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-BF16
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-optimize=wavefront=false --lstm-schedule-report="persistent=true tensor-cores=false" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-FMA
// RUN: lstm-opt %S/Inputs/lstm.mlir --lstm-optimize=wavefront=false --lstm-schedule-report="persistent=true chip=sm_75 compute-type=tf32" -o /dev/null 2>&1 | FileCheck %s --check-prefix=PERSIST-FMA

// 8 products (4 gates x {x_t, h}); 4 gate epilogues + 3 mulf + addf + tanh.
// LSTM: @forward layer 0 (forward): gemms/step=8 pointwise/step=9 hoisted-gemms=0 steps=T
// LSTM-HOIST: @forward layer 0 (forward): gemms/step=4 pointwise/step=9 hoisted-gemms=1 steps=T
// LSTM-COMB: @forward layer 0 (forward): gemms/step=2 pointwise/step=9 hoisted-gemms=0 steps=T
// LSTM-BOTH: @forward layer 0 (forward): gemms/step=1 pointwise/step=9 hoisted-gemms=1 steps=T gemms-after=0
// LSTM-BOTH-NOT: persistent=
// Optimised, the cell has one product of h (4 columns of 8 per unit, 8 units):
// 256 multiply-adds per row and step, a kernel while B <= 2^24 / 256.
// Under the fp32 compute type the products run on tensor cores as 3xTF32
// from where the dot products stop, at 64 at the latest; TF32 from 16, bf16
// from 4; without tensor cores (asked, or before sm_80) no such field.
// PERSIST: @forward layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=1 steps=T gemms-after=0 persistent=B<=65536 tensor-cores=B>=64 (3xtf32){{$}}
// PERSIST-TF32: persistent=B<=65536 tensor-cores=B>=16 (tf32){{$}}
// PERSIST-BF16: persistent=B<=65536 tensor-cores=B>=4 (bf16){{$}}
// PERSIST-FMA: persistent=B<=65536{{$}}
// PERSIST-UNFUSED: persistent=no (a gate with an epilogue (activation, addends, biases or peephole) in the step)
// Cho's GRU: r, z (2 columns) and R_n (r * h) (1 column, a second phase of
// the step): 192 multiply-adds per row.
// PERSIST-CHO: @forward layer 0 (forward): gemms/step=2 pointwise/step=2 hoisted-gemms=1 steps=T gemms-after=0 persistent=B<=87381
// The Elman RNN: its lone gate split into its GEMM and the epilogue's
// region (lstm-fuse-elementwise), one column of 128 a unit, 128 units:
// B <= 2^24 / 16384.
// PERSIST-RNN: @forward layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=1 steps=T gemms-after=0 persistent=B<=1024
// PERSIST-WAVE: @forward wavefront of 3 layers (forward): {{.*}} persistent=no (a wavefront of layers)
// The three layers as one kernel (lstm-to-persistent{stacks=true}): each
// layer's line names the stack, its grid and its batch bound.
// PERSIST-STACK: @forward layer 0 (forward): {{.*}} persistent=B<={{[0-9]+}} tensor-cores=B>=64 (3xtf32) stack=0-2 (one kernel of {{[0-9]+}} blocks of {{[0-9]+}} threads, B<={{[0-9]+}}) tensor-cores=B>=64 (3xtf32){{$}}
// PERSIST-STACK-NEXT: @forward layer 1 (forward): {{.*}} stack=0-2
// PERSIST-STACK-NEXT: @forward layer 2 (forward): {{.*}} stack=0-2
// The training functions: the backward layer of the LSTM has one GEMM and
// one fused kernel per step, and four GEMMs after its loop (dX, dW, dR and
// the bias gradients as 1ᵀ·dG); h_{t-1} in dR = dGᵀ·H_prev is rebuilt from
// the forward's output (the layer saves no copy), so no product reads the
// forward layer's outputs directly.
// TRAIN: @forward layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=1 steps=T gemms-after=0
// TRAIN-NEXT: @forward_grad layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=1 steps=T gemms-after=0
// TRAIN-NEXT: @forward_grad layer 1 (reverse): gemms/step=1 pointwise/step=1 hoisted-gemms=0 steps=T gemms-after=4
// TRAIN-NEXT: @forward_train layer 0 (forward): gemms/step=1 pointwise/step=1 hoisted-gemms=1 steps=T gemms-after=0
// TRAIN-NEXT: @forward_backward layer 0 (reverse): gemms/step=1 pointwise/step=1 hoisted-gemms=0 steps=T gemms-after=4

// Cho's GRU, R_n (r ⊙ h) stays on its own next to the combined R_r, R_z GEMM.
// CHO-BOTH: @forward layer 0 (forward): gemms/step=2 pointwise/step={{[0-9]+}} hoisted-gemms=1 steps=T

// STACK: @forward layer 0 (forward): gemms/step=8 pointwise/step=9 hoisted-gemms=0 steps=T
// STACK-NEXT: @forward layer 1 (forward): gemms/step=8 pointwise/step=9 hoisted-gemms=0 steps=T
// STACK-NEXT: @forward layer 2 (forward): gemms/step=8 pointwise/step=9 hoisted-gemms=0 steps=T
// STACK-BOTH: @forward layer 0 (forward): gemms/step=1 pointwise/step=9 hoisted-gemms=1 steps=T
// STACK-BOTH-NEXT: @forward layer 1 (forward): gemms/step=1 pointwise/step=9 hoisted-gemms=1 steps=T
// STACK-BOTH-NEXT: @forward layer 2 (forward): gemms/step=1 pointwise/step=9 hoisted-gemms=1 steps=T

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


// -----

// PyTorch's GRU: its identity gate for x_n (with b_in) folds into the
// hoisted GEMM.
// NONE: @gru layer 0 (forward): gemms/step=6 pointwise/step=11 hoisted-gemms=0 steps=T
// HOIST: @gru layer 0 (forward): gemms/step=3 pointwise/step=10 hoisted-gemms=1 steps=T
func.func @gru(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
               %W: tensor<24x4xf32>, %R: tensor<24x8xf32>,
               %bW: tensor<24xf32>, %bR: tensor<24xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %Wr = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Wz = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Wn = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Rr = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rz = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rn = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWr = tensor.extract_slice %bW[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bWz = tensor.extract_slice %bW[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bWn = tensor.extract_slice %bW[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRr = tensor.extract_slice %bR[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRz = tensor.extract_slice %bR[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRn = tensor.extract_slice %bR[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wr, %Rr : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWr, %bRr : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wz, %Rz : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWz, %bRz : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %xn = lstm.gate identity (%xt : tensor<?x4xf32>) weights(%Wn : tensor<8x4xf32>)
        bias(%bWn : tensor<8xf32>) -> tensor<?x8xf32>
    %hn = lstm.gate identity (%h : tensor<?x8xf32>) weights(%Rn : tensor<8x8xf32>)
        bias(%bRn : tensor<8xf32>) -> tensor<?x8xf32>
    // n = tanh(xn + r * hn): the reset after the recurrent product.
    %rhn = arith.mulf %r, %hn : tensor<?x8xf32>
    %npre = arith.addf %xn, %rhn : tensor<?x8xf32>
    %n = math.tanh %npre : tensor<?x8xf32>
    %zc = lstm.one_minus %z : tensor<?x8xf32>
    %zcn = arith.mulf %zc, %n : tensor<?x8xf32>
    %zh = arith.mulf %z, %h : tensor<?x8xf32>
    %hnew = arith.addf %zcn, %zh : tensor<?x8xf32>
    lstm.yield out(%hnew : tensor<?x8xf32>) state(%hnew : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// A bidirectional layer (two gates a cell, no biases): a line per
// direction, each with its own hoisted GEMM.
// NONE: @bidirectional layer 0 (forward): gemms/step=4 pointwise/step=3 hoisted-gemms=0 steps=T
// NONE-NEXT: @bidirectional layer 1 (reverse): gemms/step=4 pointwise/step=3 hoisted-gemms=0 steps=T
// HOIST: @bidirectional layer 0 (forward): gemms/step=2 pointwise/step=3 hoisted-gemms=1 steps=T
// HOIST-NEXT: @bidirectional layer 1 (reverse): gemms/step=2 pointwise/step=3 hoisted-gemms=1 steps=T
func.func @bidirectional(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %h1: tensor<?x8xf32>,
                         %W: tensor<16x4xf32>, %R: tensor<16x8xf32>,
                         %Wrev: tensor<16x4xf32>, %Rrev: tensor<16x8xf32>)
    -> tensor<?x?x16xf32> {
  %Wa = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wg = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Ra = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rg = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %yf, %hTf = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wa, %Ra : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg, %Rg : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %Wa_r = tensor.extract_slice %Wrev[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wg_r = tensor.extract_slice %Wrev[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Ra_r = tensor.extract_slice %Rrev[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rg_r = tensor.extract_slice %Rrev[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %yr, %hTr = lstm.layer reverse ins(%x : tensor<?x?x4xf32>) init(%h1 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wa_r, %Ra_r : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg_r, %Rg_r : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %y = tensor.concat dim(2) %yf, %yr : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// A wavefronted stack is one line: per diagonal, its batched GEMMs (the
// batched input GEMM of layers 1-2, the batched recurrent GEMM) and
// pointwise kernels, over T + L - 1 diagonals; layer 0's input GEMM (its
// input size differs) is made once for all steps before the loop.
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-optimize --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=WAVE
// WAVE: @forward wavefront of 3 layers (forward): gemms/step=2 pointwise/step={{[0-9]+}} hoisted-gemms=1 steps=T+2
// With the input size equal to the hidden size nothing is made before the
// loop (x_t joins the batched operand); a reverse GRU stack whose layer 0
// reads 8 features makes its three gates' input products before it.
// RUN: lstm-opt %S/Inputs/wavefront-rnn2.mlir --lstm-wavefront --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=EQUAL-SIZES
// EQUAL-SIZES: @forward wavefront of 2 layers (forward): gemms/step=2 pointwise/step=2 hoisted-gemms=0 steps=T+1
// RUN: lstm-opt %S/Inputs/wavefront-gru4-reverse.mlir --lstm-wavefront --lstm-schedule-report -o /dev/null 2>&1 | FileCheck %s --check-prefix=REVERSE-GRU
// REVERSE-GRU: @forward wavefront of 4 layers (reverse): gemms/step=6 pointwise/step={{[0-9]+}} hoisted-gemms=3 steps=T+3
// WAVE-NOT: layer
