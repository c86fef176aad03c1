// lstm.mlir: the PyTorch / cuDNN LSTM (nn.LSTM(64, 128), one layer)
//
// i_t = sigmoid(W_i x_t + bW_i + R_i h_{t-1} + bR_i)
// f_t = sigmoid(W_f x_t + bW_f + R_f h_{t-1} + bR_f)
// g_t = tanh   (W_g x_t + bW_g + R_g h_{t-1} + bR_g)
// o_t = sigmoid(W_o x_t + bW_o + R_o h_{t-1} + bR_o)
// c_t = f_t * c_{t-1} + i_t * g_t
// h_t = o_t * tanh(c_t)
//
// Parameters as in nn.LSTM: W = weight_ih_l0, R = weight_hh_l0, bW = bias_ih_l0,
// bR = bias_hh_l0, gates stacked in the order i, f, g, o; x is [T, B, 64]
// (batch_first=False). y[t] = h_t.
//
// Arguments:
//   %x   tensor<?x?x64xf32>
//   %h0  tensor<?x128xf32>
//   %c0  tensor<?x128xf32>
//   %W   tensor<512x64xf32>
//   %R   tensor<512x128xf32>
//   %bW  tensor<512xf32>
//   %bR  tensor<512xf32>
// Results:
//   y    tensor<?x?x128xf32>
//   hT   tensor<?x128xf32>
//   cT   tensor<?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<?x128xf32>,
    %c0: tensor<?x128xf32>,
    %W: tensor<512x64xf32>,
    %R: tensor<512x128xf32>,
    %bW: tensor<512xf32>,
    %bR: tensor<512xf32>)
    -> (tensor<?x?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>) {
  // Per-gate blocks of the stacked parameters (gate order i, f, g, o).
  %Wi = tensor.extract_slice %W[0, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ri = tensor.extract_slice %R[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWi = tensor.extract_slice %bW[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRi = tensor.extract_slice %bR[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wf = tensor.extract_slice %W[128, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rf = tensor.extract_slice %R[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWf = tensor.extract_slice %bW[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRf = tensor.extract_slice %bR[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wg = tensor.extract_slice %W[256, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rg = tensor.extract_slice %R[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWg = tensor.extract_slice %bW[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRg = tensor.extract_slice %bR[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wo = tensor.extract_slice %W[384, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ro = tensor.extract_slice %R[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWo = tensor.extract_slice %bW[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRo = tensor.extract_slice %bR[384] [128] [1] : tensor<512xf32> to tensor<128xf32>

  %y, %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0, %c0 : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wi, %Ri : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWi, %bRi : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wf, %Rf : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWf, %bRf : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wg, %Rg : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWg, %bRg : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %ig = arith.mulf %i, %g : tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x128xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wo, %Ro : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWo, %bRo : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %tanh_c = math.tanh %c_new : tensor<?x128xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>
}
