// Arguments the runner cannot pass are rejected with the function's location.
// RUN: not lstm-run %s --random-inputs 2>&1 | FileCheck %s

// CHECK: unsupported-type.mlir:[[@LINE+1]]:1: error: argument #0 has type 'tensor<4xf16>'; the runner passes ranked tensors of f32, f64, i32 or i64
func.func @forward(%x: tensor<4xf16>) -> tensor<4xf16> {
  return %x : tensor<4xf16>
}
