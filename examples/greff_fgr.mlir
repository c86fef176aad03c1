// greff_fgr.mlir: Greff et al. variant FGR, full gate recurrence
//
// z_t = tanh   (W_z x_t + R_z h_{t-1} + bW_z + bR_z)
// i_t = sigmoid(W_i x_t + R_i h_{t-1} + p_i * c_{t-1} + bW_i + bR_i)
// f_t = sigmoid(W_f x_t + R_f h_{t-1} + p_f * c_{t-1} + bW_f + bR_f)
// c_t = z_t * i_t + c_{t-1} * f_t
// o_t = sigmoid(W_o x_t + R_o h_{t-1} + p_o * c_t + bW_o + bR_o)   (peeps at the NEW c_t)
// h_t = tanh(c_t) * o_t
//
// where each gate a in {i, f, o} also gets
//     + Rg_ai i_{t-1} + Rg_af f_{t-1} + Rg_ao o_{t-1}
// (the previous step's gate activations are recurrent state; z gets no such term).
//
// W, R, bW, bR stack the gates in the order i, f, z, o; P holds the peephole rows
// p_i, p_f, p_o. i0, f0, o0 are i_{-1}, f_{-1}, o_{-1}. Rg is [3H, 3H] with block
// (a, s) = Rg[a*128:(a+1)*128, s*128:(s+1)*128] = Rg_as, gate order i, f, o for both
// rows (the gate that receives) and columns (the previous activation), i.e. the
// extra pre-activation of [i | f | o] is [i_{t-1} | f_{t-1} | o_{t-1}] Rg^T.
// y[t] = h_t; the final gate activations are not returned.
//
// Arguments:
//   %x   tensor<?x?x64xf32>
//   %h0  tensor<?x128xf32>
//   %c0  tensor<?x128xf32>
//   %i0  tensor<?x128xf32>
//   %f0  tensor<?x128xf32>
//   %o0  tensor<?x128xf32>
//   %W   tensor<512x64xf32>
//   %R   tensor<512x128xf32>
//   %bW  tensor<512xf32>
//   %bR  tensor<512xf32>
//   %P   tensor<3x128xf32>
//   %Rg  tensor<384x384xf32>
// Results:
//   y    tensor<?x?x128xf32>
//   hT   tensor<?x128xf32>
//   cT   tensor<?x128xf32>

