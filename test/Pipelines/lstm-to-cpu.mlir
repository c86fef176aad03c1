// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The CPU pipeline leaves nothing but the LLVM dialect (an op of another
// dialect at the start of a line; the failed checks' messages name ops).
// RUN: lstm-opt %S/../Runner/Inputs/rnn.mlir --lstm-to-cpu | FileCheck %s
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-to-cpu | FileCheck %s
// RUN: lstm-opt %s -split-input-file --lstm-to-cpu | FileCheck %s --check-prefix=CASES

// CHECK: llvm.func @forward
// CHECK-NOT: {{^ *(%[^ ]+ = )?(lstm|linalg|tensor|memref|scf|arith|math|cf|bufferization|func)\.}}

// Variable lengths: the layer masks the rows past their length.
// CASES-LABEL: llvm.func @varlen
// CASES-NOT: {{^ *(%[^ ]+ = )?(lstm|linalg|tensor|memref|scf|arith|math|cf|bufferization|func)\.}}
func.func @varlen(%x: tensor<?x?x4xf32>, %len: tensor<?xi32>, %h0: tensor<?x8xf32>,
                  %W: tensor<16x4xf32>, %R: tensor<16x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %Wa = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wg = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Ra = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rg = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      lengths(%len : tensor<?xi32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wa, %Ra : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg, %Rg : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// A bidirectional layer: a forward and a reverse layer on the same input,
// their outputs concatenated.
// CASES-LABEL: llvm.func @bidirectional
// CASES-NOT: {{^ *(%[^ ]+ = )?(lstm|linalg|tensor|memref|scf|arith|math|cf|bufferization|func)\.}}
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
