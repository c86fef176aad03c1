// mgu.mlir: the minimal gated unit (MGU, Zhou et al. 2016)
//
// f_t = sigmoid(W_f x_t + R_f h_{t-1} + bW_f + bR_f)
// n_t = tanh   (W_n x_t + R_n (f_t * h_{t-1}) + bW_n + bR_n)
// h_t = (1 - f_t) * h_{t-1} + f_t * n_t
//
// W, R, bW, bR stack the gates in the order f, n. y[t] = h_t.
//
// Arguments:
//   %x   tensor<?x?x64xf32>
//   %h0  tensor<?x128xf32>
//   %W   tensor<256x64xf32>
//   %R   tensor<256x128xf32>
//   %bW  tensor<256xf32>
//   %bR  tensor<256xf32>
// Results:
//   y    tensor<?x?x128xf32>
//   hT   tensor<?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<?x128xf32>,
    %W: tensor<256x64xf32>,
    %R: tensor<256x128xf32>,
    %bW: tensor<256xf32>,
    %bR: tensor<256xf32>)
    -> (tensor<?x?x128xf32>, tensor<?x128xf32>) {
  // Per-gate blocks of the stacked parameters (gate order f, n).
  %Wf = tensor.extract_slice %W[0, 0] [128, 64] [1, 1] : tensor<256x64xf32> to tensor<128x64xf32>
  %Rf = tensor.extract_slice %R[0, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %bWf = tensor.extract_slice %bW[0] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %bRf = tensor.extract_slice %bR[0] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %Wn = tensor.extract_slice %W[128, 0] [128, 64] [1, 1] : tensor<256x64xf32> to tensor<128x64xf32>
  %Rn = tensor.extract_slice %R[128, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %bWn = tensor.extract_slice %bW[128] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %bRn = tensor.extract_slice %bR[128] [128] [1] : tensor<256xf32> to tensor<128xf32>

  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0 : tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wf, %Rf : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWf, %bRf : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %f_h = arith.mulf %f, %h : tensor<?x128xf32>
    %n = lstm.gate tanh (%xt, %f_h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wn, %Rn : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWn, %bRn : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    // h_new = (1 - f) * h + f * n
    %f_c = lstm.one_minus %f : tensor<?x128xf32>
    %fc_h = arith.mulf %f_c, %h : tensor<?x128xf32>
    %f_n = arith.mulf %f, %n : tensor<?x128xf32>
    %h_new = arith.addf %fc_h, %f_n : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new : tensor<?x128xf32>)
  }
  return %y, %hT : tensor<?x?x128xf32>, tensor<?x128xf32>
}
