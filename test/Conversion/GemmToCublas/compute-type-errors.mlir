// A product whose precision does not match compute-type is an error, never
// a silent change of precision.
// RUN: not lstm-opt %s --lstm-gemm-to-cublas=compute-type=bf16 -split-input-file 2>&1 | FileCheck %s --check-prefix=FP32-AS-BF16
// RUN: not lstm-opt %s --lstm-gemm-to-cublas -split-input-file 2>&1 | FileCheck %s --check-prefix=BF16-AS-FP32

// FP32-AS-BF16: error: lstm-gemm-to-cublas: compute-type=bf16 needs bf16 operands, and this product's are fp32 (run lstm-gemm-operands-to-bf16 before bufferization, as --lstm-to-nvvm=compute-type=bf16 does)
func.func @fp32_product(%a: memref<8x16xf32>, %b: memref<16x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xf32>, memref<16x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// BF16-AS-FP32: error: lstm-gemm-to-cublas: a bf16 product needs compute-type=bf16
func.func @bf16_product(%a: memref<8x16xbf16>, %b: memref<16x32xbf16>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x16xbf16>, memref<16x32xbf16>) outs(%c : memref<8x32xf32>)
  return
}
