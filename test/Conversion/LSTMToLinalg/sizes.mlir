// What the lowering rejects before it starts, naming it. A tensor whose
// static size in bytes does not fit in 63 bits is an error
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

// -----

// A constant tensor.dim index out of range: upstream's folders of the
// memref.dim it becomes read the shape at that index (the fuzzer of
// test/Fuzz crashed --lstm-to-nvvm with an index of -1).
func.func @dim_out_of_range(%h0: tensor<2x?x128xf32>) -> index {
  %c = arith.constant -1 : index
  // expected-error @+1 {{'tensor.dim' op index -1 is not a dimension of 'tensor<2x?x128xf32>' (0 to 2)}}
  %d = tensor.dim %h0, %c : tensor<2x?x128xf32>
  return %d : index
}

// -----

// An output sequence of dynamic features cannot be allocated before the
// first step: an error naming it (the pattern used to create its checks
// before declining, and the pass failed with no message; found by the fuzzer
// of test/Fuzz).
func.func @dynamic_output_features(%x: tensor<?x?x64xf32>, %h0: tensor<?x?xf32>, %W: tensor<?x64xf32>, %R: tensor<?x?xf32>) -> tensor<?x?x?xf32> {
  // expected-error @+1 {{'lstm.layer' op output #0 of type 'tensor<?x?x?xf32>' cannot be lowered: the output sequence needs a static feature extent (N of [T, B, N])}}
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x64xf32>) init(%h0 : tensor<?x?xf32>) -> (tensor<?x?x?xf32>), (tensor<?x?xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x?xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x?xf32>) weights(%W, %R : tensor<?x64xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    lstm.yield out(%hn : tensor<?x?xf32>) state(%hn : tensor<?x?xf32>)
  }
  return %y : tensor<?x?x?xf32>
}
