// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Constants that the cells of a stack share (JANET's -beta bias, the layer
// norm's averaging matrices and eps) are stacked by lstm-wavefront; the
// stacks, like every buffer of the GPU path, must be device memory. Issue 11:
// they were copied from the host's memref.global by a kernel, which read
// host memory (CUDA_ERROR_ILLEGAL_ADDRESS). Now the host code never takes
// the address of a constant: the copy kernels read the globals of the
// kernels' module, and everything else reads their device copies.
// RUN: lstm-opt %s -split-input-file --lstm-optimize | lstm-opt -split-input-file --lstm-to-nvvm | FileCheck %s
// RUN: lstm-opt %s -split-input-file --lstm-optimize | lstm-opt -split-input-file --lstm-to-nvvm=cublas=false | FileCheck %s

// A 2-layer JANET (input 4, hidden 8; the LSTM with only a forget gate):
// every layer's shifted forget gate reads the one constant -beta as a bias.
// No constant's address in the host function, before the kernels' binary.
// CHECK-LABEL: llvm.func @janet(
// CHECK-NOT: llvm.mlir.addressof @__constant
// CHECK: gpu.binary @janet_kernel
func.func @janet(%x: tensor<?x?x4xf32>, %h0_0: tensor<?x8xf32>, %h0_1: tensor<?x8xf32>,
    %W0: tensor<16x4xf32>, %R0: tensor<16x8xf32>, %b0: tensor<16xf32>,
    %W1: tensor<16x8xf32>, %R1: tensor<16x8xf32>, %b1: tensor<16xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  // -beta, the shift of the forget gate that gates the candidate.
  %nbeta = arith.constant dense<-1.0> : tensor<8xf32>
  %Wf0 = tensor.extract_slice %W0[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wc0 = tensor.extract_slice %W0[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Rf0 = tensor.extract_slice %R0[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rc0 = tensor.extract_slice %R0[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %bf0 = tensor.extract_slice %b0[0] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %bc0 = tensor.extract_slice %b0[8] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0_0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wf0, %Rf0 : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bf0 : tensor<8xf32>) -> tensor<?x8xf32>
    %fs = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wf0, %Rf0 : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bf0, %nbeta : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %i = lstm.one_minus %fs : tensor<?x8xf32>
    %cand = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wc0, %Rc0 : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bc0 : tensor<8xf32>) -> tensor<?x8xf32>
    %fc = arith.mulf %f, %h : tensor<?x8xf32>
    %ic = arith.mulf %i, %cand : tensor<?x8xf32>
    %cn = arith.addf %fc, %ic : tensor<?x8xf32>
    lstm.yield out(%cn : tensor<?x8xf32>) state(%cn : tensor<?x8xf32>)
  }
  %Wf1 = tensor.extract_slice %W1[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Wc1 = tensor.extract_slice %W1[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rf1 = tensor.extract_slice %R1[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rc1 = tensor.extract_slice %R1[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %bf1 = tensor.extract_slice %b1[0] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %bc1 = tensor.extract_slice %b1[8] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x8xf32>) init(%h0_1 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wf1, %Rf1 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bf1 : tensor<8xf32>) -> tensor<?x8xf32>
    %fs = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wf1, %Rf1 : tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bf1, %nbeta : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %i = lstm.one_minus %fs : tensor<?x8xf32>
    %cand = lstm.gate tanh (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wc1, %Rc1 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bc1 : tensor<8xf32>) -> tensor<?x8xf32>
    %fc = arith.mulf %f, %h : tensor<?x8xf32>
    %ic = arith.mulf %i, %cand : tensor<?x8xf32>
    %cn = arith.addf %fc, %ic : tensor<?x8xf32>
    lstm.yield out(%cn : tensor<?x8xf32>) state(%cn : tensor<?x8xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A 2-layer layer-normalised LSTM (input 4, hidden 8): layer norm over the
// 4H gate pre-activations and over c_t, means as products with constant
// averaging matrices, eps a constant bias; both layers read the same
// constants.
// CHECK-LABEL: llvm.func @layernorm(
// CHECK-NOT: llvm.mlir.addressof @__constant
// CHECK: gpu.binary @layernorm_kernel
func.func @layernorm(%x: tensor<?x?x4xf32>, %h0_0: tensor<?x8xf32>, %h0_1: tensor<?x8xf32>, %c0_0: tensor<?x8xf32>, %c0_1: tensor<?x8xf32>,
    %W0: tensor<32x4xf32>, %R0: tensor<32x8xf32>, %b0: tensor<32xf32>, %gA0: tensor<32xf32>, %bA0: tensor<32xf32>, %gC0: tensor<8xf32>, %bC0: tensor<8xf32>,
    %W1: tensor<32x8xf32>, %R1: tensor<32x8xf32>, %b1: tensor<32xf32>, %gA1: tensor<32xf32>, %bA1: tensor<32xf32>, %gC1: tensor<8xf32>, %bC1: tensor<8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  // The averaging matrices (1/32 and 1/8, exact in f32) and eps.
  %avg32 = arith.constant dense<0.03125> : tensor<32x32xf32>
  %avg8 = arith.constant dense<0.125> : tensor<8x8xf32>
  %eps32 = arith.constant dense<1.0e-05> : tensor<32xf32>
  %eps8 = arith.constant dense<1.0e-05> : tensor<8xf32>
  %c0 = arith.constant 0 : index
  %gAi0 = tensor.extract_slice %gA0[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bAi0 = tensor.extract_slice %bA0[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %gAf0 = tensor.extract_slice %gA0[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bAf0 = tensor.extract_slice %bA0[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %gAg0 = tensor.extract_slice %gA0[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bAg0 = tensor.extract_slice %bA0[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %gAo0 = tensor.extract_slice %gA0[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bAo0 = tensor.extract_slice %bA0[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0_0, %c0_0 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %a = lstm.gate identity (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W0, %R0 : tensor<32x4xf32>, tensor<32x8xf32>) bias(%b0 : tensor<32xf32>) -> tensor<?x32xf32>
    // (a - mean(a)) / sqrt(var(a) + eps)
    %am = lstm.gate identity (%a : tensor<?x32xf32>) weights(%avg32 : tensor<32x32xf32>) -> tensor<?x32xf32>
    %ad = arith.subf %a, %am : tensor<?x32xf32>
    %ad2 = arith.mulf %ad, %ad : tensor<?x32xf32>
    %av = lstm.gate identity (%ad2 : tensor<?x32xf32>) weights(%avg32 : tensor<32x32xf32>)
        bias(%eps32 : tensor<32xf32>) -> tensor<?x32xf32>
    %ar = math.rsqrt %av : tensor<?x32xf32>
    %an = arith.mulf %ad, %ar : tensor<?x32xf32>
    %bsz = tensor.dim %an, %c0 : tensor<?x32xf32>
    %ni = tensor.extract_slice %an[0, 0] [%bsz, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
    %nf = tensor.extract_slice %an[0, 8] [%bsz, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
    %ng = tensor.extract_slice %an[0, 16] [%bsz, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
    %no = tensor.extract_slice %an[0, 24] [%bsz, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
    // act((1 + gA) * n + bA), per gate.
    %i = lstm.gate sigmoid add(%ni : tensor<?x8xf32>) bias(%bAi0 : tensor<8xf32>)
        peephole(%gAi0, %ni : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid add(%nf : tensor<?x8xf32>) bias(%bAf0 : tensor<8xf32>)
        peephole(%gAf0, %nf : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh add(%ng : tensor<?x8xf32>) bias(%bAg0 : tensor<8xf32>)
        peephole(%gAg0, %ng : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %o = lstm.gate sigmoid add(%no : tensor<?x8xf32>) bias(%bAo0 : tensor<8xf32>)
        peephole(%gAo0, %no : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %ig = arith.mulf %i, %g : tensor<?x8xf32>
    %cn = arith.addf %fc, %ig : tensor<?x8xf32>
    // tanh(LN(c_t; gC, bC))
    %cm = lstm.gate identity (%cn : tensor<?x8xf32>) weights(%avg8 : tensor<8x8xf32>) -> tensor<?x8xf32>
    %cd = arith.subf %cn, %cm : tensor<?x8xf32>
    %cd2 = arith.mulf %cd, %cd : tensor<?x8xf32>
    %cv = lstm.gate identity (%cd2 : tensor<?x8xf32>) weights(%avg8 : tensor<8x8xf32>)
        bias(%eps8 : tensor<8xf32>) -> tensor<?x8xf32>
    %cr = math.rsqrt %cv : tensor<?x8xf32>
    %cnn = arith.mulf %cd, %cr : tensor<?x8xf32>
    %tc = lstm.gate tanh add(%cnn : tensor<?x8xf32>) bias(%bC0 : tensor<8xf32>)
        peephole(%gC0, %cnn : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  %gAi1 = tensor.extract_slice %gA1[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bAi1 = tensor.extract_slice %bA1[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %gAf1 = tensor.extract_slice %gA1[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bAf1 = tensor.extract_slice %bA1[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %gAg1 = tensor.extract_slice %gA1[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bAg1 = tensor.extract_slice %bA1[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %gAo1 = tensor.extract_slice %gA1[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bAo1 = tensor.extract_slice %bA1[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %y1, %hT1, %cT1 = lstm.layer forward ins(%y0 : tensor<?x?x8xf32>)
      init(%h0_1, %c0_1 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %a = lstm.gate identity (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%W1, %R1 : tensor<32x8xf32>, tensor<32x8xf32>) bias(%b1 : tensor<32xf32>) -> tensor<?x32xf32>
    // (a - mean(a)) / sqrt(var(a) + eps)
    %am = lstm.gate identity (%a : tensor<?x32xf32>) weights(%avg32 : tensor<32x32xf32>) -> tensor<?x32xf32>
    %ad = arith.subf %a, %am : tensor<?x32xf32>
    %ad2 = arith.mulf %ad, %ad : tensor<?x32xf32>
    %av = lstm.gate identity (%ad2 : tensor<?x32xf32>) weights(%avg32 : tensor<32x32xf32>)
        bias(%eps32 : tensor<32xf32>) -> tensor<?x32xf32>
    %ar = math.rsqrt %av : tensor<?x32xf32>
    %an = arith.mulf %ad, %ar : tensor<?x32xf32>
    %bsz = tensor.dim %an, %c0 : tensor<?x32xf32>
    %ni = tensor.extract_slice %an[0, 0] [%bsz, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
    %nf = tensor.extract_slice %an[0, 8] [%bsz, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
    %ng = tensor.extract_slice %an[0, 16] [%bsz, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
    %no = tensor.extract_slice %an[0, 24] [%bsz, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
    // act((1 + gA) * n + bA), per gate.
    %i = lstm.gate sigmoid add(%ni : tensor<?x8xf32>) bias(%bAi1 : tensor<8xf32>)
        peephole(%gAi1, %ni : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid add(%nf : tensor<?x8xf32>) bias(%bAf1 : tensor<8xf32>)
        peephole(%gAf1, %nf : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh add(%ng : tensor<?x8xf32>) bias(%bAg1 : tensor<8xf32>)
        peephole(%gAg1, %ng : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %o = lstm.gate sigmoid add(%no : tensor<?x8xf32>) bias(%bAo1 : tensor<8xf32>)
        peephole(%gAo1, %no : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %ig = arith.mulf %i, %g : tensor<?x8xf32>
    %cn = arith.addf %fc, %ig : tensor<?x8xf32>
    // tanh(LN(c_t; gC, bC))
    %cm = lstm.gate identity (%cn : tensor<?x8xf32>) weights(%avg8 : tensor<8x8xf32>) -> tensor<?x8xf32>
    %cd = arith.subf %cn, %cm : tensor<?x8xf32>
    %cd2 = arith.mulf %cd, %cd : tensor<?x8xf32>
    %cv = lstm.gate identity (%cd2 : tensor<?x8xf32>) weights(%avg8 : tensor<8x8xf32>)
        bias(%eps8 : tensor<8xf32>) -> tensor<?x8xf32>
    %cr = math.rsqrt %cv : tensor<?x8xf32>
    %cnn = arith.mulf %cd, %cr : tensor<?x8xf32>
    %tc = lstm.gate tanh add(%cnn : tensor<?x8xf32>) bias(%bC1 : tensor<8xf32>)
        peephole(%gC1, %cnn : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}
