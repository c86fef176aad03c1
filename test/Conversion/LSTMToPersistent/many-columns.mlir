// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-to-persistent=always=true | FileCheck %s

// A cell that reads 33 columns of its product: more partial sums than a
// warp has lanes. Its 33 weights a lane take more than half the registers,
// so a warp computes one row at a time, and reduceAcrossLanes sums the 33
// values in two chunks: the first 32 in 31 exchanges that halve what each
// lane holds (value v ends in lane v), the 33rd alone in a plain
// butterfly of 5 rounds (its sum in every lane). Every lane then reads
// column v's sum from lane v of the first chunk, the 33rd from lane 0 of
// the second.
// Weights filling more than half of a lane's 64 registers for them: the
// block has 256 threads instead of 512 (a lane may use more registers),
// and one row at a time also bounds the chunks: one row per warp of a
// unit (a second row to loop to made such kernels spill). The block's 8
// warps take its 4 units (N = 4) in 2 row groups, and the 4 blocks split
// the rows (row tiles): chunks of 2 rows, from the block's first row.
// CHECK-LABEL: func.func @many_columns
// CHECK: gpu.launch blocks({{.*}}) in (%{{.*}} = %c4{{.*}}, %{{.*}}, %{{.*}}) threads({{.*}}) in (%{{.*}} = %c256{{.*}}, %{{.*}}, %{{.*}})
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c1
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %c2
// CHECK: arith.select
// CHECK-COUNT-16: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK-COUNT-8: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK-COUNT-4: gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK-COUNT-2: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.addf
// CHECK-NOT: arith.select
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32
// CHECK-NEXT: %[[SECOND:.*]] = arith.addf
// CHECK: gpu.shuffle  idx %[[FIRST]], %c0_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c1_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c2_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c3_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c4_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c5_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c6_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c7_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c8_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c9_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c10_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c11_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c12_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c13_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c14_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c15_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c16_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c17_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c18_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c19_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c20_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c21_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c22_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c23_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c24_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c25_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c26_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c27_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c28_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c29_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c30_i32
// CHECK: gpu.shuffle  idx %[[FIRST]], %c31_i32
// CHECK: gpu.shuffle  idx %[[SECOND]], %c0_i32
// CHECK: math.tanh
func.func @many_columns(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>,
                        %R: tensor<132x4xf32>) -> tensor<?x?x4xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %zero = arith.constant 0 : index
    %p = lstm.gate identity(%h : tensor<?x4xf32>) weights(%R : tensor<132x4xf32>)
        -> tensor<?x132xf32>
    %d = tensor.dim %p, %zero : tensor<?x132xf32>
    %s0 = tensor.extract_slice %p[0, 0] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s1 = tensor.extract_slice %p[0, 4] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s2 = tensor.extract_slice %p[0, 8] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s3 = tensor.extract_slice %p[0, 12] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s4 = tensor.extract_slice %p[0, 16] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s5 = tensor.extract_slice %p[0, 20] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s6 = tensor.extract_slice %p[0, 24] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s7 = tensor.extract_slice %p[0, 28] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s8 = tensor.extract_slice %p[0, 32] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s9 = tensor.extract_slice %p[0, 36] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s10 = tensor.extract_slice %p[0, 40] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s11 = tensor.extract_slice %p[0, 44] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s12 = tensor.extract_slice %p[0, 48] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s13 = tensor.extract_slice %p[0, 52] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s14 = tensor.extract_slice %p[0, 56] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s15 = tensor.extract_slice %p[0, 60] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s16 = tensor.extract_slice %p[0, 64] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s17 = tensor.extract_slice %p[0, 68] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s18 = tensor.extract_slice %p[0, 72] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s19 = tensor.extract_slice %p[0, 76] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s20 = tensor.extract_slice %p[0, 80] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s21 = tensor.extract_slice %p[0, 84] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s22 = tensor.extract_slice %p[0, 88] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s23 = tensor.extract_slice %p[0, 92] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s24 = tensor.extract_slice %p[0, 96] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s25 = tensor.extract_slice %p[0, 100] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s26 = tensor.extract_slice %p[0, 104] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s27 = tensor.extract_slice %p[0, 108] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s28 = tensor.extract_slice %p[0, 112] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s29 = tensor.extract_slice %p[0, 116] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s30 = tensor.extract_slice %p[0, 120] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s31 = tensor.extract_slice %p[0, 124] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %s32 = tensor.extract_slice %p[0, 128] [%d, 4] [1, 1] : tensor<?x132xf32> to tensor<?x4xf32>
    %hn = lstm.pointwise ins(%xt, %s0, %s1, %s2, %s3, %s4, %s5, %s6, %s7, %s8, %s9, %s10, %s11, %s12, %s13, %s14, %s15, %s16, %s17, %s18, %s19, %s20, %s21, %s22, %s23, %s24, %s25, %s26, %s27, %s28, %s29, %s30, %s31, %s32 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>)
        -> tensor<?x4xf32> {
    ^bb0(%u: f32, %a0: f32, %a1: f32, %a2: f32, %a3: f32, %a4: f32, %a5: f32, %a6: f32, %a7: f32, %a8: f32, %a9: f32, %a10: f32, %a11: f32, %a12: f32, %a13: f32, %a14: f32, %a15: f32, %a16: f32, %a17: f32, %a18: f32, %a19: f32, %a20: f32, %a21: f32, %a22: f32, %a23: f32, %a24: f32, %a25: f32, %a26: f32, %a27: f32, %a28: f32, %a29: f32, %a30: f32, %a31: f32, %a32: f32):
      %t0 = arith.addf %u, %a0 : f32
      %t1 = arith.addf %t0, %a1 : f32
      %t2 = arith.addf %t1, %a2 : f32
      %t3 = arith.addf %t2, %a3 : f32
      %t4 = arith.addf %t3, %a4 : f32
      %t5 = arith.addf %t4, %a5 : f32
      %t6 = arith.addf %t5, %a6 : f32
      %t7 = arith.addf %t6, %a7 : f32
      %t8 = arith.addf %t7, %a8 : f32
      %t9 = arith.addf %t8, %a9 : f32
      %t10 = arith.addf %t9, %a10 : f32
      %t11 = arith.addf %t10, %a11 : f32
      %t12 = arith.addf %t11, %a12 : f32
      %t13 = arith.addf %t12, %a13 : f32
      %t14 = arith.addf %t13, %a14 : f32
      %t15 = arith.addf %t14, %a15 : f32
      %t16 = arith.addf %t15, %a16 : f32
      %t17 = arith.addf %t16, %a17 : f32
      %t18 = arith.addf %t17, %a18 : f32
      %t19 = arith.addf %t18, %a19 : f32
      %t20 = arith.addf %t19, %a20 : f32
      %t21 = arith.addf %t20, %a21 : f32
      %t22 = arith.addf %t21, %a22 : f32
      %t23 = arith.addf %t22, %a23 : f32
      %t24 = arith.addf %t23, %a24 : f32
      %t25 = arith.addf %t24, %a25 : f32
      %t26 = arith.addf %t25, %a26 : f32
      %t27 = arith.addf %t26, %a27 : f32
      %t28 = arith.addf %t27, %a28 : f32
      %t29 = arith.addf %t28, %a29 : f32
      %t30 = arith.addf %t29, %a30 : f32
      %t31 = arith.addf %t30, %a31 : f32
      %t32 = arith.addf %t31, %a32 : f32
      %r = math.tanh %t32 : f32
      lstm.pointwise_yield %r : f32
    }
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y : tensor<?x?x4xf32>
}
