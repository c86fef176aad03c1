// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-to-persistent="always=true block-size=512 max-blocks=32" -split-input-file | FileCheck %s --check-prefix=FOUR
// RUN: lstm-opt %s --lstm-to-persistent="always=true block-size=512 max-blocks=32 units-at-once=2" -split-input-file | FileCheck %s --check-prefix=TWO
// RUN: lstm-opt %s --lstm-to-persistent="always=true block-size=512 max-blocks=32 units-at-once=1" -split-input-file | FileCheck %s --check-prefix=ONE
// RUN: lstm-opt %s --lstm-to-persistent="always=true" -split-input-file | FileCheck %s --check-prefix=NARROW
// RUN: lstm-opt %s --lstm-to-persistent="always=true units-at-once=1" -split-input-file | FileCheck %s --check-prefix=NARROW-ONE
// RUN: not lstm-opt %s --lstm-to-persistent=units-at-once=3 -split-input-file 2>&1 | FileCheck %s --check-prefix=BAD

// A cell whose product gives each unit one column (as a backward step's
// dh = dG · R does): each staged value feeds one multiply-add a unit. A
// warp takes several units at once, loading each staged value once for
// all of them. N = 64 in 32 blocks of 16 warps: 8 units a block in 4 tiles
// of rows (row-tiles.mlir), a warp's weights 2 a lane a unit.
//
// Chosen: 4 units at once (4 columns a staged value, as an LSTM's gates
// give): 2 slots of 4 units (warp mod 2), 8 warps of rows each. The warp
// keeps the weights of units slot, slot + 2, slot + 4 and slot + 6 of the
// tile. A group of 4 rows has 16 elements (4 units x 4 rows): 16 partial
// sums reduced together (8 shuffles in the butterfly's first round), lane
// s · 4 + j evaluating row j of the s-th unit (lanes 16 to 31 clamped to
// element 15, not stored).
// FOUR-LABEL: func.func @one_column
// FOUR: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}}, %{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c512
// FOUR: %[[WARP:.*]] = arith.divui %[[TID]], %c32{{(_[0-9]+)?}}
// FOUR: %[[LANE:.*]] = arith.remui %[[TID]], %c32{{(_[0-9]+)?}}
// FOUR: %[[SLOT:.*]] = arith.remui %[[WARP]], %c2{{(_[0-9]+)?}} : index
// FOUR: arith.divui %[[WARP]], %c2{{(_[0-9]+)?}} : index
// FOUR: arith.cmpi ult, %[[WARP]], %c16{{(_[0-9]+)?}} : index
// FOUR: arith.addi %{{.*}}, %[[SLOT]]
// FOUR: arith.addi %[[SLOT]], %c2{{(_[0-9]+)?}}
// FOUR: arith.addi %[[SLOT]], %c4{{(_[0-9]+)?}}
// FOUR: arith.addi %[[SLOT]], %c6{{(_[0-9]+)?}}
// FOUR: lstm.grid_barrier
// The lane's element of the group of 4 rows, its unit, then its row.
// FOUR: %[[ELEMENT:.*]] = arith.minui %[[LANE]], %c15{{(_[0-9]+)?}}
// FOUR: %[[S:.*]] = arith.divui %[[ELEMENT]], %c4{{(_[0-9]+)?}}
// FOUR: %[[SLOTS:.*]] = arith.muli %[[S]], %c2{{(_[0-9]+)?}}
// FOUR: arith.addi %[[SLOT]], %[[SLOTS]]
// FOUR: %[[ELEMENT2:.*]] = arith.minui %[[LANE]], %c15{{(_[0-9]+)?}}
// FOUR: arith.remui %[[ELEMENT2]], %c4{{(_[0-9]+)?}}
// FOUR-COUNT-8: gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}
// FOUR-NOT: gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}
// FOUR: gpu.shuffle  xor %{{.*}}, %c8_i32{{(_[0-9]+)?}}
// FOUR: arith.cmpi ult, %[[LANE]], %c16{{(_[0-9]+)?}} : index
//
// Two asked for: 4 slots of 2 units, 4 warps of rows each; 8 elements a
// group.
// TWO-LABEL: func.func @one_column
// TWO: %[[WARP:.*]] = arith.divui %{{.*}}, %c32{{(_[0-9]+)?}}
// TWO: %[[SLOT:.*]] = arith.remui %[[WARP]], %c4{{(_[0-9]+)?}} : index
// TWO: arith.addi %[[SLOT]], %c4{{(_[0-9]+)?}}
// TWO-NOT: arith.addi %[[SLOT]], %c8{{(_[0-9]+)?}}
// TWO: lstm.grid_barrier
// TWO: arith.minui %{{.*}}, %c7{{(_[0-9]+)?}}
// TWO-COUNT-4: gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}
// TWO-NOT: gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}
// TWO: gpu.shuffle  xor %{{.*}}, %c8_i32{{(_[0-9]+)?}}
//
// One: a unit a warp, as before (8 slots, 2 warps of rows each).
// ONE-LABEL: func.func @one_column
// ONE: %[[WARP:.*]] = arith.divui %{{.*}}, %c32{{(_[0-9]+)?}}
// ONE: arith.remui %[[WARP]], %c8{{(_[0-9]+)?}} : index
// ONE: lstm.grid_barrier
// ONE: arith.minui %{{.*}}, %c3{{(_[0-9]+)?}}
// ONE-COUNT-2: gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}
// ONE-NOT: gpu.shuffle  xor %{{.*}}, %c16_i32{{(_[0-9]+)?}}
// ONE: gpu.shuffle  xor %{{.*}}, %c8_i32{{(_[0-9]+)?}}
//
// The block size chosen (no block-size): 512 threads; the 256-thread
// blocks' warps would take no more units at once here (4 either way).
// NARROW-LABEL: func.func @one_column
// NARROW: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c512
func.func @one_column(%x: tensor<?x?x128xf32>, %h0: tensor<?x64xf32>, %c0: tensor<?x64xf32>,
                      %R: tensor<128x64xf32>, %b: tensor<64xf32>)
    -> (tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>) {
  %y, %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x128xf32>)
      init(%h0, %c0 : tensor<?x64xf32>, tensor<?x64xf32>)
      -> (tensor<?x?x64xf32>), (tensor<?x64xf32>, tensor<?x64xf32>) {
  ^bb0(%xt: tensor<?x128xf32>, %h: tensor<?x64xf32>, %c: tensor<?x64xf32>):
    %zero = arith.constant 0 : index
    %p = lstm.gate identity(%h : tensor<?x64xf32>) weights(%R : tensor<128x64xf32>)
        -> tensor<?x128xf32>
    %dp = tensor.dim %p, %zero : tensor<?x128xf32>
    %p1 = tensor.extract_slice %p[0, 64] [%dp, 64] [1, 1]
        : tensor<?x128xf32> to tensor<?x64xf32>
    %dx = tensor.dim %xt, %zero : tensor<?x128xf32>
    %x1 = tensor.extract_slice %xt[0, 64] [%dx, 64] [1, 1]
        : tensor<?x128xf32> to tensor<?x64xf32>
    %hn, %cn = lstm.pointwise ins(%p1, %x1, %b, %c : tensor<?x64xf32>,
        tensor<?x64xf32>, tensor<64xf32>, tensor<?x64xf32>)
        -> tensor<?x64xf32>, tensor<?x64xf32> {
    ^bb0(%a: f32, %u: f32, %v: f32, %w: f32):
      %s = arith.addf %a, %u : f32
      %t = arith.addf %s, %v : f32
      %n = math.tanh %t : f32
      %m = arith.addf %n, %w : f32
      lstm.pointwise_yield %n, %m : f32, f32
    }
    lstm.yield out(%hn : tensor<?x64xf32>) state(%hn, %cn : tensor<?x64xf32>, tensor<?x64xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x64xf32>, tensor<?x64xf32>, tensor<?x64xf32>
}

// -----

// N = 1024: a unit's weights take 32 registers a lane. In 512-thread blocks
// (64 registers for weights) a warp takes 2 units at once; in 256-thread
// blocks (128) 4, so the layer gets those where the block size is chosen
// (NARROW); with one unit at once 512 threads (NARROW-ONE).
// NARROW-LABEL: func.func @wide_one_column
// NARROW: gpu.launch {{.*}} threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
// NARROW: %[[WARP:.*]] = arith.divui %[[TID]], %c32{{(_[0-9]+)?}}
// NARROW: arith.remui %[[WARP]], %c2{{(_[0-9]+)?}} : index
// NARROW-ONE-LABEL: func.func @wide_one_column
// NARROW-ONE: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c512
func.func @wide_one_column(%x: tensor<?x?x1024xf32>, %h0: tensor<?x1024xf32>,
                           %R: tensor<2048x1024xf32>)
    -> (tensor<?x?x1024xf32>, tensor<?x1024xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x1024xf32>)
      init(%h0 : tensor<?x1024xf32>)
      -> (tensor<?x?x1024xf32>), (tensor<?x1024xf32>) {
  ^bb0(%xt: tensor<?x1024xf32>, %h: tensor<?x1024xf32>):
    %zero = arith.constant 0 : index
    %p = lstm.gate identity(%h : tensor<?x1024xf32>) weights(%R : tensor<2048x1024xf32>)
        -> tensor<?x2048xf32>
    %dp = tensor.dim %p, %zero : tensor<?x2048xf32>
    %p1 = tensor.extract_slice %p[0, 1024] [%dp, 1024] [1, 1]
        : tensor<?x2048xf32> to tensor<?x1024xf32>
    %hn = lstm.pointwise ins(%p1, %xt : tensor<?x1024xf32>, tensor<?x1024xf32>)
        -> tensor<?x1024xf32> {
    ^bb0(%a: f32, %u: f32):
      %s = arith.addf %a, %u : f32
      %n = math.tanh %s : f32
      lstm.pointwise_yield %n : f32
    }
    lstm.yield out(%hn : tensor<?x1024xf32>) state(%hn : tensor<?x1024xf32>)
  }
  return %y, %hT : tensor<?x?x1024xf32>, tensor<?x1024xf32>
}

// BAD: lstm-to-persistent: units-at-once must be 0 (chosen by the layout), 1, 2 or 4, got 3
