// stack3.mlir: a 3-layer PyTorch LSTM, nn.LSTM(64, 128, num_layers=3)
//
// Each layer is the nn.LSTM cell (see lstm.mlir):
//     i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (W_* x_t + bW_* + R_* h_{t-1} + bR_*)
//     c_t = f_t * c_{t-1} + i_t * g_t,   h_t = o_t * tanh(c_t)
// layer 0 reads x, layer k > 0 reads the output sequence h of layer k-1.
//
// Parameters as in nn.LSTM(num_layers=3): W<k> = weight_ih_l<k> ([512, 64] for k = 0,
// [512, 128] otherwise), R<k> = weight_hh_l<k>, bW<k> = bias_ih_l<k>,
// bR<k> = bias_hh_l<k>, gate order i, f, g, o. h0, c0, hT, cT are indexed by layer.
// y is the output sequence of the last layer.
//
// Arguments:
//   %x    tensor<?x?x64xf32>
//   %h0   tensor<3x?x128xf32>
//   %c0   tensor<3x?x128xf32>
//   %W0   tensor<512x64xf32>
//   %R0   tensor<512x128xf32>
//   %bW0  tensor<512xf32>
//   %bR0  tensor<512xf32>
//   %W1   tensor<512x128xf32>
//   %R1   tensor<512x128xf32>
//   %bW1  tensor<512xf32>
//   %bR1  tensor<512xf32>
//   %W2   tensor<512x128xf32>
//   %R2   tensor<512x128xf32>
//   %bW2  tensor<512xf32>
//   %bR2  tensor<512xf32>
// Results:
//   y     tensor<?x?x128xf32>
//   hT    tensor<3x?x128xf32>
//   cT    tensor<3x?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<3x?x128xf32>,
    %c0: tensor<3x?x128xf32>,
    %W0: tensor<512x64xf32>,
    %R0: tensor<512x128xf32>,
    %bW0: tensor<512xf32>,
    %bR0: tensor<512xf32>,
    %W1: tensor<512x128xf32>,
    %R1: tensor<512x128xf32>,
    %bW1: tensor<512xf32>,
    %bR1: tensor<512xf32>,
    %W2: tensor<512x128xf32>,
    %R2: tensor<512x128xf32>,
    %bW2: tensor<512xf32>,
    %bR2: tensor<512xf32>)
    -> (tensor<?x?x128xf32>, tensor<3x?x128xf32>, tensor<3x?x128xf32>) {
  %c1 = arith.constant 1 : index
  %B = tensor.dim %h0, %c1 : tensor<3x?x128xf32>
  // Initial states of each layer.
  %h0_l0 = tensor.extract_slice %h0[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>
  %c0_l0 = tensor.extract_slice %c0[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>
  %h0_l1 = tensor.extract_slice %h0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>
  %c0_l1 = tensor.extract_slice %c0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>
  %h0_l2 = tensor.extract_slice %h0[2, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>
  %c0_l2 = tensor.extract_slice %c0[2, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>

  // ----- Layer 0 ------------------------------------------------------------
  // Per-gate blocks of the stacked parameters (gate order i, f, g, o).
  %Wi0 = tensor.extract_slice %W0[0, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ri0 = tensor.extract_slice %R0[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWi0 = tensor.extract_slice %bW0[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRi0 = tensor.extract_slice %bR0[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wf0 = tensor.extract_slice %W0[128, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rf0 = tensor.extract_slice %R0[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWf0 = tensor.extract_slice %bW0[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRf0 = tensor.extract_slice %bR0[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wg0 = tensor.extract_slice %W0[256, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rg0 = tensor.extract_slice %R0[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWg0 = tensor.extract_slice %bW0[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRg0 = tensor.extract_slice %bR0[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wo0 = tensor.extract_slice %W0[384, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ro0 = tensor.extract_slice %R0[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWo0 = tensor.extract_slice %bW0[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRo0 = tensor.extract_slice %bR0[384] [128] [1] : tensor<512xf32> to tensor<128xf32>

  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0_l0, %c0_l0 : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wi0, %Ri0 : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWi0, %bRi0 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wf0, %Rf0 : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWf0, %bRf0 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wg0, %Rg0 : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWg0, %bRg0 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %ig = arith.mulf %i, %g : tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x128xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wo0, %Ro0 : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWo0, %bRo0 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %tanh_c = math.tanh %c_new : tensor<?x128xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }

  // ----- Layer 1 ------------------------------------------------------------
  // Per-gate blocks of the stacked parameters (gate order i, f, g, o).
  %Wi1 = tensor.extract_slice %W1[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %Ri1 = tensor.extract_slice %R1[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWi1 = tensor.extract_slice %bW1[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRi1 = tensor.extract_slice %bR1[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wf1 = tensor.extract_slice %W1[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %Rf1 = tensor.extract_slice %R1[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWf1 = tensor.extract_slice %bW1[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRf1 = tensor.extract_slice %bR1[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wg1 = tensor.extract_slice %W1[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %Rg1 = tensor.extract_slice %R1[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWg1 = tensor.extract_slice %bW1[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRg1 = tensor.extract_slice %bR1[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wo1 = tensor.extract_slice %W1[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %Ro1 = tensor.extract_slice %R1[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWo1 = tensor.extract_slice %bW1[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRo1 = tensor.extract_slice %bR1[384] [128] [1] : tensor<512xf32> to tensor<128xf32>

  %y1, %hT1, %cT1 = lstm.layer forward ins(%y0 : tensor<?x?x128xf32>)
      init(%h0_l1, %c0_l1 : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x128xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wi1, %Ri1 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWi1, %bRi1 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wf1, %Rf1 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWf1, %bRf1 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wg1, %Rg1 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWg1, %bRg1 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %ig = arith.mulf %i, %g : tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x128xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wo1, %Ro1 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWo1, %bRo1 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %tanh_c = math.tanh %c_new : tensor<?x128xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }

  // ----- Layer 2 ------------------------------------------------------------
  // Per-gate blocks of the stacked parameters (gate order i, f, g, o).
  %Wi2 = tensor.extract_slice %W2[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %Ri2 = tensor.extract_slice %R2[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWi2 = tensor.extract_slice %bW2[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRi2 = tensor.extract_slice %bR2[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wf2 = tensor.extract_slice %W2[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %Rf2 = tensor.extract_slice %R2[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWf2 = tensor.extract_slice %bW2[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRf2 = tensor.extract_slice %bR2[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wg2 = tensor.extract_slice %W2[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %Rg2 = tensor.extract_slice %R2[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWg2 = tensor.extract_slice %bW2[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRg2 = tensor.extract_slice %bR2[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wo2 = tensor.extract_slice %W2[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %Ro2 = tensor.extract_slice %R2[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWo2 = tensor.extract_slice %bW2[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRo2 = tensor.extract_slice %bR2[384] [128] [1] : tensor<512xf32> to tensor<128xf32>

  %y2, %hT2, %cT2 = lstm.layer forward ins(%y1 : tensor<?x?x128xf32>)
      init(%h0_l2, %c0_l2 : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x128xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wi2, %Ri2 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWi2, %bRi2 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wf2, %Rf2 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWf2, %bRf2 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wg2, %Rg2 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWg2, %bRg2 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %ig = arith.mulf %i, %g : tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x128xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wo2, %Ro2 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWo2, %bRo2 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %tanh_c = math.tanh %c_new : tensor<?x128xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }

  // Final states stacked as [3, B, 128].
  %hT_empty = tensor.empty(%B) : tensor<3x?x128xf32>
  %hT_acc0 = tensor.insert_slice %hT0 into %hT_empty[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  %hT_acc1 = tensor.insert_slice %hT1 into %hT_acc0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  %hT = tensor.insert_slice %hT2 into %hT_acc1[2, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  %cT_empty = tensor.empty(%B) : tensor<3x?x128xf32>
  %cT_acc0 = tensor.insert_slice %cT0 into %cT_empty[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  %cT_acc1 = tensor.insert_slice %cT1 into %cT_acc0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  %cT = tensor.insert_slice %cT2 into %cT_acc1[2, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  return %y2, %hT, %cT : tensor<?x?x128xf32>, tensor<3x?x128xf32>, tensor<3x?x128xf32>
}
