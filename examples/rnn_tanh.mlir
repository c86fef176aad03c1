// rnn_tanh.mlir: the Elman RNN, nn.RNN(64, 128, nonlinearity="tanh")
//
// h_t = tanh(W x_t + bW + R h_{t-1} + bR)
//
// W = weight_ih_l0, R = weight_hh_l0, bW = bias_ih_l0, bR = bias_hh_l0. y[t] = h_t.
//
// Arguments:
//   %x   tensor<?x?x64xf32>
//   %h0  tensor<?x128xf32>
//   %W   tensor<128x64xf32>
//   %R   tensor<128x128xf32>
//   %bW  tensor<128xf32>
//   %bR  tensor<128xf32>
// Results:
//   y    tensor<?x?x128xf32>
//   hT   tensor<?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<?x128xf32>,
    %W: tensor<128x64xf32>,
    %R: tensor<128x128xf32>,
    %bW: tensor<128xf32>,
    %bR: tensor<128xf32>)
    -> (tensor<?x?x128xf32>, tensor<?x128xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0 : tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>):
    %h_new = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%W, %R : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bW, %bR : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new : tensor<?x128xf32>)
  }
  return %y, %hT : tensor<?x?x128xf32>, tensor<?x128xf32>
}
