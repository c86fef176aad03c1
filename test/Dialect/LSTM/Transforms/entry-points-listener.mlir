// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// REQUIRES: lstm-test-passes
// RUN: lstm-opt %S/Inputs/lstm.mlir --test-lstm-transforms=entry-point=combineGateGemms | FileCheck %s --check-prefix=COMBINE
// RUN: lstm-opt %S/Inputs/lstm.mlir --test-lstm-transforms=entry-point=hoistInputProjections | FileCheck %s --check-prefix=HOIST
// RUN: lstm-opt %S/Inputs/lstm.mlir --test-lstm-transforms=entry-point=fuseElementwise | FileCheck %s --check-prefix=FUSE
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --test-lstm-transforms=entry-point=wavefrontLayers | FileCheck %s --check-prefix=WAVEFRONT
// RUN: lstm-opt %s --test-lstm-transforms=entry-point=combineGateGemms | FileCheck %s --check-prefix=NONE -DENTRY=combineGateGemms
// RUN: lstm-opt %s --test-lstm-transforms=entry-point=hoistInputProjections | FileCheck %s --check-prefix=NONE -DENTRY=hoistInputProjections
// RUN: lstm-opt %s --test-lstm-transforms=entry-point=wavefrontLayers | FileCheck %s --check-prefix=WAVEFRONT-NONE
// RUN: not lstm-opt %s --test-lstm-transforms=entry-point=combine 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// The entry points of Transforms.h, called from a pass outside the library
// (test/lib) with a listener on the rewriter: every change they make is
// reported to it. The test pass prints the notifications, then what changed
// without one (ops that appeared or disappeared unreported, ops whose
// operands, attributes or result types differ from what the listener last
// saw): none may.

// The LSTM of Inputs/lstm.mlir: the 8 products become 2 GEMMs (new ops,
// gates modified), then the IR is printed and verified.
// COMBINE: @forward combineGateGemms: success; {{[1-9][0-9]*}} inserted, {{[1-9][0-9]*}} modified, 0 replaced, 0 erased; unreported: 0 insertions, 0 erasures, 0 modifications
// COMBINE: lstm.layer
// COMBINE: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%{{.*}} : tensor<32x4xf32>) -> tensor<?x32xf32>

// The input projections move before the layer as one GEMM; the layer gets
// the projected sequence as its only input.
// HOIST: @forward hoistInputProjections: success; {{[1-9][0-9]*}} inserted, {{[1-9][0-9]*}} modified, 0 replaced, 0 erased; unreported: 0 insertions, 0 erasures, 0 modifications
// HOIST: tensor.collapse_shape
// HOIST: lstm.layer forward ins(%{{.*}} : tensor<?x?x32xf32>)

// The pointwise work becomes one lstm.pointwise; its members are erased.
// FUSE: @forward fuseElementwise: success; {{[1-9][0-9]*}} inserted, {{[1-9][0-9]*}} modified, 0 replaced, {{[1-9][0-9]*}} erased; unreported: 0 insertions, 0 erasures, 0 modifications
// FUSE: lstm.pointwise

// The three layers of Inputs/lstm-stack3.mlir (one chain) become one loop
// over the diagonals; the layers are erased.
// WAVEFRONT: @forward wavefrontLayers: success; {{[1-9][0-9]*}} inserted, {{[0-9]+}} modified, {{[0-9]+}} replaced, {{[1-9][0-9]*}} erased; unreported: 0 insertions, 0 erasures, 0 modifications
// WAVEFRONT: scf.for
// WAVEFRONT-NOT: lstm.layer

// A cell with one gate and no input projection: nothing to combine or
// hoist. The entry points fail without touching the IR.
// The functions are visited in order, one at a time (their reports never
// interleave).
// NONE: @rnn [[ENTRY]]: failure; 0 inserted, 0 modified, 0 replaced, 0 erased; unreported: 0 insertions, 0 erasures, 0 modifications
// NONE-NEXT: @mismatched [[ENTRY]]: failure; 0 inserted, 0 modified, 0 replaced, 0 erased; unreported: 0 insertions, 0 erasures, 0 modifications
// NONE-NEXT: @mismatched [[ENTRY]]: failure; 0 inserted, 0 modified, 0 replaced, 0 erased; unreported: 0 insertions, 0 erasures, 0 modifications
// NONE-NEXT: module

// An entry point the test pass does not know is an error naming it.
// UNKNOWN: error: test-lstm-transforms: unknown entry-point 'combine'
func.func @rnn(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>,
               %R: tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>)
      init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%h : tensor<?x8xf32>) weights(%R : tensor<8x8xf32>)
        add(%xt : tensor<?x8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// A chain of two layers whose cells differ (tanh, then sigmoid) cannot run
// as one batched cell: wavefrontLayers fails without touching the IR. The
// single layer of @rnn is no chain and is not visited.
// WAVEFRONT-NONE-NOT: @rnn wavefrontLayers
// WAVEFRONT-NONE: @mismatched wavefrontLayers: failure; 0 inserted, 0 modified, 0 replaced, 0 erased; unreported: 0 insertions, 0 erasures, 0 modifications
// WAVEFRONT-NONE-NOT: @rnn wavefrontLayers
func.func @mismatched(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>,
                      %R: tensor<8x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %y1, %h1 = lstm.layer forward ins(%x : tensor<?x?x8xf32>)
      init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%h : tensor<?x8xf32>) weights(%R : tensor<8x8xf32>)
        add(%xt : tensor<?x8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %y2, %h2 = lstm.layer forward ins(%y1 : tensor<?x?x8xf32>)
      init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate sigmoid (%h : tensor<?x8xf32>) weights(%R : tensor<8x8xf32>)
        add(%xt : tensor<?x8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y2, %h1, %h2 : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
