// The fused pointwise work of a step is one kernel on the GPU path and one
// loop nest on the CPU path.
//
// On the CPU, the pipeline accepts lstm.pointwise and leaves only the LLVM dialect.
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise --lstm-to-cpu | FileCheck %s --check-prefix=CPU
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/cho-gru.mlir --lstm-fuse-elementwise --lstm-to-cpu | FileCheck %s --check-prefix=CPU
// CPU: llvm.func @forward
// CPU-NOT: {{ (lstm|linalg|tensor|memref|scf|arith|math|cf|bufferization|func)\.}}
//
// GPU (kernels serialised with the CUDA toolkit, no GPU needed): count the
// launches inside the time loop (the scf.for carrying c; h is read from and
// written to its output sequence in place), just before the loop becomes
// branches. With every GEMM a generated kernel (cublas=false), the LSTM
// after combining: two GEMMs (a fill and a contraction each) and ONE
// pointwise kernel; unfused, its pointwise work takes five kernels.
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise --lstm-to-nvvm=cublas=false -mlir-print-ir-after=gpu-async-region -o /dev/null 2>&1 | FileCheck %s --check-prefix=LSTM
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-to-nvvm=cublas=false -mlir-print-ir-after=gpu-async-region -o /dev/null 2>&1 | FileCheck %s --check-prefix=UNFUSED
// LSTM: scf.for {{.*}} iter_args({{.*}}) -> (memref<?x8xf32>, i1)
// LSTM-COUNT-5: gpu.launch_func
// LSTM-NOT: gpu.launch_func
// LSTM: scf.yield
//
// With the GEMMs in cuBLAS (the default), a step is one kernel putting x_t
// and h side by side, one cuBLAS call for both products
// (lstm-concat-summed-products: the input projection is not hoisted here)
// and one kernel: the fused pointwise work. (The call reads the weights
// transposed before the loop or as they are, whichever the runtime
// measured faster: lstm-transpose-loop-weights.)
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise --lstm-to-nvvm -mlir-print-ir-after=gpu-async-region -o /dev/null 2>&1 | FileCheck %s --check-prefix=CUBLAS
// CUBLAS: scf.for {{.*}} iter_args({{.*}}) -> (memref<?x8xf32>, i1)
// CUBLAS-COUNT-1: gpu.launch_func
// CUBLAS-NOT: gpu.launch_func
// CUBLAS: scf.if %{{.*}} -> (memref<?x32xf32>)
// CUBLAS-NOT: gpu.launch_func
// CUBLAS: call @lstmRuntimeGemmStridedBatched(%{{.*}}, %{{.*}}, %c0_i32,
// CUBLAS: } else {
// CUBLAS-NOT: gpu.launch_func
// CUBLAS: call @lstmRuntimeGemmStridedBatched(%{{.*}}, %{{.*}}, %c1_i32,
// CUBLAS-NOT: call @lstmRuntimeGemmStridedBatched
// CUBLAS-COUNT-1: gpu.launch_func
// CUBLAS-NOT: gpu.launch_func
// CUBLAS: scf.yield
// UNFUSED: scf.for {{.*}} iter_args({{.*}}) -> (memref<?x8xf32>, i1)
// UNFUSED-COUNT-9: gpu.launch_func
// UNFUSED-NOT: gpu.launch_func
// UNFUSED: scf.yield
//
// The fused kernel holds all of the step's pointwise math (3 sigmoids, 2
// tanh), reading the GEMM results through strided views; no other kernel
// has any.
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise --lstm-to-nvvm -mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=KERNEL --implicit-check-not=math.exp --implicit-check-not=math.tanh
// KERNEL: gpu.func @forward_kernel({{.*}}memref<?x8xf32, strided<[32, 1]>>{{.*}}memref<?x8xf32, strided<[32, 1], offset: 24>>
// KERNEL-COUNT-2: math.exp
// KERNEL: math.tanh
// KERNEL: math.exp
// KERNEL: math.tanh
// KERNEL: gpu.return
//
// Cho's GRU: two pointwise kernels per step (its reset is applied before
// the GEMM of n), around three GEMMs (each GEMM's zero fill made right
// before it, lstm-separate-shared-inits, and run in a launch with other
// work, lstm-merge-gpu-launches); its only state, h, is read from and
// written to the output sequence: the loop carries nothing.
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/cho-gru.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise --lstm-to-nvvm=cublas=false -mlir-print-ir-after=gpu-async-region -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHO
// CHO: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHO-COUNT-6: gpu.launch_func
// CHO-NOT: gpu.launch_func
// CHO: gpu.wait
// CHO-NEXT: }
//
// With cuBLAS (and the run-time checks, on by default): the three GEMMs of
// a Cho GRU step, x and h combined and R_n (r ⊙ h) alone, are two cuBLAS
// calls, the reset's pointwise kernel between them, the update's after:
// the pointwise r ⊙ h is not fused into the GEMM that reads it
// (lstm-fuse-pointwise-generics), and no check is left in the loop
// (lstm-hoist-runtime-checks).
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/cho-gru.mlir --lstm-optimize --lstm-to-nvvm -mlir-print-ir-after=gpu-async-region -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHOBLAS
// CHOBLAS: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} {
// CHOBLAS-NOT: cf.assert
// CHOBLAS: call @lstmRuntimeGemmStridedBatched
// CHOBLAS-NOT: cf.assert
// CHOBLAS: gpu.launch_func
// CHOBLAS-NOT: cf.assert
// CHOBLAS: call @lstmRuntimeGemmStridedBatched
// CHOBLAS-NOT: cf.assert
// CHOBLAS: gpu.launch_func
// CHOBLAS-NOT: {{gpu.launch_func|call @lstmRuntimeGemm|cf.assert}}
// CHOBLAS: gpu.wait
// CHOBLAS-NEXT: }
