// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// cho-gru.mlir: the GRU of Cho et al. (2014) (input 4, hidden 8), a small input for the pass and pipeline tests
//
// Gates r, z, n stacked in W [24, 4], R [24, 8], bW, bR [24]; the reset is
// applied before the recurrent product: n = tanh(W_n x_t + R_n (r h) + b_n),
// h_t = (1 - z) n + z h_{t-1}. The results are the output sequence and the
// final h.

func.func @forward(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
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
    %rh = arith.mulf %r, %h : tensor<?x8xf32>
    %n = lstm.gate tanh (%xt, %rh : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wn, %Rn : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWn, %bRn : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %zc = lstm.one_minus %z : tensor<?x8xf32>
    %zcn = arith.mulf %zc, %n : tensor<?x8xf32>
    %zh = arith.mulf %z, %h : tensor<?x8xf32>
    %hn = arith.addf %zcn, %zh : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}