func.func @forward(
    %x: tensor<?x?x64xf32>,
    %h0: tensor<?x128xf32>,
    %c0: tensor<?x128xf32>,
    %i0: tensor<?x128xf32>,
    %f0: tensor<?x128xf32>,
    %o0: tensor<?x128xf32>,
    %W: tensor<512x64xf32>,
    %R: tensor<512x128xf32>,
    %bW: tensor<512xf32>,
    %bR: tensor<512xf32>,
    %P: tensor<3x128xf32>,
    %Rg: tensor<384x384xf32>)
    -> (tensor<?x?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>) {
  // Per-gate blocks of the stacked parameters (gate order i, f, z, o).
  %Wi = tensor.extract_slice %W[0, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ri = tensor.extract_slice %R[0, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWi = tensor.extract_slice %bW[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRi = tensor.extract_slice %bR[0] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wf = tensor.extract_slice %W[128, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rf = tensor.extract_slice %R[128, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWf = tensor.extract_slice %bW[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRf = tensor.extract_slice %bR[128] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wz = tensor.extract_slice %W[256, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Rz = tensor.extract_slice %R[256, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWz = tensor.extract_slice %bW[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRz = tensor.extract_slice %bR[256] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %Wo = tensor.extract_slice %W[384, 0] [128, 64] [1, 1] : tensor<512x64xf32> to tensor<128x64xf32>
  %Ro = tensor.extract_slice %R[384, 0] [128, 128] [1, 1] : tensor<512x128xf32> to tensor<128x128xf32>
  %bWo = tensor.extract_slice %bW[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  %bRo = tensor.extract_slice %bR[384] [128] [1] : tensor<512xf32> to tensor<128xf32>
  // Peephole rows of P (order i, f, o).
  %pi = tensor.extract_slice %P[0, 0] [1, 128] [1, 1] : tensor<3x128xf32> to tensor<128xf32>
  %pf = tensor.extract_slice %P[1, 0] [1, 128] [1, 1] : tensor<3x128xf32> to tensor<128xf32>
  %po = tensor.extract_slice %P[2, 0] [1, 128] [1, 1] : tensor<3x128xf32> to tensor<128xf32>
  // Gate-to-gate blocks of Rg: Rg_<to><from> = Rg[<to>, <from>] (order i, f, o).
  %Rg_ii = tensor.extract_slice %Rg[0, 0] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>
  %Rg_if = tensor.extract_slice %Rg[0, 128] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>
  %Rg_io = tensor.extract_slice %Rg[0, 256] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>
  %Rg_fi = tensor.extract_slice %Rg[128, 0] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>
  %Rg_ff = tensor.extract_slice %Rg[128, 128] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>
  %Rg_fo = tensor.extract_slice %Rg[128, 256] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>
  %Rg_oi = tensor.extract_slice %Rg[256, 0] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>
  %Rg_of = tensor.extract_slice %Rg[256, 128] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>
  %Rg_oo = tensor.extract_slice %Rg[256, 256] [128, 128] [1, 1] : tensor<384x384xf32> to tensor<128x128xf32>

  %y, %hT, %cT, %iT, %fT, %oT = lstm.layer forward ins(%x : tensor<?x?x64xf32>)
      init(%h0, %c0, %i0, %f0, %o0 : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>)
      -> (tensor<?x?x128xf32>), (tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>) {
  ^bb0(%xt: tensor<?x64xf32>, %h: tensor<?x128xf32>, %c: tensor<?x128xf32>, %i_prev: tensor<?x128xf32>, %f_prev: tensor<?x128xf32>, %o_prev: tensor<?x128xf32>):
    %i = lstm.gate sigmoid (%xt, %h, %i_prev, %f_prev, %o_prev : tensor<?x64xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wi, %Ri, %Rg_ii, %Rg_if, %Rg_io : tensor<128x64xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWi, %bRi : tensor<128xf32>, tensor<128xf32>)
        peephole(%pi, %c : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %f = lstm.gate sigmoid (%xt, %h, %i_prev, %f_prev, %o_prev : tensor<?x64xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wf, %Rf, %Rg_fi, %Rg_ff, %Rg_fo : tensor<128x64xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWf, %bRf : tensor<128xf32>, tensor<128xf32>)
        peephole(%pf, %c : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %z = lstm.gate tanh (%xt, %h : tensor<?x64xf32>, tensor<?x128xf32>)
        weights(%Wz, %Rz : tensor<128x64xf32>, tensor<128x128xf32>)
        bias(%bWz, %bRz : tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>
    %iz = arith.mulf %i, %z : tensor<?x128xf32>
    %fc = arith.mulf %f, %c : tensor<?x128xf32>
    %c_new = arith.addf %fc, %iz : tensor<?x128xf32>
    %o = lstm.gate sigmoid (%xt, %h, %i_prev, %f_prev, %o_prev : tensor<?x64xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>)
        weights(%Wo, %Ro, %Rg_oi, %Rg_of, %Rg_oo : tensor<128x64xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>, tensor<128x128xf32>)
        bias(%bWo, %bRo : tensor<128xf32>, tensor<128xf32>)
        peephole(%po, %c_new : tensor<128xf32>, tensor<?x128xf32>) -> tensor<?x128xf32>
    %tanh_c = math.tanh %c_new : tensor<?x128xf32>
    %h_new = arith.mulf %o, %tanh_c : tensor<?x128xf32>
    lstm.yield out(%h_new : tensor<?x128xf32>) state(%h_new, %c_new, %i, %f, %o : tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x128xf32>, tensor<?x128xf32>, tensor<?x128xf32>
}
