// cho_gru.mlir: the GRU of Cho et al. (2014), reset before the recurrent GEMM
//
// r_t = sigmoid(W_r x_t + R_r h_{t-1} + bW_r + bR_r)
// z_t = sigmoid(W_z x_t + R_z h_{t-1} + bW_z + bR_z)
// n_t = tanh   (W_n x_t + R_n (r_t * h_{t-1}) + bW_n + bR_n)
// h_t = (1 - z_t) * n_t + z_t * h_{t-1}
//
// Same parameter layout as gru.mlir (gate order r, z, n; b_n = bW_n + bR_n).
// y[t] = h_t.
//
// Arguments:
//   %x   tensor<?x?x64xf32>
//   %h0  tensor<?x128xf32>
//   %W   tensor<384x64xf32>
//   %R   tensor<384x128xf32>
//   %bW  tensor<384xf32>
//   %bR  tensor<384xf32>
// Results:
//   y    tensor<?x?x128xf32>
//   hT   tensor<?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<?x128xf32>,
    %W: tensor<384x64xf32>,
    %R: tensor<384x128xf32>,
    %bW: tensor<384xf32>,
    %bR: tensor<384xf32>)
    -> (tensor<?x?x128xf32>, tensor<?x128xf32>) {
  // Per-gate blocks of the stacked parameters (gate order r, z, n).
  %Wr = tensor.extract_slice %W[0, 0] [128, 64] [1, 1] : tensor<384x64xf32> to tensor<128x64xf32>
  %Rr = tensor.extract_slice %R[0, 0] [128, 128] [1, 1] : tensor<384x128xf32> to tensor<128x128xf32>
  %bWr = tensor.extract_slice %bW[0] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %bRr = tensor.extract_slice %bR[0] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %Wz = tensor.extract_slice %W[128, 0] [128, 64] [1, 1] : tensor<384x64xf32> to tensor<128x64xf32>
  %Rz = tensor.extract_slice %R[128, 0] [128, 128] [1, 1] : tensor<384x128xf32> to tensor<128x128xf32>
  %bWz = tensor.extract_slice %bW[128] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %bRz = tensor.extract_slice %bR[128] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %Wn = tensor.extract_slice %W[256, 0] [128, 64] [1, 1] : tensor<384x64xf32> to tensor<128x64xf32>
  %Rn = tensor.extract_slice %R[256, 0] [128, 128] [1, 1] : tensor<384x128xf32> to tensor<128x128xf32>
  %bWn = tensor.extract_slice %bW[256] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %bRn = tensor.extract_slice %bR[256] [128] [1] : tensor<384xf32> to tensor<128xf32>

  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0 : tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wr, %Rr : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWr, %bRr : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wz, %Rz : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWz, %bRz : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    // The reset is applied before the recurrent GEMM: R_n depends on r.
    %r_h = arith.mulf %r, %h : tensor<?x128xf32>
    %n = lstm.gate tanh (%xt, %r_h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wn, %Rn : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWn, %bRn : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    // h_new = (1 - z) * n + z * h
    %z_c = lstm.one_minus %z : tensor<?x128xf32>
    %zc_n = arith.mulf %z_c, %n : tensor<?x128xf32>
    %z_h = arith.mulf %z, %h : tensor<?x128xf32>
    %h_new = arith.addf %zc_n, %z_h : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new : tensor<?x128xf32>)
  }
  return %y, %hT : tensor<?x?x128xf32>, tensor<?x128xf32>
}
