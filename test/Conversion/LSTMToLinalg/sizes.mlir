// A tensor whose static size in bytes does not fit in 63 bits is an error
// naming it, not offsets that wrap around in the lowered code (issue 11: a
// weight of 384 x (2^63 - 1) gave "expected offsets to be non-negative" on
// IR the user never wrote).
// RUN: lstm-opt %s -split-input-file -convert-lstm-to-linalg -verify-diagnostics

// expected-error @+1 {{argument #0 of type 'tensor<384x9223372036854775807xf32>' is larger than 2^63 bytes, more than any buffer can be}}
func.func @huge_argument(%W: tensor<384x9223372036854775807xf32>, %x: tensor<?x?x64xf32>, %h0: tensor<?x128xf32>) -> tensor<?x128xf32> {
  %Wi = tensor.extract_slice %W[0, 0] [128, 64] [1, 1] : tensor<384x9223372036854775807xf32> to tensor<128x64xf32>
  %hT = lstm.layer forward ins(%x : tensor<?x?x64xf32>) init(%h0 : tensor<?x128xf32>) -> (), (tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>):
    %hn = lstm.gate tanh (%xt : tensor<?x64xf32>) weights(%Wi : tensor<128x64xf32>) -> tensor<?x128xf32>
    lstm.yield state(%hn : tensor<?x128xf32>)
  }
  return %hT : tensor<?x128xf32>
}

// -----

func.func @huge_result(%n: index) -> tensor<?x4611686018427387904xf32> {
  // expected-error @+1 {{result #0 of type 'tensor<?x4611686018427387904xf32>' is larger than 2^63 bytes}}
  %e = tensor.empty(%n) : tensor<?x4611686018427387904xf32>
  return %e : tensor<?x4611686018427387904xf32>
}
