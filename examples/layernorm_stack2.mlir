// layernorm_stack2.mlir: a 2-layer layer-normalised LSTM (Ba, Kiros & Hinton 2016): layer
// norm over the 4H gate pre-activations and over c_t (VARIANTS.md)
//
// Each layer:
//     a_t = W x_t + bW + R h_{t-1} + bR                        [B, 4H], gate order i, f, g, o
//     LN(v; g, b) = (1 + g) * (v - mean(v)) / sqrt(var(v) + eps) + b
//                   (mean and biased variance over the features of each row, eps = 1e-5)
//     i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of the blocks of LN(a_t; gA, bA)
//     c_t = f * c_{t-1} + i * g
//     h_t = o * tanh(LN(c_t; gC, bC))
// layer 0 reads x, layer k > 0 reads the output sequence h of layer k-1. The gain is
// written 1 + g (g = 0 is the plain normalisation): (1 + g) * v + b is a gate with addend
// v, peephole g on v and bias b. Means are products with the constant averaging matrices
// %avg512 = dense<1/512> and %avg128 = dense<1/128>, and eps is the constant bias %eps512
// / %eps128: both layers' cells read the same constants, which lstm-wavefront stacks with
// the weights (constants the GPU kernels and cuBLAS must find in device memory).
//
// W<k> [512, K] (K = 64 for k = 0, 128 otherwise), R<k> [512, 128], bW<k>, bR<k> [512]
// as in nn.LSTM; gA<k>, bA<k> [512] the gate normalisation's gain offset and bias,
// gC<k>, bC<k> [128] those of c_t. h0, c0, hT, cT are indexed by layer; y is the
// output sequence of the last layer.
//
// Arguments:
//   %x    tensor<?x?x64xf32>
//   %h0   tensor<2x?x128xf32>
//   %c0   tensor<2x?x128xf32>
//   %W0   tensor<512x64xf32>
//   %R0   tensor<512x128xf32>
//   %bW0  tensor<512xf32>
//   %bR0  tensor<512xf32>
//   %gA0  tensor<512xf32>
//   %bA0  tensor<512xf32>
//   %gC0  tensor<128xf32>
//   %bC0  tensor<128xf32>
//   %W1   tensor<512x128xf32>
//   %R1   tensor<512x128xf32>
//   %bW1  tensor<512xf32>
//   %bR1  tensor<512xf32>
//   %gA1  tensor<512xf32>
//   %bA1  tensor<512xf32>
//   %gC1  tensor<128xf32>
//   %bC1  tensor<128xf32>
// Results:
//   y     tensor<?x?x128xf32>
//   hT    tensor<2x?x128xf32>
//   cT    tensor<2x?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<2x?x128xf32>,
    %c0: tensor<2x?x128xf32>,
    %W0: tensor<512x64xf32>,
    %R0: tensor<512x128xf32>,
    %bW0: tensor<512xf32>,
    %bR0: tensor<512xf32>,
    %gA0: tensor<512xf32>,
    %bA0: tensor<512xf32>,
    %gC0: tensor<128xf32>,
    %bC0: tensor<128xf32>,
    %W1: tensor<512x128xf32>,
    %R1: tensor<512x128xf32>,
    %bW1: tensor<512xf32>,
    %bR1: tensor<512xf32>,
    %gA1: tensor<512xf32>,
    %bA1: tensor<512xf32>,
    %gC1: tensor<128xf32>,
    %bC1: tensor<128xf32>)
    -> (tensor<?x?x128xf32>, tensor<2x?x128xf32>, tensor<2x?x128xf32>) {
  // The averaging matrices (1/512 and 1/128 are exact in f32) and eps.
  %avg512 = arith.constant dense<0.001953125> : tensor<512x512xf32>
  %avg128 = arith.constant dense<0.0078125> : tensor<128x128xf32>
  %eps512 = arith.constant dense<1.0e-05> : tensor<512xf32>
  %eps128 = arith.constant dense<1.0e-05> : tensor<128xf32>
  %c0_i = arith.constant 0 : index
  %c1_i = arith.constant 1 : index
  %B = tensor.dim %h0, %c1_i : tensor<2x?x128xf32>

  // ----- Layer 0 ------------------------------------------------------------
  %h0_l0 = tensor.extract_slice %h0[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<2x?x128xf32> to tensor<?x128xf32>
  %c0_l0 = tensor.extract_slice %c0[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<2x?x128xf32> to tensor<?x128xf32>
  // The gate normalisation's parameters per gate (order i, f, g, o).
  %gAi0 = tensor.extract_slice %gA0[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bAi0 = tensor.extract_slice %bA0[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %gAf0 = tensor.extract_slice %gA0[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bAf0 = tensor.extract_slice %bA0[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %gAg0 = tensor.extract_slice %gA0[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bAg0 = tensor.extract_slice %bA0[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %gAo0 = tensor.extract_slice %gA0[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bAo0 = tensor.extract_slice %bA0[384] [128] [1] : tensor<512xf32> to tensor<128xf32>

  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0_l0, %c0_l0 : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    // a = W x_t + bW + R h + bR, all four gates.
    %a = lstm.gate identity (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%W0, %R0 : tensor<512x64xf32>, tensor<512x128xf32>)
        bias(%bW0, %bR0 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    // (a - mean(a)) / sqrt(var(a) + eps)
    %a_mean = lstm.gate identity (%a : tensor<?x512xf32>) weights(%avg512 : tensor<512x512xf32>) -> tensor<?x512xf32>
    %a_d = arith.subf %a, %a_mean : tensor<?x512xf32>
    %a_d2 = arith.mulf %a_d, %a_d : tensor<?x512xf32>
    %a_var = lstm.gate identity (%a_d2 : tensor<?x512xf32>) weights(%avg512 : tensor<512x512xf32>)
        bias(%eps512 : tensor<512xf32>) -> tensor<?x512xf32>
    %a_rstd = math.rsqrt %a_var : tensor<?x512xf32>
    %a_n = arith.mulf %a_d, %a_rstd : tensor<?x512xf32>
    %b = tensor.dim %a_n, %c0_i : tensor<?x512xf32>
    %ni = tensor.extract_slice %a_n[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    %nf = tensor.extract_slice %a_n[0, 128] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    %ng = tensor.extract_slice %a_n[0, 256] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    %no = tensor.extract_slice %a_n[0, 384] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    // act((1 + gA) * n + bA), per gate.
    %i = lstm.gate sigmoid add(%ni : tensor<?x128xf32>) bias(%bAi0 : tensor<128xf32>)
        peephole(%gAi0, %ni : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid add(%nf : tensor<?x128xf32>) bias(%bAf0 : tensor<128xf32>)
        peephole(%gAf0, %nf : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %g = lstm.gate tanh add(%ng : tensor<?x128xf32>) bias(%bAg0 : tensor<128xf32>)
        peephole(%gAg0, %ng : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %o = lstm.gate sigmoid add(%no : tensor<?x128xf32>) bias(%bAo0 : tensor<128xf32>)
        peephole(%gAo0, %no : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %ig = arith.mulf %i, %g : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x128xf32>
    // tanh(LN(c_t; gC, bC))
    %c_mean = lstm.gate identity (%c_new : tensor<?x128xf32>) weights(%avg128 : tensor<128x128xf32>) -> tensor<?x128xf32>
    %c_d = arith.subf %c_new, %c_mean : tensor<?x128xf32>
    %c_d2 = arith.mulf %c_d, %c_d : tensor<?x128xf32>
    %c_var = lstm.gate identity (%c_d2 : tensor<?x128xf32>) weights(%avg128 : tensor<128x128xf32>)
        bias(%eps128 : tensor<128xf32>) -> tensor<?x128xf32>
    %c_rstd = math.rsqrt %c_var : tensor<?x128xf32>
    %c_n = arith.mulf %c_d, %c_rstd : tensor<?x128xf32>
    %tc = lstm.gate tanh add(%c_n : tensor<?x128xf32>) bias(%bC0 : tensor<128xf32>)
        peephole(%gC0, %c_n : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %h_new = arith.mulf %o, %tc : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }

  // ----- Layer 1 ------------------------------------------------------------
  %h0_l1 = tensor.extract_slice %h0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<2x?x128xf32> to tensor<?x128xf32>
  %c0_l1 = tensor.extract_slice %c0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<2x?x128xf32> to tensor<?x128xf32>
  // The gate normalisation's parameters per gate (order i, f, g, o).
  %gAi1 = tensor.extract_slice %gA1[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bAi1 = tensor.extract_slice %bA1[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %gAf1 = tensor.extract_slice %gA1[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bAf1 = tensor.extract_slice %bA1[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %gAg1 = tensor.extract_slice %gA1[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bAg1 = tensor.extract_slice %bA1[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %gAo1 = tensor.extract_slice %gA1[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bAo1 = tensor.extract_slice %bA1[384] [128] [1] : tensor<512xf32> to tensor<128xf32>

  %y1, %hT1, %cT1 = lstm.layer forward ins(%y0 : tensor<?x?x128xf32>)
      init(%h0_l1, %c0_l1 : tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x128xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>):
    // a = W x_t + bW + R h + bR, all four gates.
    %a = lstm.gate identity (%xt, %h : tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%W1, %R1 : tensor<512x128xf32>, tensor<512x128xf32>)
        bias(%bW1, %bR1 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    // (a - mean(a)) / sqrt(var(a) + eps)
    %a_mean = lstm.gate identity (%a : tensor<?x512xf32>) weights(%avg512 : tensor<512x512xf32>) -> tensor<?x512xf32>
    %a_d = arith.subf %a, %a_mean : tensor<?x512xf32>
    %a_d2 = arith.mulf %a_d, %a_d : tensor<?x512xf32>
    %a_var = lstm.gate identity (%a_d2 : tensor<?x512xf32>) weights(%avg512 : tensor<512x512xf32>)
        bias(%eps512 : tensor<512xf32>) -> tensor<?x512xf32>
    %a_rstd = math.rsqrt %a_var : tensor<?x512xf32>
    %a_n = arith.mulf %a_d, %a_rstd : tensor<?x512xf32>
    %b = tensor.dim %a_n, %c0_i : tensor<?x512xf32>
    %ni = tensor.extract_slice %a_n[0, 0] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    %nf = tensor.extract_slice %a_n[0, 128] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    %ng = tensor.extract_slice %a_n[0, 256] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    %no = tensor.extract_slice %a_n[0, 384] [%b, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
    // act((1 + gA) * n + bA), per gate.
    %i = lstm.gate sigmoid add(%ni : tensor<?x128xf32>) bias(%bAi1 : tensor<128xf32>)
        peephole(%gAi1, %ni : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid add(%nf : tensor<?x128xf32>) bias(%bAf1 : tensor<128xf32>)
        peephole(%gAf1, %nf : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %g = lstm.gate tanh add(%ng : tensor<?x128xf32>) bias(%bAg1 : tensor<128xf32>)
        peephole(%gAg1, %ng : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %o = lstm.gate sigmoid add(%no : tensor<?x128xf32>) bias(%bAo1 : tensor<128xf32>)
        peephole(%gAo1, %no : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %ig = arith.mulf %i, %g : tensor<?x128xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x128xf32>
    // tanh(LN(c_t; gC, bC))
    %c_mean = lstm.gate identity (%c_new : tensor<?x128xf32>) weights(%avg128 : tensor<128x128xf32>) -> tensor<?x128xf32>
    %c_d = arith.subf %c_new, %c_mean : tensor<?x128xf32>
    %c_d2 = arith.mulf %c_d, %c_d : tensor<?x128xf32>
    %c_var = lstm.gate identity (%c_d2 : tensor<?x128xf32>) weights(%avg128 : tensor<128x128xf32>)
        bias(%eps128 : tensor<128xf32>) -> tensor<?x128xf32>
    %c_rstd = math.rsqrt %c_var : tensor<?x128xf32>
    %c_n = arith.mulf %c_d, %c_rstd : tensor<?x128xf32>
    %tc = lstm.gate tanh add(%c_n : tensor<?x128xf32>) bias(%bC1 : tensor<128xf32>)
        peephole(%gC1, %c_n : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %h_new = arith.mulf %o, %tc : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new : tensor<?x128xf32>, tensor<?x128xf32>)
  }

  // Final states stacked as [2, B, 128].
  %hT_empty = tensor.empty(%B) : tensor<2x?x128xf32>
  %hT_acc0 = tensor.insert_slice %hT0 into %hT_empty[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<2x?x128xf32>
  %hT = tensor.insert_slice %hT1 into %hT_acc0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<2x?x128xf32>
  %cT_empty = tensor.empty(%B) : tensor<2x?x128xf32>
  %cT_acc0 = tensor.insert_slice %cT0 into %cT_empty[0, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<2x?x128xf32>
  %cT = tensor.insert_slice %cT1 into %cT_acc0[1, 0, 0] [1, %B, 128] [1, 1, 1] : tensor<?x128xf32> into tensor<2x?x128xf32>
  return %y1, %hT, %cT : tensor<?x?x128xf32>, tensor<2x?x128xf32>, tensor<2x?x128xf32>
}
