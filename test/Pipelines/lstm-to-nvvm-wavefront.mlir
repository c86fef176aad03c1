// The wavefronted 3-layer LSTM (Inputs/lstm-stack3.mlir of the pass tests)
// lowers through --lstm-to-nvvm (no GPU needed: the kernels are compiled,
// not run), and one diagonal of the three layers runs
// a fixed number of kernels (every GEMM a generated kernel here: fill and
// contraction), counted between the loop header and its back
// edge (the loop's entry branch passes the induction variable and the
// carried buffers; the run-time checks before it branch with i1s). With
// combined gate GEMMs: 2 zero fills and 2 GEMMs (the batched input GEMM
// of layers 1-2, the batched recurrent GEMM of all layers; layer 0's input
// GEMM is made for all steps before the loop), copies (stacking the input
// products, writing the last layer's output of the diagonal before) and
// pointwise kernels (gate epilogues, cell update, the two state masks),
// those that do not depend on each other in one launch
// (lstm-merge-gpu-launches). Unwavefronted, every one of the 3·T layer
// steps runs 8 kernels (h computed in place in its output sequence; 9
// before the merge); wavefronted, each of the T + 2 diagonals runs 9 (10
// while the last layer's output was copied after the cell, 14 before the
// merge), and the last diagonal's output is copied after the loop.
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm-stack3.mlir --lstm-combine-gate-gemms --lstm-wavefront | lstm-opt --lstm-to-nvvm=cublas=false | FileCheck %s
// RUN: lstm-opt %S/../Dialect/LSTM/Transforms/Inputs/lstm-stack3.mlir --lstm-combine-gate-gemms | lstm-opt --lstm-to-nvvm=cublas=false | FileCheck %s --check-prefix=LAYERS

// CHECK-LABEL: llvm.func @forward
// CHECK: llvm.br ^[[HEAD:bb[0-9]+]]({{.*}} : i64, !llvm.struct
// CHECK-NEXT: ^[[HEAD]](
// CHECK: llvm.cond_br %{{.*}}, ^{{bb[0-9]+}}, ^[[EXIT:bb[0-9]+]]
// CHECK-COUNT-9: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.br ^[[HEAD]](
// CHECK-NEXT: ^[[EXIT]]:
// CHECK: gpu.launch_func
// There is one loop: no other back edge follows.
// CHECK-NOT: llvm.br ^[[HEAD]](
// CHECK: gpu.binary

// Without the wavefront: three time loops of 7 kernels per step (the
// generated GEMMs' zero fills each in a launch with other work).
// LAYERS-LABEL: llvm.func @forward
// LAYERS: llvm.br ^[[H0:bb[0-9]+]]({{.*}} : i64, !llvm.struct
// LAYERS-NEXT: ^[[H0]](
// LAYERS-COUNT-7: gpu.launch_func
// LAYERS-NOT: gpu.launch_func
// LAYERS: llvm.br ^[[H0]](
// LAYERS: llvm.br ^[[H1:bb[0-9]+]]({{.*}} : i64, !llvm.struct
// LAYERS-NEXT: ^[[H1]](
// LAYERS-COUNT-7: gpu.launch_func
// LAYERS-NOT: gpu.launch_func
// LAYERS: llvm.br ^[[H1]](
// LAYERS: llvm.br ^[[H2:bb[0-9]+]]({{.*}} : i64, !llvm.struct
// LAYERS-NEXT: ^[[H2]](
// LAYERS-COUNT-7: gpu.launch_func
// LAYERS-NOT: gpu.launch_func
// LAYERS: llvm.br ^[[H2]](
// LAYERS: gpu.binary
