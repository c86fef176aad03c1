// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Two tanh RNN layers (hidden 4) that both read a second sequence %s beside
// their first input (x for layer 0, layer 0's output for layer 1): a chain
// whose layers have another input, which lstm-wavefront gathers a diagonal
// at a time.
func.func @forward(%x: tensor<?x?x4xf32>, %s: tensor<?x?x4xf32>,
                   %h0: tensor<?x4xf32>, %h1: tensor<?x4xf32>,
                   %W0: tensor<4x4xf32>, %V0: tensor<4x4xf32>, %R0: tensor<4x4xf32>,
                   %W1: tensor<4x4xf32>, %V1: tensor<4x4xf32>, %R1: tensor<4x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) {
  %y0, %f0 = lstm.layer forward ins(%x, %s : tensor<?x?x4xf32>, tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %st: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %st, %h : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W0, %V0, %R0 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %f1 = lstm.layer forward ins(%y0, %s : tensor<?x?x4xf32>, tensor<?x?x4xf32>) init(%h1 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %st: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %st, %h : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W1, %V1, %R1 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1, %f0, %f1 : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>
}
