// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// A wavefront over three layers that read as many features as they have,
// lowered by --lstm-to-nvvm (no GPU needed). Each diagonal runs one cuBLAS
// call, whose left operand one launch gathers: under TF32 (and bf16, which
// rounds the operand first) a product of depth 2H, [x_t, links | states] ·
// [W | R]ᵀ, the states beside the layers' inputs; under fp32 a batch of 2L
// matrices of depth H, the states below the inputs (on the weights
// transposed before the loop or as they are, whichever the runtime
// measured faster: lstm-transpose-loop-weights); with generated GEMM
// kernels (cublas=false) the input and recurrent products stay two.
// RUN: lstm-opt %S/../../Dialect/LSTM/Transforms/Inputs/wavefront-lstm3-square.mlir --lstm-combine-gate-gemms --lstm-wavefront --lstm-fuse-elementwise | lstm-opt --lstm-to-nvvm=compute-type=tf32 -mlir-print-ir-after=lstm-merge-gpu-launches -o /dev/null 2>&1 | FileCheck %s
// RUN: lstm-opt %S/../../Dialect/LSTM/Transforms/Inputs/wavefront-lstm3-square.mlir --lstm-combine-gate-gemms --lstm-wavefront --lstm-fuse-elementwise | lstm-opt --lstm-to-nvvm=compute-type=bf16 -mlir-print-ir-after=lstm-merge-gpu-launches -o /dev/null 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: lstm-opt %S/../../Dialect/LSTM/Transforms/Inputs/wavefront-lstm3-square.mlir --lstm-combine-gate-gemms --lstm-wavefront --lstm-fuse-elementwise | lstm-opt --lstm-to-nvvm -mlir-print-ir-after=lstm-merge-gpu-launches -o /dev/null 2>&1 | FileCheck %s --check-prefix=FP32
// RUN: lstm-opt %S/../../Dialect/LSTM/Transforms/Inputs/wavefront-lstm3-square.mlir --lstm-combine-gate-gemms --lstm-wavefront --lstm-fuse-elementwise | lstm-opt --lstm-to-nvvm=cublas=false -mlir-print-ir-after=lstm-merge-gpu-launches -o /dev/null 2>&1 | FileCheck %s --check-prefix=KERNELS
// RUN: lstm-opt --lstm-to-nvvm --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// RUN: lstm-opt --lstm-to-nvvm=cublas=false --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=NOT-KERNELS

// CHECK-LABEL: func.func @forward
// CHECK: scf.for
// CHECK: gpu.alloc {{.*}} : memref<3x?x32x{{.*}}>
// CHECK-NOT: call @lstmRuntimeGemmStridedBatched
// CHECK: gpu.launch
// CHECK-NOT: gpu.launch
// CHECK: call @lstmRuntimeGemmStridedBatched
// CHECK-NOT: call @lstmRuntimeGemmStridedBatched
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :

// FP32-LABEL: func.func @forward
// FP32: scf.for
// FP32: gpu.alloc {{.*}} : memref<6x?x16xf32>
// FP32-NOT: call @lstmRuntimeGemmStridedBatched
// FP32: gpu.launch
// FP32-NOT: gpu.launch
// FP32: scf.if %{{.*}} -> (memref<6x?x64xf32>)
// FP32: call @lstmRuntimeGemmStridedBatched(%c0_i32, %c0_i32, %c0_i32, {{.*}}, %c6_i64)
// FP32: } else {
// FP32: call @lstmRuntimeGemmStridedBatched(%c0_i32, %c0_i32, %c1_i32, {{.*}}, %c6_i64)
// FP32-NOT: call @lstmRuntimeGemmStridedBatched
// FP32: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :

// Under bf16 the gathered operand is rounded by one more launch before the
// one call.
// BF16-LABEL: func.func @forward
// BF16: scf.for
// BF16: gpu.alloc {{.*}} : memref<3x?x32x{{.*}}>
// BF16-NOT: call @lstmRuntimeGemmStridedBatched
// BF16: gpu.alloc {{.*}} : memref<3x?x32xbf16>
// BF16: call @lstmRuntimeGemmStridedBatched
// BF16-NOT: call @lstmRuntimeGemmStridedBatched
// BF16: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :

// The generated kernels: a zero fill and a contraction for each product.
// KERNELS-LABEL: func.func @forward
// KERNELS: scf.for
// KERNELS-NOT: memref<3x?x32x
// KERNELS: scf.yield %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :

// PIPELINE: lstm-concat-summed-products
// NOT-KERNELS-NOT: lstm-concat-summed-products
