// RUN: lstm-opt %s --lstm-gemm-to-blas --canonicalize --cse -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-gemm-to-blas=min-size=100000 --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=SMALL

// A gate's product x·Wᵀ on a strided view of the input, after a zero fill:
// one sgemm call (transA = 0, transB = 1, m from the view, n = 512, k = 64,
// beta = 0, lda from the view's metadata) and no fill. With a dynamic m and
// min-size, the product is made at run time when it is large enough.
#in = affine_map<(b, h, k) -> (b, k)>
#w = affine_map<(b, h, k) -> (h, k)>
#acc = affine_map<(b, h, k) -> (b, h)>
// CHECK-LABEL: func.func @gate_product
// CHECK-SAME: (%[[X:.*]]: memref<?x64xf32, strided<[?, 1], offset: ?>>, %[[W:.*]]: memref<512x64xf32>, %[[C:.*]]: memref<?x512xf32>)
// CHECK-NOT: linalg.
// CHECK: %{{.*}}, %[[XOFF:.*]], %{{.*}}:2, %[[XSTRIDE:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK: %[[LDA:.*]] = arith.index_cast %[[XSTRIDE]]#0 : index to i64
// CHECK: arith.muli %[[XOFF]], %c4
// CHECK: call @lstmRuntimeCpuSgemm(%c0_i32, %c1_i32, %{{.*}}, %c512_i64, %c64_i64, %cst{{.*}}, %{{.*}}, %[[LDA]], %c0_i64, %{{.*}}, %c64_i64, %c0_i64, %cst{{.*}}, %{{.*}}, %c512_i64, %c0_i64, %c1_i64)
// CHECK-NOT: linalg.
// SMALL-LABEL: func.func @gate_product
// SMALL: %[[LARGE:.*]] = arith.cmpi sge
// SMALL: scf.if %[[LARGE]] {
// SMALL:   call @lstmRuntimeCpuSgemm
// SMALL: } else {
// SMALL:   linalg.fill
// SMALL:   linalg.generic
func.func @gate_product(%x: memref<?x64xf32, strided<[?, 1], offset: ?>>,
                        %w: memref<512x64xf32>, %c: memref<?x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x512xf32>)
  linalg.generic {indexing_maps = [#in, #w, #acc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xf32, strided<[?, 1], offset: ?>>, memref<512x64xf32>)
      outs(%c : memref<?x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK: func.func private @lstmRuntimeCpuSgemm(i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)

// -----

// f64 products go to dgemm; a batched product passes the batch strides and
// accumulates (beta = 1) without a fill before it. Small static products
// stay loops under min-size.
// CHECK-LABEL: func.func @batched_f64
// CHECK: call @lstmRuntimeCpuDgemm(%c0_i32, %c0_i32, %c8_i64, %c32_i64, %c16_i64, %cst, %{{.*}}, %c16_i64, %c128_i64, %{{.*}}, %c32_i64, %c512_i64, %cst, %{{.*}}, %c32_i64, %c256_i64, %c3_i64)
// SMALL-LABEL: func.func @batched_f64
// SMALL-NOT: call
// SMALL: linalg.batch_matmul
func.func @batched_f64(%a: memref<3x8x16xf64>, %b: memref<3x16x32xf64>, %c: memref<3x8x32xf64>) {
  linalg.batch_matmul ins(%a, %b : memref<3x8x16xf64>, memref<3x16x32xf64>) outs(%c : memref<3x8x32xf64>)
  return
}

// -----

// The weight gradient dW = dZᵀ·X: A is stored transposed ([k, m]).
// CHECK-LABEL: func.func @weight_gradient
// CHECK: call @lstmRuntimeCpuSgemm(%c1_i32, %c0_i32, %c512_i64, %c128_i64, %{{.*}},
#dz = affine_map<(h, k, r) -> (r, h)>
#x = affine_map<(h, k, r) -> (r, k)>
#dw = affine_map<(h, k, r) -> (h, k)>
func.func @weight_gradient(%dz: memref<?x512xf32>, %x: memref<?x128xf32>, %dw: memref<512x128xf32>) {
  linalg.generic {indexing_maps = [#dz, #x, #dw],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%dz, %x : memref<?x512xf32>, memref<?x128xf32>)
      outs(%dw : memref<512x128xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// What no BLAS routine computes stays linalg: mixed element types, a
// column-strided operand, a body that is not a multiply-add.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: call
// CHECK: linalg.matmul
// CHECK: linalg.matmul
// CHECK: linalg.generic
func.func @left_alone(%a16: memref<8x16xf16>, %b16: memref<16x32xf16>, %c: memref<8x32xf32>,
                      %a: memref<8x16xf32, strided<[32, 2]>>, %b: memref<16x32xf32>) {
  linalg.matmul ins(%a16, %b16 : memref<8x16xf16>, memref<16x32xf16>) outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%a, %b : memref<8x16xf32, strided<[32, 2]>>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  linalg.generic {indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (k, n)>, affine_map<(m, n, k) -> (m, n)>],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a16, %b : memref<8x16xf16>, memref<16x32xf32>)
      outs(%c : memref<8x32xf32>) {
  ^bb0(%x: f16, %y: f32, %o: f32):
    %x32 = arith.extf %x : f16 to f32
    %p = arith.maximumf %x32, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
