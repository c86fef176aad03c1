// compute-type=bf16 on an fp32 network: lstm-gemm-operands-to-bf16 runs at
// tensor level, after the pointwise fusion and before bufferization; the
// GEMMs then go to cuBLAS with the bf16 compute type (no GPU needed: the
// kernels are compiled, not run).
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-optimize | lstm-opt --lstm-to-nvvm="compute-type=bf16" | FileCheck %s
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-optimize | lstm-opt --lstm-to-nvvm="compute-type=bf16" -mlir-print-ir-after=lstm-gemm-operands-to-bf16 -o /dev/null 2>&1 | FileCheck %s --check-prefix=TENSOR
// RUN: lstm-opt --lstm-to-nvvm=compute-type=bf16 --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// fp32 (the default) and tf32 do not run the pass: no bf16 anywhere.
// RUN: lstm-opt --lstm-to-nvvm --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=FP32
// RUN: lstm-opt --lstm-to-nvvm --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=PADFP32
// RUN: lstm-opt --lstm-to-nvvm=compute-type=tf32 --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=PADTF32
// RUN: lstm-opt --lstm-to-nvvm=compute-type=tf32 --dump-pass-pipeline -o /dev/null < /dev/null 2>&1 | FileCheck %s --check-prefix=FP32
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-optimize | lstm-opt --lstm-to-nvvm=compute-type=tf32 | FileCheck %s --check-prefix=FP32

// The optimised LSTM has two GEMMs, the hoisted input projection and the
// step's recurrent product; both are calls with LSTM_RUNTIME_COMPUTE_BF16 (2).
// CHECK-LABEL: llvm.func @forward
// CHECK: %[[BF16:.*]] = llvm.mlir.constant(2 : i32) : i32
// CHECK: llvm.call @lstmRuntimeGemmStridedBatched(%[[BF16]],
// CHECK: llvm.call @lstmRuntimeGemmStridedBatched(%[[BF16]],
// CHECK-NOT: llvm.call @lstmRuntimeGemmStridedBatched
// CHECK: gpu.binary

// At tensor level: the stacked weights (W for the hoisted projection, R for
// the recurrent product) and the input sequence are rounded before the time
// loop, the state h (a row of its output sequence) once per step, first
// thing in the loop; the contractions
// read them and the fused pointwise work of the step stays f32.
// TENSOR-LABEL: IR Dump After GemmOperandsToBF16Pass
// TENSOR: func.func @forward
// TENSOR-DAG: %[[W:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32x4xf32>) outs(%{{.*}} : tensor<32x4xbf16>)
// TENSOR-DAG: %[[R:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<32x8xf32>) outs(%{{.*}} : tensor<32x8xbf16>)
// TENSOR-DAG: %[[X:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<?x4xf32>) outs(%{{.*}} : tensor<?x4xbf16>)
// TENSOR: linalg.generic {{.*}} ins(%[[X]], %[[W]] : tensor<?x4xbf16>, tensor<32x4xbf16>) outs(%{{.*}} : tensor<?x32xf32>)
// TENSOR: scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %[[HS:.*]] = %{{.*}}) -> (tensor<?x8xf32>, tensor<?x?x8xf32>) {
// TENSOR-NOT: scf.yield {{.*}} : tensor<
// TENSOR: %[[H:.*]] = tensor.extract_slice %[[HS]]
// TENSOR-NOT: scf.yield {{.*}} : tensor<
// TENSOR: %[[H16:.*]] = linalg.generic {{.*}} ins(%[[H]] : tensor<?x8xf32>) outs(%{{.*}} : tensor<?x8xbf16>)
// TENSOR-NOT: scf.yield {{.*}} : tensor<
// TENSOR: linalg.generic {{.*}} ins(%[[H16]], %[[R]] : tensor<?x8xbf16>, tensor<32x8xbf16>) outs(%{{.*}} : tensor<?x32xf32>)
// TENSOR-NEXT: ^bb0(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: f32):
// TENSOR-NOT: arith.truncf
// TENSOR: scf.yield {{.*}} : tensor<

// Where it runs: after the tensor level's fusion and clean-up (and after
// lstm-concat-summed-products, so that a concatenated operand is rounded
// once, and lstm-accumulate-into-products), right before bufferization.
// PIPELINE: lstm-fuse-pointwise-generics,
// PIPELINE: cse
// PIPELINE-NEXT: ),
// PIPELINE-NEXT: func.func(
// PIPELINE-NEXT: lstm-collapse-before-slice
// PIPELINE-NEXT: ),
// PIPELINE-NEXT: lstm-concat-summed-products{pad-columns=false pad-stacks=false split-columns=true stack-batches=false},
// PIPELINE-NEXT: any(
// PIPELINE-NEXT: lstm-accumulate-into-products
// PIPELINE-NEXT: ),
// PIPELINE-NEXT: lstm-gemm-operands-to-bf16,
// PIPELINE-NEXT: func.func(
// PIPELINE-NEXT: lstm-read-only-arguments
// PIPELINE-NEXT: ),
// PIPELINE-NEXT: lstm-write-sequences-in-place,
// PIPELINE-NEXT: lstm-share-assembled-columns,
// PIPELINE-NEXT: lstm-write-results-in-place,
// PIPELINE-NEXT: lstm-separate-shared-inits,
// PIPELINE-NEXT: empty-tensor-to-alloc-tensor,
// PIPELINE-NEXT: one-shot-bufferize

// FP32-NOT: lstm-gemm-operands-to-bf16
// Products of different widths never concatenated with zero weights
// (lstm-concat-summed-products' pad-columns); products of equal extents
// stacked as one batch in fp32 (stack-batches), and those of equal depths
// but different widths too, the narrower one's weights padded (pad-stacks).
// PADFP32: lstm-concat-summed-products{pad-columns=false pad-stacks=true split-columns=true stack-batches=true}
// PADTF32: lstm-concat-summed-products{pad-columns=false pad-stacks=false split-columns=true stack-batches=false}
// FP32-NOT: bf16
