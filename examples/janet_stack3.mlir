// janet_stack3.mlir: a 3-layer JANET (van der Westhuizen & Lasenby 2018, "The unreasonable
// effectiveness of the forget gate"), the LSTM with only a forget gate
//
// Each layer:
//     s_t  = W_f x_t + bW_f + R_f h_{t-1} + bR_f
//     c~_t = tanh(W_c x_t + bW_c + R_c h_{t-1} + bR_c)
//     c_t  = sigmoid(s_t) * c_{t-1} + (1 - sigmoid(s_t - beta)) * c~_t,   beta = 1
//     h_t  = c_t
// layer 0 reads x, layer k > 0 reads the output sequence h of layer k-1. The state is
// h (= c). Every layer's cell reads the one constant -beta, %nbeta = dense<-1.0>, as an
// extra bias of the shifted forget gate: lstm-wavefront stacks it, as it stacks the
// weights, into a [3, 128] operand (a constant the GPU kernels must find in device memory).
//
// W<k> [256, K], R<k> [256, 128], bW<k>, bR<k> [256] stack the gates in the order f, c
// (K = 64 for k = 0, 128 otherwise). h0 and hT are indexed by layer; y is the output
// sequence of the last layer.
//
// Arguments:
//   %x    tensor<?x?x64xf32>
//   %h0   tensor<3x?x128xf32>
//   %W0   tensor<256x64xf32>
//   %R0   tensor<256x128xf32>
//   %bW0  tensor<256xf32>
//   %bR0  tensor<256xf32>
//   %W1   tensor<256x128xf32>
//   %R1   tensor<256x128xf32>
//   %bW1  tensor<256xf32>
//   %bR1  tensor<256xf32>
//   %W2   tensor<256x128xf32>
//   %R2   tensor<256x128xf32>
//   %bW2  tensor<256xf32>
//   %bR2  tensor<256xf32>
// Results:
//   y     tensor<?x?x128xf32>
//   hT    tensor<3x?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<3x?x128xf32>,
    %W0: tensor<256x64xf32>,
    %R0: tensor<256x128xf32>,
    %bW0: tensor<256xf32>,
    %bR0: tensor<256xf32>,
    %W1: tensor<256x128xf32>,
    %R1: tensor<256x128xf32>,
    %bW1: tensor<256xf32>,
    %bR1: tensor<256xf32>,
    %W2: tensor<256x128xf32>,
    %R2: tensor<256x128xf32>,
    %bW2: tensor<256xf32>,
    %bR2: tensor<256xf32>)
    -> (tensor<?x?x128xf32>, tensor<3x?x128xf32>) {
  // -beta, the shift of the forget gate that gates the candidate.
  %nbeta = arith.constant dense<-1.0> : tensor<128xf32>
  %c1 = arith.constant 1 : index
  %B = tensor.dim %h0, %c1 : tensor<3x?x128xf32>

  // ----- Layer 0 ------------------------------------------------------------
  %h0_l0 = tensor.extract_slice %h0[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>
  // Per-gate blocks of the stacked parameters (gate order f, c).
  %Wf0 = tensor.extract_slice %W0[0, 0] [128, 64] [1, 1] : tensor<256x64xf32> to tensor<128x64xf32>
  %Rf0 = tensor.extract_slice %R0[0, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %bWf0 = tensor.extract_slice %bW0[0] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %bRf0 = tensor.extract_slice %bR0[0] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %Wc0 = tensor.extract_slice %W0[128, 0] [128, 64] [1, 1] : tensor<256x64xf32> to tensor<128x64xf32>
  %Rc0 = tensor.extract_slice %R0[128, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %bWc0 = tensor.extract_slice %bW0[128] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %bRc0 = tensor.extract_slice %bR0[128] [128] [1] : tensor<256xf32> to tensor<128xf32>

  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0_l0 : tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wf0, %Rf0 : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWf0, %bRf0 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    // sigmoid(s_t - beta): the same sum with -beta as a third bias.
    %f_shift = lstm.gate sigmoid (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wf0, %Rf0 : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWf0, %bRf0, %nbeta : tensor<128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %i = lstm.one_minus %f_shift : tensor<?x128xf32>
    %cand = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wc0, %Rc0 : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWc0, %bRc0 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %fc = arith.mulf %f, %h : tensor<?x128xf32>
    %ic = arith.mulf %i, %cand : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ic : tensor<?x128xf32>
    lstm.yield out(%c_new : tensor<?x128xf32>) state(%c_new : tensor<?x128xf32>)
  }

  // ----- Layer 1 ------------------------------------------------------------
  %h0_l1 = tensor.extract_slice %h0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>
  // Per-gate blocks of the stacked parameters (gate order f, c).
  %Wf1 = tensor.extract_slice %W1[0, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %Rf1 = tensor.extract_slice %R1[0, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %bWf1 = tensor.extract_slice %bW1[0] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %bRf1 = tensor.extract_slice %bR1[0] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %Wc1 = tensor.extract_slice %W1[128, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %Rc1 = tensor.extract_slice %R1[128, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %bWc1 = tensor.extract_slice %bW1[128] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %bRc1 = tensor.extract_slice %bR1[128] [128] [1] : tensor<256xf32> to tensor<128xf32>

  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x128xf32>)
      init(%h0_l1 : tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x128xf32>, %h: tensor<?x128xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wf1, %Rf1 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWf1, %bRf1 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    // sigmoid(s_t - beta): the same sum with -beta as a third bias.
    %f_shift = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wf1, %Rf1 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWf1, %bRf1, %nbeta : tensor<128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %i = lstm.one_minus %f_shift : tensor<?x128xf32>
    %cand = lstm.gate tanh (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wc1, %Rc1 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWc1, %bRc1 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %fc = arith.mulf %f, %h : tensor<?x128xf32>
    %ic = arith.mulf %i, %cand : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ic : tensor<?x128xf32>
    lstm.yield out(%c_new : tensor<?x128xf32>) state(%c_new : tensor<?x128xf32>)
  }

  // ----- Layer 2 ------------------------------------------------------------
  %h0_l2 = tensor.extract_slice %h0[2, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<3x?x128xf32> to tensor<?x128xf32>
  // Per-gate blocks of the stacked parameters (gate order f, c).
  %Wf2 = tensor.extract_slice %W2[0, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %Rf2 = tensor.extract_slice %R2[0, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %bWf2 = tensor.extract_slice %bW2[0] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %bRf2 = tensor.extract_slice %bR2[0] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %Wc2 = tensor.extract_slice %W2[128, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %Rc2 = tensor.extract_slice %R2[128, 0] [128, 128] [1, 1] : tensor<256x128xf32> to tensor<128x128xf32>
  %bWc2 = tensor.extract_slice %bW2[128] [128] [1] : tensor<256xf32> to tensor<128xf32>
  %bRc2 = tensor.extract_slice %bR2[128] [128] [1] : tensor<256xf32> to tensor<128xf32>

  %y2, %hT2 = lstm.layer forward ins(%y1 : tensor<?x?x128xf32>)
      init(%h0_l2 : tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x128xf32>, %h: tensor<?x128xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wf2, %Rf2 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWf2, %bRf2 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    // sigmoid(s_t - beta): the same sum with -beta as a third bias.
    %f_shift = lstm.gate sigmoid (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wf2, %Rf2 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWf2, %bRf2, %nbeta : tensor<128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %i = lstm.one_minus %f_shift : tensor<?x128xf32>
    %cand = lstm.gate tanh (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wc2, %Rc2 : tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWc2, %bRc2 : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %fc = arith.mulf %f, %h : tensor<?x128xf32>
    %ic = arith.mulf %i, %cand : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ic : tensor<?x128xf32>
    lstm.yield out(%c_new : tensor<?x128xf32>) state(%c_new : tensor<?x128xf32>)
  }

  // Final states stacked as [3, B, 128].
  %hT_empty = tensor.empty(%B) : tensor<3x?x128xf32>
  %hT_acc0 = tensor.insert_slice %hT0 into %hT_empty[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  %hT_acc1 = tensor.insert_slice %hT1 into %hT_acc0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  %hT = tensor.insert_slice %hT2 into %hT_acc1[2, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<3x?x128xf32>
  return %y2, %hT : tensor<?x?x128xf32>, tensor<3x?x128xf32>
}
