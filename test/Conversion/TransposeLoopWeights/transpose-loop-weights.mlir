// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-transpose-loop-weights --split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-transpose-loop-weights=compute-type=tf32 --split-input-file | FileCheck %s --check-prefix=TF32
// RUN: lstm-opt %s --lstm-transpose-loop-weights=min-size=100000000 --split-input-file | FileCheck %s --check-prefix=MINSIZE

#in = affine_map<(b, n, k) -> (b, k)>
#w = affine_map<(b, n, k) -> (n, k)>
#acc = affine_map<(b, n, k) -> (b, n)>

// A step's product h · Wᵀ, W from before the loop: before the loop the
// runtime is asked about the product's sizes (its rows those of the loop's
// initial state, as ValueBounds proves) and W transposed where it answers 0;
// in the loop the product reads the transposition there (its map swapped),
// W as it was elsewhere, each with its own zero fill.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[X:.*]]: tensor<?x128xf32>, %[[W:.*]]: tensor<512x128xf32>,
// CHECK: %[[ROWS:.*]] = tensor.dim %[[X]], %{{.*}} : tensor<?x128xf32>
// CHECK: %[[M:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: %[[ANSWER:.*]] = call @lstmRuntimeGemmFasterTransB(%c0_i32, %c0_i32{{.*}}, %[[M]], %c512_i64, %c128_i64, %c1_i64{{.*}})
// CHECK: %[[USE:.*]] = arith.cmpi eq, %[[ANSWER]], %c0_i32{{.*}} : i32
// CHECK: %[[WT:.*]] = scf.if %[[USE]] -> (tensor<?x?xf32>) {
// CHECK:   %[[T:.*]] = linalg.transpose ins(%[[W]] : tensor<512x128xf32>) outs(%{{.*}} : tensor<128x512xf32>) permutation = [1, 0]
// CHECK:   %[[CAST:.*]] = tensor.cast %[[T]] : tensor<128x512xf32> to tensor<?x?xf32>
// CHECK:   scf.yield %[[CAST]]
// CHECK: } else {
// CHECK:   %[[NONE:.*]] = tensor.empty(%[[ZERO:.*]], %[[ZERO]]) : tensor<?x?xf32>
// CHECK:   scf.yield %[[NONE]]
// CHECK: scf.for
// CHECK:   scf.if %[[USE]] -> (tensor<?x512xf32>) {
// CHECK:     linalg.fill
// CHECK:     linalg.generic {indexing_maps = [#{{.*}}, #[[KN:.*]], #{{.*}}], {{.*}} ins(%{{.*}}, %[[WT]] : tensor<?x128xf32>, tensor<?x?xf32>)
// CHECK:   } else {
// CHECK:     linalg.fill
// CHECK:     linalg.generic {{.*}} ins(%{{.*}}, %[[W]] : tensor<?x128xf32>, tensor<512x128xf32>)
// TF32-LABEL: func.func @step
// TF32: call @lstmRuntimeGemmFasterTransB(%c1_i32,
// With min-size (lstm-gemm-to-cublas's), the runtime is asked only where
// the product has that many multiply-adds: below, it stays a kernel.
// MINSIZE-LABEL: func.func @step
// MINSIZE: arith.muli
// MINSIZE: %[[BIG:.*]] = arith.cmpi sge, %{{.*}}, %c100000000_i64 : i64
// MINSIZE: %[[ANSWER:.*]] = scf.if %[[BIG]] -> (i32) {
// MINSIZE:   func.call @lstmRuntimeGemmFasterTransB
// MINSIZE: } else {
// MINSIZE:   scf.yield %c1_i32
// MINSIZE: arith.cmpi eq, %[[ANSWER]]
func.func @step(%x: tensor<?x128xf32>, %w: tensor<512x128xf32>, %t: index) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %x) -> (tensor<?x128xf32>) {
    %b = tensor.dim %h, %c0 : tensor<?x128xf32>
    %e = tensor.empty(%b) : tensor<?x512xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
    %p = linalg.generic {indexing_maps = [#in, #w, #acc],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %w : tensor<?x128xf32>, tensor<512x128xf32>) outs(%acc : tensor<?x512xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %next = tensor.extract_slice %p[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    scf.yield %next : tensor<?x128xf32>
  }
  return %res : tensor<?x128xf32>
}
// CHECK: func.func private @lstmRuntimeGemmFasterTransB(i32, i32, i64, i64, i64, i64) -> i32

// -----

// A wavefront's batched product, and a second one of the same weights in
// the loop: one question and one transposition serve both; the batch is
// the runtime's too.
// CHECK-LABEL: func.func @batched
// CHECK-SAME: (%[[X:.*]]: tensor<4x?x64xf32>, %[[W:.*]]: tensor<4x256x64xf32>,
// CHECK: call @lstmRuntimeGemmFasterTransB(%c0_i32, %c0_i32{{.*}}, %{{.*}}, %c256_i64, %c64_i64, %c4_i64{{.*}})
// CHECK: linalg.transpose ins(%[[W]] : tensor<4x256x64xf32>) outs(%{{.*}} : tensor<4x64x256xf32>) permutation = [0, 2, 1]
// CHECK-NOT: call @lstmRuntimeGemmFasterTransB
// CHECK-NOT: linalg.transpose
// CHECK: scf.for
// CHECK: linalg.batch_matmul ins(%{{.*}}, %[[WT:.*]] : tensor<4x?x64xf32>, tensor<?x?x?xf32>)
// CHECK: linalg.batch_matmul indexing_maps = {{.*}} ins(%{{.*}}, %[[W]] :
// CHECK: linalg.batch_matmul ins(%{{.*}}, %[[WT]] : tensor<4x?x64xf32>, tensor<?x?x?xf32>)
// CHECK: linalg.batch_matmul indexing_maps = {{.*}} ins(%{{.*}}, %[[W]] :
func.func @batched(%x: tensor<4x?x64xf32>, %w: tensor<4x256x64xf32>, %t: index) -> tensor<4x?x64xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %x) -> (tensor<4x?x64xf32>) {
    %b = tensor.dim %h, %c1 : tensor<4x?x64xf32>
    %e = tensor.empty(%b) : tensor<4x?x256xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x256xf32>) -> tensor<4x?x256xf32>
    %p = linalg.batch_matmul indexing_maps = [affine_map<(l, b, n, k) -> (l, b, k)>,
                                              affine_map<(l, b, n, k) -> (l, n, k)>,
                                              affine_map<(l, b, n, k) -> (l, b, n)>]
        ins(%h, %w : tensor<4x?x64xf32>, tensor<4x256x64xf32>) outs(%acc : tensor<4x?x256xf32>) -> tensor<4x?x256xf32>
    %s = tensor.extract_slice %p[0, 0, 0] [4, %b, 64] [1, 1, 1] : tensor<4x?x256xf32> to tensor<4x?x64xf32>
    %e2 = tensor.empty(%b) : tensor<4x?x256xf32>
    %acc2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x?x256xf32>) -> tensor<4x?x256xf32>
    %q = linalg.batch_matmul indexing_maps = [affine_map<(l, b, n, k) -> (l, b, k)>,
                                              affine_map<(l, b, n, k) -> (l, n, k)>,
                                              affine_map<(l, b, n, k) -> (l, b, n)>]
        ins(%s, %w : tensor<4x?x64xf32>, tensor<4x256x64xf32>) outs(%acc2 : tensor<4x?x256xf32>) -> tensor<4x?x256xf32>
    %next = tensor.extract_slice %q[0, 0, 0] [4, %b, 64] [1, 1, 1] : tensor<4x?x256xf32> to tensor<4x?x64xf32>
    scf.yield %next : tensor<4x?x64xf32>
  }
  return %res : tensor<4x?x64xf32>
}

