// A layer with a static sequence length or batch of 0 runs no step: every
// pass first replaces it by its empty outputs and its initial states (after
// the batch checks of its lowering), so that none of them slices an extent
// of 0 or collapses a static 0 with a dynamic extent, IR that upstream's
// verifiers reject (issue 11: internal verifier errors after the module
// verified).
// RUN: lstm-opt %s -split-input-file --lstm-combine-gate-gemms -verify-each | FileCheck %s
// RUN: lstm-opt %s -split-input-file --lstm-hoist-input-projection -verify-each | FileCheck %s
// RUN: lstm-opt %s -split-input-file --lstm-fuse-elementwise -verify-each | FileCheck %s
// RUN: lstm-opt %s -split-input-file --lstm-wavefront -verify-each | FileCheck %s
// RUN: lstm-opt %s -split-input-file --lstm-optimize -verify-each | FileCheck %s --check-prefix=OPT
// RUN: lstm-opt %s -split-input-file --lstm-to-cpu -verify-each -o /dev/null
// RUN: lstm-opt %s -split-input-file --lstm-optimize --lstm-to-cpu -verify-each -o /dev/null

// CHECK-LABEL: func.func @no_steps
// CHECK-NOT: lstm.layer {{forward|reverse}}
// CHECK: cf.assert %{{.*}}, "lstm.layer: initial state #0 has a different batch size than the input
// CHECK: %[[B:.*]] = tensor.dim %arg0, %c1
// CHECK: %[[Y:.*]] = tensor.empty(%[[B]]) : tensor<0x?x8xf32>
// CHECK: return %[[Y]], %arg1
// OPT-LABEL: func.func @no_steps
// OPT-NOT: lstm.layer {{forward|reverse}}
// OPT: return %{{.*}}, %arg1
func.func @no_steps(%x: tensor<0x?x4xf32>, %h0: tensor<?x8xf32>, %W: tensor<16x4xf32>, %R: tensor<16x8xf32>)
    -> (tensor<0x?x8xf32>, tensor<?x8xf32>) {
  %Wa = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wb = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Ra = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rb = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %y, %hT = lstm.layer forward ins(%x : tensor<0x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<0x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>) weights(%Wa, %Ra : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %b = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>) weights(%Wb, %Rb : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %b : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<0x?x8xf32>, tensor<?x8xf32>
}

// -----

// A batch of 0: the initial state (of a dynamic batch) is checked against
// the input's.
// CHECK-LABEL: func.func @empty_batch
// CHECK-NOT: lstm.layer {{forward|reverse}}
// CHECK: cf.assert %{{.*}}, "lstm.layer: initial state #0 has a different batch size than the input
// CHECK: %[[T:.*]] = tensor.dim %arg0, %c0
// CHECK: %[[Y:.*]] = tensor.empty(%[[T]]) : tensor<?x0x8xf32>
// CHECK: return %[[Y]], %arg1
func.func @empty_batch(%x: tensor<?x0x8xf32>, %h0: tensor<?x8xf32>, %W: tensor<8x8xf32>)
    -> (tensor<?x0x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x0x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x0x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<0x8xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<0x8xf32>, tensor<?x8xf32>) weights(%W, %W : tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<0x8xf32>
    lstm.yield out(%hn : tensor<0x8xf32>) state(%h : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x0x8xf32>, tensor<?x8xf32>
}

// -----

// A stack of two layers on a batch of 0: both replaced, no wavefront.
// CHECK-LABEL: func.func @empty_batch_stack
// CHECK-NOT: lstm.layer {{forward|reverse}}
// CHECK-NOT: scf.for
// CHECK: return %{{.*}}, %arg1, %arg2
func.func @empty_batch_stack(%x: tensor<?x0x8xf32>, %h0: tensor<0x8xf32>, %h1: tensor<0x8xf32>, %W: tensor<8x8xf32>)
    -> (tensor<?x0x8xf32>, tensor<0x8xf32>, tensor<0x8xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x0x8xf32>) init(%h0 : tensor<0x8xf32>)
      -> (tensor<?x0x8xf32>), (tensor<0x8xf32>) {
  ^bb0(%xt: tensor<0x8xf32>, %h: tensor<0x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<0x8xf32>, tensor<0x8xf32>) weights(%W, %W : tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<0x8xf32>
    lstm.yield out(%hn : tensor<0x8xf32>) state(%hn : tensor<0x8xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x0x8xf32>) init(%h1 : tensor<0x8xf32>)
      -> (tensor<?x0x8xf32>), (tensor<0x8xf32>) {
  ^bb0(%xt: tensor<0x8xf32>, %h: tensor<0x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<0x8xf32>, tensor<0x8xf32>) weights(%W, %W : tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<0x8xf32>
    lstm.yield out(%hn : tensor<0x8xf32>) state(%hn : tensor<0x8xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x0x8xf32>, tensor<0x8xf32>, tensor<0x8xf32>
}
