// bidirectional.mlir: one bidirectional PyTorch LSTM layer, nn.LSTM(64, 128, bidirectional=True)
//
// Both directions are the nn.LSTM cell (see lstm.mlir) with their own parameters:
//     forward: t = 0 .. T-1 from h0[0], c0[0];   reverse: t = T-1 .. 0 from h0[1], c0[1]
//     y[t] = [h_fw_t | h_bw_t]   (features 0..127 forward, 128..255 reverse)
//
// Parameters as in nn.LSTM(bidirectional=True): W, R, bW, bR = weight_ih_l0,
// weight_hh_l0, bias_ih_l0, bias_hh_l0 and W_rev, R_rev, bW_rev, bR_rev = the same
// with the _reverse suffix; gate order i, f, g, o. Index 0 of h0, c0, hT, cT is the
// forward direction, index 1 the reverse one (hT[1] is the reverse state after t = 0).
//
// Arguments:
//   %x       tensor<?x?x64xf32>
//   %h0      tensor<2x?x128xf32>
//   %c0      tensor<2x?x128xf32>
//   %W       tensor<512x64xf32>
//   %R       tensor<512x128xf32>
//   %bW      tensor<512xf32>
//   %bR      tensor<512xf32>
//   %W_rev   tensor<512x64xf32>
//   %R_rev   tensor<512x128xf32>
//   %bW_rev  tensor<512xf32>
//   %bR_rev  tensor<512xf32>
// Results:
//   y        tensor<?x?x256xf32>
//   hT       tensor<2x?x128xf32>
//   cT       tensor<2x?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<2x?x128xf32>,
    %c0: tensor<2x?x128xf32>,
    %W: tensor<512x64xf32>,
    %R: tensor<512x128xf32>,
    %bW: tensor<512xf32>,
    %bR: tensor<512xf32>,
    %W_rev: tensor<512x64xf32>,
    %R_rev: tensor<512x128xf32>,
    %bW_rev: tensor<512xf32>,
    %bR_rev: tensor<512xf32>)
    -> (tensor<?x?x256xf32>, tensor<2x?x128xf32>, tensor<2x?x128xf32>) {
  %c1 = arith.constant 1 : index
  %B = tensor.dim %h0, %c1 : tensor<2x?x128xf32>
  %h0_fw = tensor.extract_slice %h0[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<2x?x128xf32> to tensor<?x128xf32>
  %c0_fw = tensor.extract_slice %c0[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<2x?x128xf32> to tensor<?x128xf32>
  %h0_bw = tensor.extract_slice %h0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<2x?x128xf32> to tensor<?x128xf32>
  %c0_bw = tensor.extract_slice %c0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<2x?x128xf32> to tensor<?x128xf32>

  // ----- Forward direction --------------------------------------------------
  // Per-gate blocks of the stacked parameters (gate order i, f, g, o).
  %Wi_fw = tensor.extract_slice %W[0, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ri_fw = tensor.extract_slice %R[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWi_fw = tensor.extract_slice %bW[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRi_fw = tensor.extract_slice %bR[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wf_fw = tensor.extract_slice %W[128, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rf_fw = tensor.extract_slice %R[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWf_fw = tensor.extract_slice %bW[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRf_fw = tensor.extract_slice %bR[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wg_fw = tensor.extract_slice %W[256, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rg_fw = tensor.extract_slice %R[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWg_fw = tensor.extract_slice %bW[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRg_fw = tensor.extract_slice %bR[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wo_fw = tensor.extract_slice %W[384, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ro_fw = tensor.extract_slice %R[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWo_fw = tensor.extract_slice %bW[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRo_fw = tensor.extract_slice %bR[384] [128] [1] : tensor<512xf32> to tensor<128xf32>

  %y_fw, %hT_fw, %cT_fw = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0_fw, %c0_fw : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wi_fw, %Ri_fw : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWi_fw, %bRi_fw : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wf_fw, %Rf_fw : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWf_fw, %bRf_fw : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wg_fw, %Rg_fw : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWg_fw, %bRg_fw : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %ig = arith.mulf %i, %g : tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x128xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wo_fw, %Ro_fw : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWo_fw, %bRo_fw : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %tanh_c = math.tanh %c_new : tensor<?x128xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }

  // ----- Reverse direction: t = T-1 .. 0 ------------------------------------
  %Wi_bw = tensor.extract_slice %W_rev[0, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ri_bw = tensor.extract_slice %R_rev[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWi_bw = tensor.extract_slice %bW_rev[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRi_bw = tensor.extract_slice %bR_rev[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wf_bw = tensor.extract_slice %W_rev[128, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rf_bw = tensor.extract_slice %R_rev[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWf_bw = tensor.extract_slice %bW_rev[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRf_bw = tensor.extract_slice %bR_rev[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wg_bw = tensor.extract_slice %W_rev[256, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rg_bw = tensor.extract_slice %R_rev[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWg_bw = tensor.extract_slice %bW_rev[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRg_bw = tensor.extract_slice %bR_rev[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wo_bw = tensor.extract_slice %W_rev[384, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ro_bw = tensor.extract_slice %R_rev[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWo_bw = tensor.extract_slice %bW_rev[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRo_bw = tensor.extract_slice %bR_rev[384] [128] [1] : tensor<512xf32> to tensor<128xf32>

  %y_bw, %hT_bw, %cT_bw = lstm.layer reverse ins(%x : tensor<?x?x64xf32>)
      init(%h0_bw, %c0_bw : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wi_bw, %Ri_bw : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWi_bw, %bRi_bw : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wf_bw, %Rf_bw : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWf_bw, %bRf_bw : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wg_bw, %Rg_bw : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWg_bw, %bRg_bw : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %ig = arith.mulf %i, %g : tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x128xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wo_bw, %Ro_bw : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWo_bw, %bRo_bw : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %tanh_c = math.tanh %c_new : tensor<?x128xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }

  // y = [y_fw | y_bw] on the feature axis; final states [2, B, 128].
  %y = tensor.concat dim(2) %y_fw, %y_bw : (tensor<?x?x128xf32>, tensor<?x?x128xf32>) -> tensor<?x?x256xf32>
  %hT_empty = tensor.empty(%B) : tensor<2x?x128xf32>
  %hT_acc0 = tensor.insert_slice %hT_fw into %hT_empty[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<2x?x128xf32>
  %hT = tensor.insert_slice %hT_bw into %hT_acc0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<2x?x128xf32>
  %cT_empty = tensor.empty(%B) : tensor<2x?x128xf32>
  %cT_acc0 = tensor.insert_slice %cT_fw into %cT_empty[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<2x?x128xf32>
  %cT = tensor.insert_slice %cT_bw into %cT_acc0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<2x?x128xf32>
  return %y, %hT, %cT : tensor<?x?x256xf32>, tensor<2x?x128xf32>, tensor<2x?x128xf32>
}
