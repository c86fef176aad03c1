// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-wavefront=side-output-max-product=256 -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-wavefront -split-input-file | FileCheck %s --check-prefix=DEFAULT
// The default, 0, leaves such chains alone (on the CPU the wavefront of a
// training forward measured slower); chains without stored outputs are not
// bounded.
// DEFAULT-LABEL: func.func @batch_8
// DEFAULT-NOT: scf.for
// DEFAULT-COUNT-3: lstm.layer forward
// DEFAULT-LABEL: func.func @dynamic_batch
// DEFAULT-NOT: scf.if
// DEFAULT-COUNT-3: lstm.layer forward
// DEFAULT-LABEL: func.func @no_side_outputs
// DEFAULT: scf.for
// RUN: lstm-opt %s --lstm-wavefront=side-output-max-product=256 --lstm-schedule-report -split-input-file -o /dev/null 2>&1 | FileCheck %s --check-prefix=REPORT

// The schedule report says where a bounded wavefront runs.
// REPORT: @batch_8 wavefront of 3 layers
// REPORT: @batch_32 layer 0
// REPORT: @dynamic_batch wavefront of 3 layers (forward): {{.*}} where B<=16 (the layers above)
// REPORT: @dynamic_batch layer 3
// REPORT: @no_side_outputs wavefront of 2 layers (forward): {{.*}}steps=T+1{{$}}

// A chain whose outputs are read outside it (here layer 0's, as a training
// forward returns its layers' saved sequences) runs as a wavefront only at
// the batch sizes where a layer's largest per-step product, B·N·K
// multiply-adds, is at most side-output-max-product: 256 here, with
// N·K = 4·4, so B <= 16.

