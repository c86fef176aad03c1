// Constants that the cells of a stack share (JANET's -beta bias, the layer
// norm's averaging matrices and eps) are stacked by lstm-wavefront; the
// stacks, like every buffer of the GPU path, must be device memory. Issue 11:
// they were copied from the host's memref.global by a kernel, which read
// host memory (CUDA_ERROR_ILLEGAL_ADDRESS). Now the host code never takes
// the address of a constant: the copy kernels read the globals of the
// kernels' module, and everything else reads their device copies.
// RUN: lstm-opt %examples/janet_stack3.mlir --lstm-optimize | lstm-opt --lstm-to-nvvm | FileCheck %s
// RUN: lstm-opt %examples/layernorm_stack2.mlir --lstm-optimize | lstm-opt --lstm-to-nvvm | FileCheck %s
// RUN: lstm-opt %examples/layernorm_stack2.mlir --lstm-optimize | lstm-opt --lstm-to-nvvm=cublas=false | FileCheck %s

// No constant's address in the host function, before the kernels' binary.
// CHECK-LABEL: llvm.func @forward(
// CHECK-NOT: llvm.mlir.addressof @__constant
// CHECK: gpu.binary @forward_kernel
