// RUN: lstm-opt %s --lstm-gemm-to-cublas --canonicalize --cse -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-gemm-to-cublas=min-size=100000 -split-input-file | FileCheck %s --check-prefix=MIN
// RUN: lstm-opt %s --lstm-gemm-to-cublas=compute-type=tf32 --canonicalize --cse -split-input-file | FileCheck %s --check-prefix=TF32
// RUN: not lstm-opt %s --lstm-gemm-to-cublas=compute-type=fp8 -split-input-file 2>&1 | FileCheck %s --check-prefix=BADTYPE

// BADTYPE: for the --compute-type option: Cannot find option named 'fp8'!

// The calls' arguments: (computeType, transA, transB, m, n, k, alpha, A, lda,
// strideA, B, ldb, strideB, beta, C, ldc, strideC, batch).

// The gate product x·W^T (W stored [n, k]) after a zero fill: one call with
// B transposed and beta = 0; the fill and the contraction are gone. A is a
// view at an offset: its address is the aligned pointer plus 4 bytes per
// element of offset.
#in = affine_map<(b, h, k) -> (b, k)>
#w = affine_map<(b, h, k) -> (h, k)>
#acc = affine_map<(b, h, k) -> (b, h)>
// CHECK-LABEL: func.func @gate_product
// CHECK-SAME: (%[[X:.*]]: memref<?x64xf32, strided<[64, 1], offset: ?>>, %[[W:.*]]: memref<512x64xf32>, %[[C:.*]]: memref<?x512xf32>)
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.
// CHECK: %[[B:.*]] = memref.dim %[[X]], %c0
// CHECK: %{{.*}}, %[[XOFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[X]]
// CHECK: %[[M:.*]] = arith.index_cast %[[B]] : index to i64
// CHECK: %[[XBASE:.*]] = memref.extract_aligned_pointer_as_index %[[X]]
// CHECK: %[[XBYTES:.*]] = arith.muli %[[XOFF]], %c4
// CHECK: %[[XADDR:.*]] = arith.addi %[[XBASE]], %[[XBYTES]]
// CHECK: %[[XADDR64:.*]] = arith.index_cast %[[XADDR]]
// CHECK: %[[XPTR:.*]] = llvm.inttoptr %[[XADDR64]]
// CHECK: %[[WPTR:.*]] = llvm.inttoptr
// CHECK: %[[CPTR:.*]] = llvm.inttoptr
// CHECK: call @lstmRuntimeGemmStridedBatched(%c0_i32, %c0_i32, %c1_i32, %[[M]], %c512_i64, %c64_i64, %[[ONE]], %[[XPTR]], %c64_i64, %c0_i64, %[[WPTR]], %c64_i64, %c0_i64, %[[ZERO]], %[[CPTR]], %c512_i64, %c0_i64, %c1_i64)
// CHECK-NOT: linalg.
// CHECK: func.func private @lstmRuntimeGemmStridedBatched(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, i64, !llvm.ptr, i64, i64, f32, !llvm.ptr, i64, i64, i64)
// MIN-LABEL: func.func @gate_product
// MIN: %[[SIZE:.*]] = arith.muli
// MIN: %[[BIG:.*]] = arith.cmpi sge, %{{.*}}, %c100000
// MIN: scf.if %[[BIG]] {
// MIN:   call @lstmRuntimeGemmStridedBatched
// MIN: } else {
// MIN:   linalg.fill
// MIN:   linalg.generic
// MIN: }
// TF32-LABEL: func.func @gate_product
// TF32: call @lstmRuntimeGemmStridedBatched(%c1_i32, %c0_i32, %c1_i32,
func.func @gate_product(%x: memref<?x64xf32, strided<[64, 1], offset: ?>>,
                        %w: memref<512x64xf32>, %c: memref<?x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x512xf32>)
  linalg.generic {indexing_maps = [#in, #w, #acc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xf32, strided<[64, 1], offset: ?>>, memref<512x64xf32>)
      outs(%c : memref<?x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Accumulating into C (no fill before): beta = 1, no operand transposed.
// Static sizes under min-size stay a kernel.
// CHECK-LABEL: func.func @accumulate
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @lstmRuntimeGemmStridedBatched(%c0_i32, %c0_i32, %c0_i32, %c8_i64, %c32_i64, %c16_i64, %[[ONE]], %{{.*}}, %c16_i64, %c0_i64, %{{.*}}, %c32_i64, %c0_i64, %[[ONE]], %{{.*}}, %c32_i64, %c0_i64, %c1_i64)
// MIN-LABEL: func.func @accumulate
// MIN-NOT: call
// MIN: linalg.matmul
func.func @accumulate(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// A batched product (the wavefront's recurrent GEMM): the batch strides are
// passed, and the batch count is the leading extent.
// CHECK-LABEL: func.func @batched
// CHECK-NOT: linalg.
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:3, %[[HS:.*]]:3 = memref.extract_strided_metadata %arg0
// CHECK: %[[HSTRIDE:.*]] = arith.index_cast %[[HS]]#0
// CHECK: call @lstmRuntimeGemmStridedBatched(%c0_i32, %c0_i32, %c1_i32, %{{.*}}, %c512_i64, %c128_i64, %{{.*}}, %{{.*}}, %c128_i64, %[[HSTRIDE]], %{{.*}}, %c128_i64, %c65536_i64, %{{.*}}, %{{.*}}, %c512_i64, %{{.*}}, %c3_i64)
func.func @batched(%h: memref<3x?x128xf32>, %r: memref<3x512x128xf32>, %c: memref<3x?x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<3x?x512xf32>)
  linalg.batch_matmul
      indexing_maps = [affine_map<(l, b, h, k) -> (l, b, k)>,
                       affine_map<(l, b, h, k) -> (l, h, k)>,
                       affine_map<(l, b, h, k) -> (l, b, h)>]
      ins(%h, %r : memref<3x?x128xf32>, memref<3x512x128xf32>)
      outs(%c : memref<3x?x512xf32>)
  return
}

// -----

// Not for cuBLAS: a column-strided operand, an integer product.
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: call
// CHECK: linalg.matmul
// CHECK: linalg.matmul
func.func @left_alone(%a: memref<8x16xf32, strided<[1, 8]>>, %b: memref<16x32xf32>, %c: memref<8x32xf32>,
                      %ia: memref<8x16xi32>, %ib: memref<16x32xi32>, %ic: memref<8x32xi32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32, strided<[1, 8]>>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  linalg.matmul ins(%ia, %ib : memref<8x16xi32>, memref<16x32xi32>) outs(%ic : memref<8x32xi32>)
  return
}

// -----

// The hoisted input projection after reshape propagation: a contraction over
// (t, b, n, k) on contiguous [T, B, K] and [T, B, N] buffers. Its two row
// dimensions fold into one (collapse_shape views) and it becomes one call
// with m = T·B.
// CHECK-LABEL: func.func @hoisted_projection
// CHECK-DAG: %[[XC:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : memref<?x?x64xf32> into memref<?x64xf32>
// CHECK-DAG: %[[PC:.*]] = memref.collapse_shape %arg2 {{\[\[}}0, 1], [2]] : memref<?x?x512xf32> into memref<?x512xf32>
// CHECK-NOT: linalg.generic
// CHECK: call @lstmRuntimeGemmStridedBatched(%c0_i32, %c0_i32, %c1_i32, %{{.*}}, %c512_i64, %c64_i64,
func.func @hoisted_projection(%x: memref<?x?x64xf32>, %w: memref<512x64xf32>, %p: memref<?x?x512xf32>) {
  linalg.generic {indexing_maps = [affine_map<(t, b, n, k) -> (t, b, k)>,
                                   affine_map<(t, b, n, k) -> (n, k)>,
                                   affine_map<(t, b, n, k) -> (t, b, n)>],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x64xf32>, memref<512x64xf32>) outs(%p : memref<?x?x512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The state carried through the time loop has a fully dynamic layout after
// bufferization: the call is guarded by a run-time check that its rows are
// contiguous and its leading dimension valid, with the kernel as fallback.
// CHECK-LABEL: func.func @dynamic_layout
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[STRIDES:.*]]:2 = memref.extract_strided_metadata %arg0
// CHECK-DAG: %[[UNIT:.*]] = arith.cmpi eq, %[[STRIDES]]#1, %c1
// CHECK-DAG: %[[LD:.*]] = arith.cmpi sge, %[[STRIDES]]#0, %c128
// CHECK: %[[OK:.*]] = arith.andi %[[UNIT]], %[[LD]]
// CHECK: scf.if %[[OK]] {
// CHECK: call @lstmRuntimeGemmStridedBatched
// CHECK: } else {
// CHECK: linalg.fill
// CHECK: linalg.matmul
// CHECK: }
// MIN-LABEL: func.func @dynamic_layout
// MIN: arith.cmpi eq
// MIN: arith.cmpi sge
// MIN: %[[LAYOUT:.*]] = arith.andi
// MIN: %[[LARGE:.*]] = arith.cmpi sge, %{{.*}}, %c100000
// MIN: %[[BOTH:.*]] = arith.andi %[[LAYOUT]], %[[LARGE]]
// MIN: scf.if %[[BOTH]]
func.func @dynamic_layout(%h: memref<?x128xf32, strided<[?, ?], offset: ?>>, %r: memref<512x128xf32>, %c: memref<?x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x512xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%h, %r : memref<?x128xf32, strided<[?, ?], offset: ?>>, memref<512x128xf32>) outs(%c : memref<?x512xf32>)
  return
}

// -----

// Run-time checks (an scf.if of cf.asserts, as lstm-generate-runtime-checks
// puts them before the contraction) between the zero fill and the
// contraction: beta = 0 still replaces the fill. A store in between keeps
// it (beta = 1 after the fill).
// CHECK-LABEL: func.func @fill_then_checks
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NOT: linalg.fill
// CHECK: scf.if
// CHECK: cf.assert
// CHECK: call @lstmRuntimeGemmStridedBatched({{.*}}, %[[ZERO]], %{{.*}}, %c512_i64, %c0_i64, %c1_i64)
// CHECK-LABEL: func.func @fill_then_store
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: linalg.fill
// CHECK: memref.store
// CHECK: call @lstmRuntimeGemmStridedBatched({{.*}}, %[[ONE]], %{{.*}}, %c512_i64, %c0_i64, %c1_i64)
func.func @fill_then_checks(%x: memref<?x64xf32>, %w: memref<512x64xf32>, %c: memref<?x512xf32>,
                            %check: i1, %ok: i1) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x512xf32>)
  scf.if %check {
    cf.assert %ok, "a run-time check"
  }
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x64xf32>, memref<512x64xf32>) outs(%c : memref<?x512xf32>)
  return
}
func.func @fill_then_store(%x: memref<?x64xf32>, %w: memref<512x64xf32>, %c: memref<?x512xf32>,
                           %other: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %i = arith.constant 0 : index
  linalg.fill ins(%zero : f32) outs(%c : memref<?x512xf32>)
  memref.store %zero, %other[%i] : memref<4xf32>
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x64xf32>, memref<512x64xf32>) outs(%c : memref<?x512xf32>)
  return
}

