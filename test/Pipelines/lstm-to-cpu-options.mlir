// The options of --lstm-to-cpu: by default the products are calls of the
// CPU runtime's sgemm (dgemm for f64) and f32 tanh/exp are polynomials (no
// libm call, no llvm.intr.exp); blas=0 keeps the products as loops,
// approximate-math=0 the math intrinsics; blas-min-size keeps small static
// products as loops. The step's cell runs through the runtime's
// parallel-for (a task reading its operands from a stack slot); threads=0
// calls it directly.
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-to-cpu | FileCheck %s --check-prefix=DEFAULT
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms --lstm-to-cpu | FileCheck %s --check-prefix=THREADS
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms | lstm-opt --pass-pipeline='builtin.module(lstm-to-cpu{blas=0 approximate-math=0})' | FileCheck %s --check-prefix=OFF
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms | lstm-opt --pass-pipeline='builtin.module(lstm-to-cpu{blas-min-size=1000000000000})' | FileCheck %s --check-prefix=SMALL
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-combine-gate-gemms | lstm-opt --pass-pipeline='builtin.module(lstm-to-cpu{threads=0})' | FileCheck %s --check-prefix=SERIAL
// The hoisted input projections stay whole by default; chunk-bytes=N
// computes them N bytes of steps a thread of the products at a time
// (lstm-chunk-hoisted-projections, the threads from the CPU runtime).
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir '--lstm-to-cpu=chunk-bytes=1048576' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=CHUNKS
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-to-cpu --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHOLE
// Hoisted projections are chosen by the thread count at run time from 3
// threads up (lstm-hoist-by-threads, first); hoist-min-threads=1 always
// hoists (the pass does not run).
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir --lstm-to-cpu --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=BY-THREADS
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir '--lstm-to-cpu=hoist-min-threads=5 chunk-bytes=4096' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=BY-FIVE
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm.mlir '--lstm-to-cpu=hoist-min-threads=1' --dump-pass-pipeline -o /dev/null 2>&1 | FileCheck %s --check-prefix=ALWAYS

// DEFAULT: llvm.call @lstmRuntimeCpuSgemm
// DEFAULT-NOT: llvm.intr.exp
// DEFAULT-NOT: llvm.intr.tanh
// DEFAULT: llvm.call @_mlir_memref_to_llvm_alloc
// DEFAULT-NOT: llvm.call @malloc

// THREADS: %[[TASK:.*]] = llvm.mlir.addressof @[[BODY:.*]]_task : !llvm.ptr
// THREADS: llvm.call @lstmRuntimeCpuParallelFor(%[[TASK]],
// THREADS: llvm.func @[[BODY]](
// THREADS: llvm.func internal @[[BODY]]_task(
// THREADS: llvm.call @[[BODY]](

// SERIAL-NOT: lstmRuntimeCpuParallelFor
// SERIAL-NOT: _task

// OFF-NOT: lstmRuntimeCpuSgemm
// OFF-DAG: llvm.intr.exp
// OFF-DAG: llvm.intr.tanh

// The batch of the LSTM is dynamic: below the threshold at run time, the
// loops run instead of the call.
// SMALL-DAG: llvm.call @lstmRuntimeCpuSgemm
// SMALL-DAG: llvm.mlir.constant(1000000000000 : index)

// CHUNKS: builtin.module(
// CHUNKS-NEXT: lstm-hoist-by-threads{
// CHUNKS-NEXT: lstm-chunk-hoisted-projections{chunk-bytes=1048576 threads-function=lstmRuntimeCpuGetThreads weights-per-chunk=2}
// WHOLE-NOT: lstm-chunk-hoisted-projections
// BY-THREADS: builtin.module(
// BY-THREADS-NEXT: lstm-hoist-by-threads{min-threads=3 threads-function=lstmRuntimeCpuGetThreads}
// BY-FIVE: builtin.module(
// BY-FIVE-NEXT: lstm-hoist-by-threads{min-threads=5 threads-function=lstmRuntimeCpuGetThreads}
// BY-FIVE-NEXT: lstm-chunk-hoisted-projections{chunk-bytes=4096
// ALWAYS-NOT: lstm-hoist-by-threads
