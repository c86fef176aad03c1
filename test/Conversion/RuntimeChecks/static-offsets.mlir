// A static slice offset that no tensor of the sliced type can hold in bounds
// (its byte offset alone exceeds 63 bits) is a compile-time error naming the
// op: the lowering would otherwise compute that offset, overflow and fail on
// a negative memref offset the user never wrote (found by the lstm-opt
// fuzzer, seed 23).
// RUN: lstm-opt %s -split-input-file -verify-diagnostics -lstm-generate-runtime-checks
// RUN: not lstm-opt %s -split-input-file --lstm-to-cpu -o /dev/null 2>&1 | FileCheck %s
// CHECK: error: 'tensor.extract_slice' op offset 9223372036854775807 in dimension 0 is out of bounds of any 'tensor<?x512xf32>': its byte offset does not fit in 63 bits
// CHECK: error: 'tensor.insert_slice' op offset 4611686018427387904 in dimension 1 is out of bounds of any 'tensor<?x?xf16>': its byte offset does not fit in 63 bits
// CHECK-NOT: memref.reinterpret_cast

func.func @extract(%a: tensor<?x512xf32>, %b: index) -> tensor<?x128xf32> {
  // expected-error @below {{offset 9223372036854775807 in dimension 0 is out of bounds of any 'tensor<?x512xf32>'}}
  %s = tensor.extract_slice %a[9223372036854775807, 256] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
  return %s : tensor<?x128xf32>
}

// -----

// f16: 2 bytes an element, so 2^62 elements in are already 2^63 bytes.
func.func @insert(%a: tensor<?x?xf16>, %p: tensor<1x1xf16>) -> tensor<?x?xf16> {
  // expected-error @below {{offset 4611686018427387904 in dimension 1 is out of bounds of any 'tensor<?x?xf16>'}}
  %s = tensor.insert_slice %p into %a[0, 4611686018427387904] [1, 1] [1, 1] : tensor<1x1xf16> into tensor<?x?xf16>
  return %s : tensor<?x?xf16>
}

// -----

// The largest offset that fits is not an error here (the run-time check
// compares it with the extent).
func.func @fits(%a: tensor<?x512xf32>, %b: index) -> tensor<?x128xf32> {
  %s = tensor.extract_slice %a[4503599627370495, 256] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
  return %s : tensor<?x128xf32>
}