// -----

// A product whose operands lstm-split-tf32-gemms split (marked
// lstm.tf32_operands) runs with TF32 arithmetic (code 1) under the fp32
// compute type, beside an unmarked one in fp32 (code 0).
// CHECK-LABEL: func.func @split_operands
// CHECK: call @lstmRuntimeGemmStridedBatched(%c1_i32, %c0_i32, %c1_i32, %{{.*}}, %c512_i64, %c192_i64,
// CHECK: call @lstmRuntimeGemmStridedBatched(%c0_i32, %c0_i32, %c1_i32, %{{.*}}, %c512_i64, %c64_i64,
// TF32-LABEL: func.func @split_operands
// TF32-COUNT-2: call @lstmRuntimeGemmStridedBatched(%c1_i32,
func.func @split_operands(%x3: memref<?x192xf32>, %w3: memref<512x192xf32>, %x: memref<?x64xf32>,
                          %w: memref<512x64xf32>, %c: memref<?x512xf32>) {
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      {lstm.tf32_operands}
      ins(%x3, %w3 : memref<?x192xf32>, memref<512x192xf32>) outs(%c : memref<?x512xf32>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
      ins(%x, %w : memref<?x64xf32>, memref<512x64xf32>) outs(%c : memref<?x512xf32>)
  return
}
