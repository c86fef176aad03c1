// greff_nig.mlir: Greff et al. variant NIG, no input gate (i_t = 1)
//
// z_t = tanh   (W_z x_t + R_z h_{t-1} + bW_z + bR_z)
// f_t = sigmoid(W_f x_t + R_f h_{t-1} + p_f * c_{t-1} + bW_f + bR_f)
// c_t = z_t + c_{t-1} * f_t
// o_t = sigmoid(W_o x_t + R_o h_{t-1} + p_o * c_t + bW_o + bR_o)   (peeps at the NEW c_t)
// h_t = tanh(c_t) * o_t
//
// The vanilla cell of peephole.mlir with one change. W, R, bW, bR stack only the
// gates that have weights, in the order f, z, o; P holds the peephole rows p_f, p_o.
// y[t] = h_t.
//
// Arguments:
//   %x   tensor<?x?x64xf32>
//   %h0  tensor<?x128xf32>
//   %c0  tensor<?x128xf32>
//   %W   tensor<384x64xf32>
//   %R   tensor<384x128xf32>
//   %bW  tensor<384xf32>
//   %bR  tensor<384xf32>
//   %P   tensor<2x128xf32>
// Results:
//   y    tensor<?x?x128xf32>
//   hT   tensor<?x128xf32>
//   cT   tensor<?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<?x128xf32>,
    %c0: tensor<?x128xf32>,
    %W: tensor<384x64xf32>,
    %R: tensor<384x128xf32>,
    %bW: tensor<384xf32>,
    %bR: tensor<384xf32>,
    %P: tensor<2x128xf32>)
    -> (tensor<?x?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>) {
  // Per-gate blocks of the stacked parameters (gate order f, z, o).
  %Wf = tensor.extract_slice %W[0, 0] [128, 64] [1, 1] : tensor<384x64xf32> to tensor<128x64xf32>
  %Rf = tensor.extract_slice %R[0, 0] [128, 128] [1, 1] : tensor<384x128xf32> to tensor<128x128xf32>
  %bWf = tensor.extract_slice %bW[0] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %bRf = tensor.extract_slice %bR[0] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %Wz = tensor.extract_slice %W[128, 0] [128, 64] [1, 1] : tensor<384x64xf32> to tensor<128x64xf32>
  %Rz = tensor.extract_slice %R[128, 0] [128, 128] [1, 1] : tensor<384x128xf32> to tensor<128x128xf32>
  %bWz = tensor.extract_slice %bW[128] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %bRz = tensor.extract_slice %bR[128] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %Wo = tensor.extract_slice %W[256, 0] [128, 64] [1, 1] : tensor<384x64xf32> to tensor<128x64xf32>
  %Ro = tensor.extract_slice %R[256, 0] [128, 128] [1, 1] : tensor<384x128xf32> to tensor<128x128xf32>
  %bWo = tensor.extract_slice %bW[256] [128] [1] : tensor<384xf32> to tensor<128xf32>
  %bRo = tensor.extract_slice %bR[256] [128] [1] : tensor<384xf32> to tensor<128xf32>
  // Peephole rows of P (order f, o).
  %pf = tensor.extract_slice %P[0, 0] [1, 128] [1, 1] : tensor<2x128xf32> to tensor<128xf32>
  %po = tensor.extract_slice %P[1, 0] [1, 128] [1, 1] : tensor<2x128xf32> to tensor<128xf32>

  %y, %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0, %c0 : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wf, %Rf : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWf, %bRf : tensor<128xf32>, tensor<128xf32>)
        peephole(%pf, %c : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %z = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wz, %Rz : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWz, %bRz : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %c_new = arith.addf %fc, %z : tensor<?x128xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wo, %Ro : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWo, %bRo : tensor<128xf32>, tensor<128xf32>)
        peephole(%po, %c_new : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %tanh_c = math.tanh %c_new : tensor<?x128xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>
}