// A static batch of 8: the wavefront, with no branch.
// CHECK-LABEL: func.func @batch_8
// CHECK-NOT: scf.if
// CHECK-NOT: lstm.layer forward
// CHECK: scf.for
// CHECK-NOT: lstm.layer forward
// CHECK: return
func.func @batch_8(%x: tensor<?x8x4xf32>, %h0: tensor<8x4xf32>, %W: tensor<4x4xf32>)
    -> (tensor<?x8x4xf32>, tensor<?x8x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x8x4xf32>) init(%h0 : tensor<8x4xf32>)
      -> (tensor<?x8x4xf32>), (tensor<8x4xf32>) {
  ^bb0(%xt: tensor<8x4xf32>, %h: tensor<8x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<8x4xf32>, tensor<8x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    lstm.yield out(%hn : tensor<8x4xf32>) state(%hn : tensor<8x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x8x4xf32>) init(%h0 : tensor<8x4xf32>)
      -> (tensor<?x8x4xf32>), (tensor<8x4xf32>) {
  ^bb0(%xt: tensor<8x4xf32>, %h: tensor<8x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<8x4xf32>, tensor<8x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    lstm.yield out(%hn : tensor<8x4xf32>) state(%hn : tensor<8x4xf32>)
  }
  %y2, %hT2 = lstm.layer forward ins(%y1 : tensor<?x8x4xf32>) init(%h0 : tensor<8x4xf32>)
      -> (tensor<?x8x4xf32>), (tensor<8x4xf32>) {
  ^bb0(%xt: tensor<8x4xf32>, %h: tensor<8x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<8x4xf32>, tensor<8x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
    lstm.yield out(%hn : tensor<8x4xf32>) state(%hn : tensor<8x4xf32>)
  }
  return %y0, %y2 : tensor<?x8x4xf32>, tensor<?x8x4xf32>
}

// -----

// A static batch of 32: above the bound, left alone.
// CHECK-LABEL: func.func @batch_32
// CHECK-NOT: scf.for
// CHECK-COUNT-3: lstm.layer forward
func.func @batch_32(%x: tensor<?x32x4xf32>, %h0: tensor<32x4xf32>, %W: tensor<4x4xf32>)
    -> (tensor<?x32x4xf32>, tensor<?x32x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x32x4xf32>) init(%h0 : tensor<32x4xf32>)
      -> (tensor<?x32x4xf32>), (tensor<32x4xf32>) {
  ^bb0(%xt: tensor<32x4xf32>, %h: tensor<32x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<32x4xf32>, tensor<32x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<32x4xf32>
    lstm.yield out(%hn : tensor<32x4xf32>) state(%hn : tensor<32x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x32x4xf32>) init(%h0 : tensor<32x4xf32>)
      -> (tensor<?x32x4xf32>), (tensor<32x4xf32>) {
  ^bb0(%xt: tensor<32x4xf32>, %h: tensor<32x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<32x4xf32>, tensor<32x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<32x4xf32>
    lstm.yield out(%hn : tensor<32x4xf32>) state(%hn : tensor<32x4xf32>)
  }
  %y2, %hT2 = lstm.layer forward ins(%y1 : tensor<?x32x4xf32>) init(%h0 : tensor<32x4xf32>)
      -> (tensor<?x32x4xf32>), (tensor<32x4xf32>) {
  ^bb0(%xt: tensor<32x4xf32>, %h: tensor<32x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<32x4xf32>, tensor<32x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<32x4xf32>
    lstm.yield out(%hn : tensor<32x4xf32>) state(%hn : tensor<32x4xf32>)
  }
  return %y0, %y2 : tensor<?x32x4xf32>, tensor<?x32x4xf32>
}

// -----

// A dynamic batch: the wavefront in the then branch of scf.if B <= 16, the
// layers as they were in its else branch. The if yields the store of the
// layers' outputs whole (the else branch putting layer 0's and layer 2's
// sequences there), and their views are taken after the if (wavefront.mlir).
// CHECK-LABEL: func.func @dynamic_batch
// CHECK: %[[SMALL:.*]] = arith.cmpi ule, %{{.*}}, %c16 : index
// CHECK: %[[R:.*]]:3 = scf.if %[[SMALL]] -> (tensor<3x?x?x4xf32>, index, index)
// CHECK-NOT: lstm.layer forward
// CHECK: scf.for
// CHECK: } else {
// CHECK: bufferization.alloc_tensor
// CHECK-COUNT-3: lstm.layer forward
// CHECK: %[[Y0:.*]] = tensor.extract_slice %[[R]]#0[0, 0, 0, 0] [1, %[[R]]#1, %{{.*}}, 4]
// CHECK: %[[Y2:.*]] = tensor.extract_slice %[[R]]#0[2, 2, 0, 0] [1, %[[R]]#2, %{{.*}}, 4]
// CHECK: return %[[Y0]], %[[Y2]]
func.func @dynamic_batch(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y2, %hT2 = lstm.layer forward ins(%y1 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y0, %y2 : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// Without outputs read elsewhere there is no bound: the wavefront at any
// batch size, as before.
// CHECK-LABEL: func.func @no_side_outputs
// CHECK-NOT: scf.if
// CHECK-NOT: lstm.layer forward
// CHECK: scf.for
func.func @no_side_outputs(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> tensor<?x?x4xf32> {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1 : tensor<?x?x4xf32>
}

// -----

// With persistent kernels: a training forward (stack3's, from
// lstm-differentiate) is left to the kernels up to their batch bound, a
// wavefront above it up to the side-output bound, and layers above both. The
// kernels' cost model judges each layer on a copy, with the constants its
// cell captures (the index of a tensor.dim) still constants.
// RUN: lstm-opt %examples/stack3.mlir --lstm-combine-gate-gemms --lstm-differentiate --lstm-wavefront="persistent=1 side-output-max-product=268435456" | FileCheck %s --check-prefix=TRAIN
// TRAIN-LABEL: func.func @forward_train
// TRAIN: %[[KERNELS:.*]] = arith.cmpi ule, %{{.*}}, %c{{[0-9]+}} : index
// TRAIN: scf.if %[[KERNELS]]
// TRAIN-COUNT-3: lstm.layer forward
// TRAIN: } else {
// TRAIN: %[[SMALL:.*]] = arith.cmpi ule, %{{.*}}, %c4096 : index
// TRAIN: scf.if %[[SMALL]]
// TRAIN: scf.for
// TRAIN: } else {
// TRAIN-COUNT-3: lstm.layer forward
// TRAIN: } {lstm.persistent_stack}
// TRAIN-LABEL: func.func @forward_backward

// -----

// A side output that is the state a step starts from (stack3's training
// forward saves c_{t-1}): each diagonal stores the state it computes a row
// ahead (the cell writes it there as it computes it, instead of a copy of
// the loop-carried state), the store has L + T rows, and after the loop
// each layer's first row, which a diagonal that layer did not run wrote,
// gets the layer's initial state.
// RUN: lstm-opt %examples/stack3.mlir --lstm-combine-gate-gemms --lstm-differentiate --lstm-wavefront=side-output-max-product=268435456 | FileCheck %s --check-prefix=STATE
// STATE-LABEL: func.func @forward_train
// STATE: %[[ROWS:.*]] = arith.addi %{{.*}}, %c2{{.*}} : index
// STATE-NEXT: %[[AHEAD:.*]] = arith.addi %[[ROWS]], %c1{{.*}} : index
// STATE: %[[STORE:.*]] = tensor.empty(%[[AHEAD]], %{{.*}}) : tensor<3x?x?x128xf32>
// STATE: %[[LOOP:.*]]:10 = scf.for %[[D:arg[0-9]+]] = {{.*}} iter_args({{.*}}, %[[S:arg[0-9]+]] = %[[STORE]],
// STATE: %[[NEXT:.*]] = arith.addi %[[D]], %c1
// STATE-NOT: scf.yield
// STATE: tensor.insert_slice %{{.*}} into %[[S]][0, %[[NEXT]], 0, 0] [3, 1, %{{.*}}, 128]
// STATE: scf.yield
// STATE: %[[F0:.*]] = tensor.insert_slice %{{.*}} into %[[LOOP]]#6[0, 0, 0, 0] [1, 1, %{{.*}}, 128]
// STATE-NOT: scf.for
// STATE: %[[F1:.*]] = tensor.insert_slice %{{.*}} into %[[F0]][1, 1, 0, 0] [1, 1, %{{.*}}, 128]
// STATE-NOT: scf.for
// STATE: %[[F2:.*]] = tensor.insert_slice %{{.*}} into %[[F1]][2, 2, 0, 0] [1, 1, %{{.*}}, 128]
