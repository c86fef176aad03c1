// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-to-persistent="always=true block-size=512 max-blocks=32 units-at-once=1" | FileCheck %s --check-prefix=HALF
// RUN: lstm-opt %s --lstm-to-persistent="always=true block-size=512 max-blocks=8 units-at-once=1" | FileCheck %s --check-prefix=WHOLE
// RUN: lstm-opt %s --lstm-to-persistent="always=true block-size=512 max-blocks=4" | FileCheck %s --check-prefix=NONE
// RUN: lstm-opt %s --lstm-to-persistent="always=true block-size=512 max-blocks=32 row-tiles=false" | FileCheck %s --check-prefix=OFF

// How lstm-to-persistent lays out the blocks of a layer of N = 64 units in
// blocks of 16 warps, by the blocks it may take.
//
// 32 blocks: 2 units a block, 8 warps a unit splitting the rows, before
// row tiles. Now half the warps' units a block (8, two warps a unit): 8
// tiles of units, and the 32 blocks' 4 tiles of rows; block b takes units
// of tile b / 4 and rows of tile b mod 4.
// HALF-LABEL: func.func @wide
// HALF: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}}, %{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c512
// HALF: %[[UTILE:.*]] = arith.divui %[[BID]], %c4
// HALF: arith.remui %[[BID]], %c4
// HALF: arith.ceildivui %{{.*}}, %c4
// HALF: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// HALF: arith.remui %[[WARP]], %c8
// HALF: arith.divui %[[WARP]], %c8
// HALF: arith.muli %[[UTILE]], %c8
//
// 8 blocks: 8 units a block already; 8 a block would leave one tile of
// rows, so every warp takes a unit: 16 units a block, 4 tiles of units, 2
// of rows.
// WHOLE-LABEL: func.func @wide
// WHOLE: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c8{{.*}}, %{{.*}}, %{{.*}}) threads(%[[TID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c512
// WHOLE: %[[UTILE:.*]] = arith.divui %[[BID]], %c2
// WHOLE: arith.remui %[[BID]], %c2
// WHOLE: arith.ceildivui %{{.*}}, %c2
// WHOLE: %[[WARP:.*]] = arith.divui %[[TID]], %c32
// WHOLE: arith.remui %[[WARP]], %c16
// WHOLE: arith.muli %[[UTILE]], %c16
//
// 4 blocks: 16 units a block, a unit a warp: no warps to spare, no row
// tiles (every block takes every row).
// NONE-LABEL: func.func @wide
// NONE: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}}, %{{.*}})
// NONE-NOT: arith.ceildivui
// NONE: arith.muli %[[BID]], %c16
//
// row-tiles=false: 32 blocks of 2 units, each taking every row.
// OFF-LABEL: func.func @wide
// OFF: gpu.launch blocks(%[[BID:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}}, %{{.*}})
// OFF-NOT: arith.ceildivui
// OFF: arith.muli %[[BID]], %c2
func.func @wide(%x: tensor<?x?x128xf32>, %h0: tensor<?x64xf32>, %c0: tensor<?x64xf32>,
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