// -----

#in = affine_map<(b, n, k) -> (b, k)>
#w = affine_map<(b, n, k) -> (n, k)>
#acc = affine_map<(b, n, k) -> (b, n)>

// The fp32 version beside a TF32 one (lstm-split-tf32-gemms' form: the
// else branch of a test that a value from before the loop is part of):
// W transposed only where that value is false too, and where it is true
// the product reads W as it was.
// CHECK-LABEL: func.func @guarded
// CHECK-SAME: %[[G:[^:]*]]: i1
// CHECK: %[[ANSWER:.*]] = call @lstmRuntimeGemmFasterTransB
// CHECK: %[[FASTER:.*]] = arith.cmpi eq, %[[ANSWER]], %c0_i32{{.*}} : i32
// CHECK: %[[NOTG:.*]] = arith.xori %[[G]], %true
// CHECK: %[[USE:.*]] = arith.andi %[[FASTER]], %[[NOTG]]
// CHECK: scf.if %[[USE]] -> (tensor<?x?xf32>)
// CHECK: scf.for
// CHECK: scf.if %{{.*}} -> (tensor<?x512xf32>) {
// CHECK:   linalg.generic {{.*}} {lstm.tf32_operands}
// CHECK: } else {
// CHECK:   scf.if %[[USE]] -> (tensor<?x512xf32>)
func.func @guarded(%x: tensor<?x128xf32>, %w: tensor<512x128xf32>, %t: index, %g: i1) -> tensor<?x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c128 = arith.constant 128 : index
  %zero = arith.constant 0.0 : f32
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %x) -> (tensor<?x128xf32>) {
    %b = tensor.dim %h, %c0 : tensor<?x128xf32>
    %e = tensor.empty(%b) : tensor<?x512xf32>
    %enough = arith.cmpi sge, %b, %c128 : index
    %cond = arith.andi %enough, %g : i1
    %p = scf.if %cond -> (tensor<?x512xf32>) {
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
      %split = linalg.generic {indexing_maps = [#in, #w, #acc],
                               iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%h, %w : tensor<?x128xf32>, tensor<512x128xf32>) outs(%acc : tensor<?x512xf32>)
          attrs = {lstm.tf32_operands} {
      ^bb0(%a: f32, %v: f32, %o: f32):
        %m = arith.mulf %a, %v : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
      } -> tensor<?x512xf32>
      scf.yield %split : tensor<?x512xf32>
    } else {
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
      %whole = linalg.generic {indexing_maps = [#in, #w, #acc],
                               iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%h, %w : tensor<?x128xf32>, tensor<512x128xf32>) outs(%acc : tensor<?x512xf32>) {
      ^bb0(%a: f32, %v: f32, %o: f32):
        %m = arith.mulf %a, %v : f32
        %s = arith.addf %o, %m : f32
        linalg.yield %s : f32
      } -> tensor<?x512xf32>
      scf.yield %whole : tensor<?x512xf32>
    }
    %next = tensor.extract_slice %p[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    scf.yield %next : tensor<?x128xf32>
  }
  return %res : tensor<?x128xf32>
}

// -----

#in = affine_map<(b, n, k) -> (b, k)>
#inT = affine_map<(b, n, k) -> (k, b)>
#w = affine_map<(b, n, k) -> (n, k)>
#wT = affine_map<(b, n, k) -> (k, n)>
#acc = affine_map<(b, n, k) -> (b, n)>

// The first operand read transposed ([K, M]): the runtime is told so.
// CHECK-LABEL: func.func @first_transposed
// CHECK: call @lstmRuntimeGemmFasterTransB(%c0_i32, %c1_i32,
func.func @first_transposed(%x: tensor<128x?xf32>, %w: tensor<512x128xf32>, %t: index) -> tensor<128x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %x) -> (tensor<128x?xf32>) {
    %b = tensor.dim %h, %c1 : tensor<128x?xf32>
    %e = tensor.empty(%b) : tensor<?x512xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
    %p = linalg.generic {indexing_maps = [#inT, #w, #acc],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %w : tensor<128x?xf32>, tensor<512x128xf32>) outs(%acc : tensor<?x512xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %s = tensor.extract_slice %p[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    %e2 = tensor.empty(%b) : tensor<128x?xf32>
    %next = linalg.transpose ins(%s : tensor<?x128xf32>) outs(%e2 : tensor<128x?xf32>) permutation = [1, 0]
    scf.yield %next : tensor<128x?xf32>
  }
  return %res : tensor<128x?xf32>
}

// Left alone: weights stored [K, N] already, a product outside any loop,
// weights the loop computes, a product made for TF32, and rows that no
// extent before the loop gives (read from memory).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: lstmRuntimeGemmFasterTransB
// CHECK-NOT: linalg.transpose ins(%arg
// CHECK: return
func.func @left_alone(%x: tensor<?x128xf32>, %wkn: tensor<128x512xf32>, %w: tensor<512x128xf32>,
                      %sizes: tensor<1xindex>, %t: index) -> (tensor<?x128xf32>, tensor<?x512xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %bx = tensor.dim %x, %c0 : tensor<?x128xf32>
  %ex = tensor.empty(%bx) : tensor<?x512xf32>
  %accx = linalg.fill ins(%zero : f32) outs(%ex : tensor<?x512xf32>) -> tensor<?x512xf32>
  %outside = linalg.generic {indexing_maps = [#in, #w, #acc],
                             iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<?x128xf32>, tensor<512x128xf32>) outs(%accx : tensor<?x512xf32>) {
  ^bb0(%a: f32, %v: f32, %o: f32):
    %m = arith.mulf %a, %v : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<?x512xf32>
  %rows = tensor.extract %sizes[%c0] : tensor<1xindex>
  %h0 = tensor.empty(%rows) : tensor<?x128xf32>
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %x) -> (tensor<?x128xf32>) {
    %b = tensor.dim %h, %c0 : tensor<?x128xf32>
    %e = tensor.empty(%b) : tensor<?x512xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
    %kn = linalg.generic {indexing_maps = [#in, #wT, #acc],
                          iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %wkn : tensor<?x128xf32>, tensor<128x512xf32>) outs(%acc : tensor<?x512xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %ew = tensor.empty() : tensor<512x128xf32>
    %wi = linalg.generic {indexing_maps = [affine_map<(n, k) -> (n, k)>, affine_map<(n, k) -> (n, k)>],
                          iterator_types = ["parallel", "parallel"]}
        ins(%w : tensor<512x128xf32>) outs(%ew : tensor<512x128xf32>) {
    ^bb0(%v: f32, %o: f32):
      %d = arith.addf %v, %v : f32
      linalg.yield %d : f32
    } -> tensor<512x128xf32>
    %inloop = linalg.generic {indexing_maps = [#in, #w, #acc],
                              iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %wi : tensor<?x128xf32>, tensor<512x128xf32>) outs(%kn : tensor<?x512xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %tf32 = linalg.generic {indexing_maps = [#in, #w, #acc],
                            iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %w : tensor<?x128xf32>, tensor<512x128xf32>) outs(%inloop : tensor<?x512xf32>)
        attrs = {lstm.tf32_operands} {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %next = tensor.extract_slice %tf32[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    scf.yield %next : tensor<?x128xf32>
  }
  %res2 = scf.for %i = %c0 to %t step %c1 iter_args(%h = %h0) -> (tensor<?x128xf32>) {
    %b = tensor.dim %h, %c0 : tensor<?x128xf32>
    %e = tensor.empty(%b) : tensor<?x512xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x512xf32>) -> tensor<?x512xf32>
    %p = linalg.generic {indexing_maps = [#in, #w, #acc],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %w : tensor<?x128xf32>, tensor<512x128xf32>) outs(%acc : tensor<?x512xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<?x512xf32>
    %next = tensor.extract_slice %p[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    scf.yield %next : tensor<?x128xf32>
  }
  return %res2, %outside : tensor<?x128xf32>, tensor<?x512xf32>
}

// -----

#in = affine_map<(b, n, k) -> (b, k)>
#w = affine_map<(b, n, k) -> (n, k)>
#acc = affine_map<(b, n, k) -> (b, n)>

// Static sizes below min-size: a generated kernel's product, left alone;
// without min-size, transposed where the runtime says.
// CHECK-LABEL: func.func @small_static
// CHECK: call @lstmRuntimeGemmFasterTransB(%c0_i32, %c0_i32{{.*}}, %c16_i64, %c512_i64, %c128_i64, %c1_i64{{.*}})
// MINSIZE-LABEL: func.func @small_static
// MINSIZE-NOT: lstmRuntimeGemmFasterTransB
// MINSIZE-NOT: linalg.transpose
// MINSIZE: return
func.func @small_static(%x: tensor<16x128xf32>, %w: tensor<512x128xf32>, %t: index) -> tensor<16x128xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %res = scf.for %i = %c0 to %t step %c1 iter_args(%h = %x) -> (tensor<16x128xf32>) {
    %e = tensor.empty() : tensor<16x512xf32>
    %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x512xf32>) -> tensor<16x512xf32>
    %p = linalg.generic {indexing_maps = [#in, #w, #acc],
                         iterator_types = ["parallel", "parallel", "reduction"]}
        ins(%h, %w : tensor<16x128xf32>, tensor<512x128xf32>) outs(%acc : tensor<16x512xf32>) {
    ^bb0(%a: f32, %v: f32, %o: f32):
      %m = arith.mulf %a, %v : f32
      %s = arith.addf %o, %m : f32
      linalg.yield %s : f32
    } -> tensor<16x512xf32>
    %next = tensor.extract_slice %p[0, 0] [16, 128] [1, 1] : tensor<16x512xf32> to tensor<16x128xf32>
    scf.yield %next : tensor<16x128xf32>
  }
  return %res : tensor<16x128xf32>
}
