// A tanh RNN with dynamic T and B, used by the runner tests.
func.func @forward(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                   %W: tensor<8x4xf32>, %R: tensor<8x8xf32>,
                   %b: tensor<8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x8xf32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%b : tensor<8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}
