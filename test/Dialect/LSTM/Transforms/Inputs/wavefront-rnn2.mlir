// wavefront-rnn2.mlir: a 2-layer tanh RNN whose input size equals the hidden size (16)
//
// Layer k reads layer k-1's output sequence; the results are the last
// layer's outputs, then every layer's final states.

func.func @forward(%x: tensor<?x?x16xf32>,
    %h0_0: tensor<?x16xf32>,
    %h0_1: tensor<?x16xf32>,
    %W0: tensor<16x16xf32>,
    %R0: tensor<16x16xf32>,
    %b0: tensor<16xf32>,
    %W1: tensor<16x16xf32>,
    %R1: tensor<16x16xf32>,
    %b1: tensor<16xf32>)
    -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x16xf32>)
      init(%h0_0 : tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%W0, %R0 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%b0 : tensor<16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x16xf32>)
      init(%h0_1 : tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%W1, %R1 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%b1 : tensor<16xf32>) -> tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn : tensor<?x16xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}
