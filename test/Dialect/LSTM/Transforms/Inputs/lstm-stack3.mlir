// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lstm-stack3.mlir: a 3-layer PyTorch LSTM (input 4, hidden 8), small inputs for the pass tests
//
// Each layer is the nn.LSTM cell, gates i, f, g, o stacked in W<k> [32, K], R<k> [32, 8],
// bW<k>, bR<k> [32] (K = 4 for layer 0, 8 otherwise). Layer k reads layer k-1's output
// sequence; the results are the last layer's outputs, then every layer's final states.

func.func @forward(%x: tensor<?x?x4xf32>,
    %h0_0: tensor<?x8xf32>,
    %h0_1: tensor<?x8xf32>,
    %h0_2: tensor<?x8xf32>,
    %c0_0: tensor<?x8xf32>,
    %c0_1: tensor<?x8xf32>,
    %c0_2: tensor<?x8xf32>,
    %W0: tensor<32x4xf32>,
    %R0: tensor<32x8xf32>,
    %bW0: tensor<32xf32>,
    %bR0: tensor<32xf32>,
    %W1: tensor<32x8xf32>,
    %R1: tensor<32x8xf32>,
    %bW1: tensor<32xf32>,
    %bR1: tensor<32xf32>,
    %W2: tensor<32x8xf32>,
    %R2: tensor<32x8xf32>,
    %bW2: tensor<32xf32>,
    %bR2: tensor<32xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %Wi0 = tensor.extract_slice %W0[0, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Ri0 = tensor.extract_slice %R0[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWi0 = tensor.extract_slice %bW0[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRi0 = tensor.extract_slice %bR0[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wf0 = tensor.extract_slice %W0[8, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Rf0 = tensor.extract_slice %R0[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWf0 = tensor.extract_slice %bW0[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRf0 = tensor.extract_slice %bR0[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wg0 = tensor.extract_slice %W0[16, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Rg0 = tensor.extract_slice %R0[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWg0 = tensor.extract_slice %bW0[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRg0 = tensor.extract_slice %bR0[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wo0 = tensor.extract_slice %W0[24, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Ro0 = tensor.extract_slice %R0[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWo0 = tensor.extract_slice %bW0[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRo0 = tensor.extract_slice %bR0[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0_0, %c0_0 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wi0, %Ri0 : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWi0, %bRi0 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wf0, %Rf0 : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWf0, %bRf0 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg0, %Rg0 : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWg0, %bRg0 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %ig = arith.mulf %i, %g : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %ig : tensor<?x8xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wo0, %Ro0 : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWo0, %bRo0 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  %Wi1 = tensor.extract_slice %W1[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ri1 = tensor.extract_slice %R1[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWi1 = tensor.extract_slice %bW1[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRi1 = tensor.extract_slice %bR1[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wf1 = tensor.extract_slice %W1[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rf1 = tensor.extract_slice %R1[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWf1 = tensor.extract_slice %bW1[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRf1 = tensor.extract_slice %bR1[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wg1 = tensor.extract_slice %W1[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rg1 = tensor.extract_slice %R1[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWg1 = tensor.extract_slice %bW1[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRg1 = tensor.extract_slice %bR1[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wo1 = tensor.extract_slice %W1[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ro1 = tensor.extract_slice %R1[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWo1 = tensor.extract_slice %bW1[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRo1 = tensor.extract_slice %bR1[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %y1, %hT1, %cT1 = lstm.layer forward ins(%y0 : tensor<?x?x8xf32>)
      init(%h0_1, %c0_1 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wi1, %Ri1 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bWi1, %bRi1 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wf1, %Rf1 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bWf1, %bRf1 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wg1, %Rg1 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bWg1, %bRg1 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %ig = arith.mulf %i, %g : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %ig : tensor<?x8xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wo1, %Ro1 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bWo1, %bRo1 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  %Wi2 = tensor.extract_slice %W2[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ri2 = tensor.extract_slice %R2[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWi2 = tensor.extract_slice %bW2[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRi2 = tensor.extract_slice %bR2[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wf2 = tensor.extract_slice %W2[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rf2 = tensor.extract_slice %R2[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWf2 = tensor.extract_slice %bW2[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRf2 = tensor.extract_slice %bR2[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wg2 = tensor.extract_slice %W2[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rg2 = tensor.extract_slice %R2[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWg2 = tensor.extract_slice %bW2[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRg2 = tensor.extract_slice %bR2[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %Wo2 = tensor.extract_slice %W2[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ro2 = tensor.extract_slice %R2[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWo2 = tensor.extract_slice %bW2[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRo2 = tensor.extract_slice %bR2[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %y2, %hT2, %cT2 = lstm.layer forward ins(%y1 : tensor<?x?x8xf32>)
      init(%h0_2, %c0_2 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wi2, %Ri2 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bWi2, %bRi2 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wf2, %Rf2 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bWf2, %bRf2 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wg2, %Rg2 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bWg2, %bRg2 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %ig = arith.mulf %i, %g : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %ig : tensor<?x8xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wo2, %Ro2 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bWo2, %bRo2 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %y2, %hT0, %hT1, %hT2, %cT0, %cT1, %cT2 : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
