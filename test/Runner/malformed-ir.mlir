// Malformed IR and invalid modules are reported with their location.
// RUN: not lstm-run %s --random-inputs 2>&1 | FileCheck %s

func.func @forward(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %W: tensor<8x5xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    // CHECK: malformed-ir.mlir:[[@LINE+1]]:11: error: 'lstm.gate' op weight #0 of type 'tensor<8x5xf32>' must have 4 columns to multiply input #0 of type 'tensor<?x4xf32>'
    %hn = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%W : tensor<8x5xf32>) -> tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}
