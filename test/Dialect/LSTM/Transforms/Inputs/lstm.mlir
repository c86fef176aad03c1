// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lstm.mlir: a one-layer PyTorch LSTM (input 4, hidden 8), a small input for the pass and pipeline tests
//
// The nn.LSTM cell: gates i, f, g, o stacked in W [32, 4], R [32, 8],
// bW, bR [32]; c_t = f c_{t-1} + i g, h_t = o tanh(c_t). The results are
// the output sequence and the final h and c.

func.func @forward(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %c0: tensor<?x8xf32>,
                   %W: tensor<32x4xf32>, %R: tensor<32x8xf32>,
                   %bW: tensor<32xf32>, %bR: tensor<32xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %Wi = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wf = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wg = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wo = tensor.extract_slice %W[24, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Ri = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rf = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rg = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ro = tensor.extract_slice %R[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWi = tensor.extract_slice %bW[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bWf = tensor.extract_slice %bW[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bWg = tensor.extract_slice %bW[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bWo = tensor.extract_slice %bW[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRi = tensor.extract_slice %bR[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRf = tensor.extract_slice %bR[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRg = tensor.extract_slice %bR[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRo = tensor.extract_slice %bR[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %y, %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wi, %Ri : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWi, %bRi : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wf, %Rf : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWf, %bRf : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg, %Rg : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWg, %bRg : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %ig = arith.mulf %i, %g : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %ig : tensor<?x8xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wo, %Ro : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWo, %bRo : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
