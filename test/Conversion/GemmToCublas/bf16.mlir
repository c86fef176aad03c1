// RUN: lstm-opt %s --lstm-gemm-to-cublas=compute-type=bf16 --canonicalize --cse -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-gemm-to-cublas="compute-type=bf16 min-size=100000" --convert-linalg-to-parallel-loops --canonicalize -split-input-file | FileCheck %s --check-prefix=KERNEL

// Products on bf16 operands (what lstm-gemm-operands-to-bf16 leaves, once
// bufferized) with compute-type=bf16: the call passes the bf16 compute type
// (2, LSTM_RUNTIME_COMPUTE_BF16) and byte offsets of 2 per element.
#in = affine_map<(b, h, k) -> (b, k)>
#w = affine_map<(b, h, k) -> (h, k)>
#acc = affine_map<(b, h, k) -> (b, h)>
// CHECK-LABEL: func.func @gate_product
// CHECK-SAME: (%[[X:.*]]: memref<?x64xbf16, strided<[64, 1], offset: ?>>, %[[W:.*]]: memref<512x64xbf16>, %[[C:.*]]: memref<?x512xf32>)
// CHECK-NOT: linalg.
// CHECK: %{{.*}}, %[[XOFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[X]]
// CHECK: arith.muli %[[XOFF]], %c2
// CHECK: call @lstmRuntimeGemmStridedBatched(%c2_i32, %c0_i32, %c1_i32, %{{.*}}, %c512_i64, %c64_i64,
// CHECK-NOT: linalg.
// With min-size, the product small at run time stays a generated kernel that
// reads the bf16 operands and extends them to f32 before the multiply-add.
// KERNEL-LABEL: func.func @gate_product
// KERNEL: scf.if %{{.*}} {
// KERNEL:   call @lstmRuntimeGemmStridedBatched(%c2_i32,
// KERNEL: } else {
// KERNEL:   scf.parallel
// KERNEL:     scf.for
// KERNEL-DAG:   %[[A:.*]] = memref.load %{{.*}} : memref<?x64xbf16, strided<[64, 1], offset: ?>>
// KERNEL-DAG:   %[[B:.*]] = memref.load %{{.*}} : memref<512x64xbf16>
// KERNEL-DAG:   %[[O:.*]] = memref.load %{{.*}} : memref<?x512xf32>
// KERNEL-DAG:   %[[A32:.*]] = arith.extf %[[A]] : bf16 to f32
// KERNEL-DAG:   %[[B32:.*]] = arith.extf %[[B]] : bf16 to f32
// KERNEL:       %[[P:.*]] = arith.mulf %[[A32]], %[[B32]] : f32
// KERNEL:       %[[S:.*]] = arith.addf %[[O]], %[[P]] : f32
// KERNEL:       memref.store %[[S]], %{{.*}} : memref<?x512xf32>
func.func @gate_product(%x: memref<?x64xbf16, strided<[64, 1], offset: ?>>,
                        %w: memref<512x64xbf16>, %c: memref<?x512xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x512xf32>)
  linalg.generic {indexing_maps = [#in, #w, #acc],
                  iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x64xbf16, strided<[64, 1], offset: ?>>, memref<512x64xbf16>)
      outs(%c : memref<?x512xf32>) {
  ^bb0(%a: bf16, %b: bf16, %o: f32):
    %a32 = arith.extf %a : bf16 to f32
    %b32 = arith.extf %b : bf16 to f32
    %p = arith.mulf %a32, %b32 : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// A named product on bf16 operands: a call, or below min-size (static sizes)
// a kernel with linalg.matmul's cast semantics.
// CHECK-LABEL: func.func @named
// CHECK: call @lstmRuntimeGemmStridedBatched(%c2_i32, %c0_i32, %c0_i32, %c8_i64, %c32_i64, %c16_i64,
// KERNEL-LABEL: func.func @named
// KERNEL-NOT: call
// KERNEL: scf.parallel
// KERNEL:   scf.for
// KERNEL-DAG: %[[A:.*]] = memref.load %{{.*}} : memref<8x16xbf16>
// KERNEL-DAG: %[[B:.*]] = memref.load %{{.*}} : memref<16x32xbf16>
// KERNEL-DAG: arith.extf %[[A]] : bf16 to f32
// KERNEL-DAG: arith.extf %[[B]] : bf16 to f32
// KERNEL:     arith.mulf
func.func @named(%a: memref<8x16xbf16>, %b: memref<16x32xbf16>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xbf16>, memref<16x32xbf16>) outs(%c : memref<8x32xf32>)
  return
}
