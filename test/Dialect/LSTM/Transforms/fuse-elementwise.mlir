// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-fuse-elementwise -split-input-file | FileCheck %s --check-prefixes=CHECK,BOTH
// RUN: lstm-opt %s --lstm-combine-gate-gemms --lstm-fuse-elementwise -split-input-file | FileCheck %s --check-prefixes=COMB,BOTH

// Prefixes: CHECK for the pass alone, COMB after lstm-combine-gate-gemms,
// BOTH for either.

// The raw LSTM (x of 4 features, h of 8), each gate keeps its two products
// as a GEMM where it was (an identity gate without biases); biases,
// activations, the cell update and the output are one region.
// CHECK-LABEL: func.func @lstm
// CHECK: lstm.layer forward
// CHECK-NEXT: ^bb0(%[[XT:[^:]*]]: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<?x8xf32>, %[[C:[^:]*]]: tensor<?x8xf32>):
// CHECK-NEXT: %[[PI:.*]] = lstm.gate identity(%[[XT]], %[[H]] : tensor<?x4xf32>, tensor<?x8xf32>) weights({{.*}}) -> tensor<?x8xf32>
// CHECK-NEXT: %[[PF:.*]] = lstm.gate identity(%[[XT]], %[[H]] : {{.*}}) weights({{.*}}) -> tensor<?x8xf32>
// CHECK-NEXT: %[[PG:.*]] = lstm.gate identity(%[[XT]], %[[H]] : {{.*}}) weights({{.*}}) -> tensor<?x8xf32>
// CHECK-NEXT: %[[PO:.*]] = lstm.gate identity(%[[XT]], %[[H]] : {{.*}}) weights({{.*}}) -> tensor<?x8xf32>
// CHECK-NEXT: %[[R:.*]]:2 = lstm.pointwise ins(%[[PI]], %{{.*}}, %{{.*}}, %[[PF]], %{{.*}}, %{{.*}}, %[[PG]], %{{.*}}, %{{.*}}, %[[C]], %[[PO]], %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>, tensor<?x8xf32> {
// CHECK-NEXT: ^bb0(%[[VPI:[^:]*]]: f32, %[[VBWI:[^:]*]]: f32, %[[VBRI:[^:]*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[VC:[^:]*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[S1:.*]] = arith.addf %[[VPI]], %[[VBWI]] : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[VBRI]] : f32
// CHECK-NEXT: arith.constant 1.000000e+00 : f32
// CHECK-NEXT: arith.negf %[[S2]] : f32
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NEXT: %[[I:.*]] = arith.divf
// CHECK: %[[F:.*]] = arith.divf
// CHECK: %[[G:.*]] = math.tanh
// CHECK-NEXT: %[[IG:.*]] = arith.mulf %[[I]], %[[G]] : f32
// CHECK-NEXT: %[[FC:.*]] = arith.mulf %[[F]], %[[VC]] : f32
// CHECK-NEXT: %[[CN:.*]] = arith.addf %[[FC]], %[[IG]] : f32
// CHECK: %[[O:.*]] = arith.divf
// CHECK-NEXT: %[[TC:.*]] = math.tanh %[[CN]] : f32
// CHECK-NEXT: %[[HN:.*]] = arith.mulf %[[O]], %[[TC]] : f32
// CHECK-NEXT: lstm.pointwise_yield %[[CN]], %[[HN]] : f32, f32
// CHECK-NEXT: }
// CHECK-NEXT: lstm.yield out(%[[R]]#1 : tensor<?x8xf32>) state(%[[R]]#1, %[[R]]#0 : tensor<?x8xf32>, tensor<?x8xf32>)

// After combining, the two GEMMs come first and the fused region reads the
// gates' columns of their results (tensor.extract_slice, strided views
// after bufferization) as operands.
// COMB-LABEL: func.func @lstm
// COMB: lstm.layer forward
// COMB: %[[GX:.*]] = lstm.gate identity({{.*}}) weights({{.*}} : tensor<32x4xf32>) -> tensor<?x32xf32>
// COMB: %[[XI:.*]] = tensor.extract_slice %[[GX]][0, 0] [%{{.*}}, 8] [1, 1]
// COMB: %[[GH:.*]] = lstm.gate identity({{.*}}) weights({{.*}} : tensor<32x8xf32>) -> tensor<?x32xf32>
// COMB: %[[HI:.*]] = tensor.extract_slice %[[GH]][0, 0] [%{{.*}}, 8] [1, 1]
// COMB-NOT: lstm.gate
// COMB: %[[R:.*]]:2 = lstm.pointwise ins(%[[XI]], %[[HI]], {{.*}}) -> tensor<?x8xf32>, tensor<?x8xf32> {
// COMB-COUNT-2: math.exp
// COMB: math.tanh
// COMB: math.exp
// COMB: math.tanh
// COMB: lstm.pointwise_yield
// COMB-NEXT: }
// COMB-NEXT: lstm.yield out(%[[R]]#1 : tensor<?x8xf32>) state(%[[R]]#1, %[[R]]#0 : tensor<?x8xf32>, tensor<?x8xf32>)
func.func @lstm(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %c0: tensor<?x8xf32>,
                %W: tensor<32x4xf32>, %R: tensor<32x8xf32>,
                %bW: tensor<32xf32>, %bR: tensor<32xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %Wi = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wf = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wg = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wo = tensor.extract_slice %W[24, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Ri = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rf = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rg = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ro = tensor.extract_slice %R[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bWi = tensor.extract_slice %bW[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bWf = tensor.extract_slice %bW[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bWg = tensor.extract_slice %bW[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bWo = tensor.extract_slice %bW[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRi = tensor.extract_slice %bR[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRf = tensor.extract_slice %bR[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRg = tensor.extract_slice %bR[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bRo = tensor.extract_slice %bR[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %y, %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wi, %Ri : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWi, %bRi : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wf, %Rf : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWf, %bRf : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg, %Rg : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWg, %bRg : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %ig = arith.mulf %i, %g : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %ig : tensor<?x8xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wo, %Ro : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWo, %bRo : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// The peephole LSTM: the output gate peeps at the new c, the region
// computes c_t before o.
// COMB-LABEL: func.func @peephole
// COMB: lstm.layer
// COMB-COUNT-2: lstm.gate identity
// COMB-NOT: lstm.gate
// COMB: lstm.pointwise
// COMB-COUNT-2: math.exp
// COMB: math.tanh
// COMB: %[[IG:.*]] = arith.mulf
// COMB-NEXT: %[[FC:.*]] = arith.mulf
// COMB-NEXT: %[[CN:.*]] = arith.addf %[[FC]], %[[IG]] : f32
// COMB: %[[PO:.*]] = arith.mulf %{{.*}}, %[[CN]] : f32
// COMB-NEXT: arith.addf %{{.*}}, %[[PO]] : f32
// COMB: math.exp
// COMB: math.tanh %[[CN]]
// COMB: lstm.pointwise_yield %[[CN]], %{{.*}} : f32, f32
// COMB-NOT: lstm.pointwise ins
// COMB: lstm.yield
func.func @peephole(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %c0: tensor<?x8xf32>,
                    %W: tensor<32x4xf32>, %R: tensor<32x8xf32>, %b: tensor<32xf32>,
                    %P: tensor<3x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %Wi = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wf = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wz = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wo = tensor.extract_slice %W[24, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Ri = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rf = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rz = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ro = tensor.extract_slice %R[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bi = tensor.extract_slice %b[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bf = tensor.extract_slice %b[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bz = tensor.extract_slice %b[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bo = tensor.extract_slice %b[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %pi = tensor.extract_slice %P[0, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
  %pf = tensor.extract_slice %P[1, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
  %po = tensor.extract_slice %P[2, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
  %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wi, %Ri : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bi : tensor<8xf32>)
        peephole(%pi, %c : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wf, %Rf : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bf : tensor<8xf32>)
        peephole(%pf, %c : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %z = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wz, %Rz : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bz : tensor<8xf32>) -> tensor<?x8xf32>
    %iz = arith.mulf %i, %z : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %iz : tensor<?x8xf32>
    // o peeps at the new c.
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wo, %Ro : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bo : tensor<8xf32>)
        peephole(%po, %cn : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %hT, %cT : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// The PyTorch GRU, r ⊙ (R_n h + b_hn) is pointwise, one region.
// COMB-LABEL: func.func @gru
// COMB: lstm.layer
// COMB-COUNT-2: lstm.gate identity
// COMB-NOT: lstm.gate
// COMB: %[[R:.*]] = lstm.pointwise
// COMB-COUNT-2: math.exp
// COMB: math.tanh
// COMB: arith.subf
// COMB: lstm.pointwise_yield
// COMB-NOT: lstm.pointwise ins
// COMB-NOT: lstm.one_minus
// COMB: lstm.yield out(%[[R]] : tensor<?x8xf32>) state(%[[R]] : tensor<?x8xf32>)
func.func @gru(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
               %W: tensor<24x4xf32>, %R: tensor<24x8xf32>,
               %bW: tensor<24xf32>, %bR: tensor<24xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %Wr = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Wz = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Wn = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Rr = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rz = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rn = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWr = tensor.extract_slice %bW[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bWz = tensor.extract_slice %bW[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bWn = tensor.extract_slice %bW[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRr = tensor.extract_slice %bR[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRz = tensor.extract_slice %bR[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRn = tensor.extract_slice %bR[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wr, %Rr : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWr, %bRr : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wz, %Rz : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bWz, %bRz : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %xn = lstm.gate identity (%xt : tensor<?x4xf32>) weights(%Wn : tensor<8x4xf32>)
        bias(%bWn : tensor<8xf32>) -> tensor<?x8xf32>
    %hn = lstm.gate identity (%h : tensor<?x8xf32>) weights(%Rn : tensor<8x8xf32>)
        bias(%bRn : tensor<8xf32>) -> tensor<?x8xf32>
    // n = tanh(xn + r * hn): the reset after the recurrent product.
    %rhn = arith.mulf %r, %hn : tensor<?x8xf32>
    %npre = arith.addf %xn, %rhn : tensor<?x8xf32>
    %n = math.tanh %npre : tensor<?x8xf32>
    %zc = lstm.one_minus %z : tensor<?x8xf32>
    %zcn = arith.mulf %zc, %n : tensor<?x8xf32>
    %zh = arith.mulf %z, %h : tensor<?x8xf32>
    %hnew = arith.addf %zcn, %zh : tensor<?x8xf32>
    lstm.yield out(%hnew : tensor<?x8xf32>) state(%hnew : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// Cho's GRU, with or without combining: the GEMM of R_n (r ⊙ h) splits the
// step into two groups. The first computes r and r ⊙ h; the second reads
// the GEMM and computes z, n, 1 - z and the new h (z is computed where it
// is used, not passed on).
// BOTH-LABEL: func.func @cho_gru
// BOTH: lstm.layer
// BOTH-NEXT: ^bb0(%{{.*}}: tensor<?x4xf32>, %[[H:.*]]: tensor<?x8xf32>):
// BOTH: %[[RH:.*]] = lstm.pointwise ins({{.*}}%[[H]] : {{.*}}) -> tensor<?x8xf32> {
// BOTH: math.exp
// BOTH-NEXT: arith.addf
// BOTH-NEXT: %[[VR:.*]] = arith.divf
// BOTH-NEXT: %[[VRH:.*]] = arith.mulf %[[VR]], %{{.*}} : f32
// BOTH-NEXT: lstm.pointwise_yield %[[VRH]] : f32
// BOTH: %[[N:.*]] = lstm.gate identity({{.*}}%[[RH]] : {{.*}}tensor<?x8xf32>) weights({{.*}}tensor<8x8xf32>) -> tensor<?x8xf32>
// BOTH-NEXT: %[[HN:.*]] = lstm.pointwise ins({{.*}}%[[N]]{{.*}}%[[H]] : {{.*}}) -> tensor<?x8xf32> {
// BOTH: math.exp
// BOTH: math.tanh
// BOTH: arith.subf
// BOTH: lstm.pointwise_yield
// BOTH-NOT: lstm.pointwise ins
// BOTH: lstm.yield out(%[[HN]] : tensor<?x8xf32>) state(%[[HN]] : tensor<?x8xf32>)
func.func @cho_gru(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                   %W: tensor<24x4xf32>, %R: tensor<24x8xf32>, %b: tensor<24xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %Wr = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Wz = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Wn = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Rr = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rz = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rn = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %br = tensor.extract_slice %b[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bz = tensor.extract_slice %b[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bn = tensor.extract_slice %b[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wr, %Rr : tensor<8x4xf32>, tensor<8x8xf32>) bias(%br : tensor<8xf32>) -> tensor<?x8xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wz, %Rz : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bz : tensor<8xf32>) -> tensor<?x8xf32>
    // The reset before the recurrent product: R_n's operand depends on r.
    %rh = arith.mulf %r, %h : tensor<?x8xf32>
    %n = lstm.gate tanh (%xt, %rh : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wn, %Rn : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bn : tensor<8xf32>) -> tensor<?x8xf32>
    %zc = lstm.one_minus %z : tensor<?x8xf32>
    %zcn = arith.mulf %zc, %n : tensor<?x8xf32>
    %zh = arith.mulf %z, %h : tensor<?x8xf32>
    %hn = arith.addf %zcn, %zh : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// MGU, R_n multiplies f ⊙ h, two groups as in Cho's GRU.
// COMB-LABEL: func.func @mgu
// COMB: lstm.layer
// COMB: %[[G1:.*]]:2 = lstm.pointwise
// COMB: lstm.gate identity(%[[G1]]#1 : tensor<?x8xf32>)
// COMB: %[[G2:.*]] = lstm.pointwise ins({{.*}}%[[G1]]#0{{.*}})
// COMB-NOT: lstm.pointwise ins
// COMB: lstm.yield out(%[[G2]] : tensor<?x8xf32>)
func.func @mgu(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
               %W: tensor<16x4xf32>, %R: tensor<16x8xf32>, %b: tensor<16xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %Wf = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wn = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Rf = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rn = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %bf = tensor.extract_slice %b[0] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %bn = tensor.extract_slice %b[8] [8] [1] : tensor<16xf32> to tensor<8xf32>
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wf, %Rf : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bf : tensor<8xf32>) -> tensor<?x8xf32>
    %fh = arith.mulf %f, %h : tensor<?x8xf32>
    %n = lstm.gate tanh (%xt, %fh : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wn, %Rn : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bn : tensor<8xf32>) -> tensor<?x8xf32>
    // h_new = (1 - f) * h + f * n
    %fc = lstm.one_minus %f : tensor<?x8xf32>
    %fch = arith.mulf %fc, %h : tensor<?x8xf32>
    %fn = arith.mulf %f, %n : tensor<?x8xf32>
    %hn = arith.addf %fch, %fn : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// FGR, the gate activations are state, read by the next step's GEMMs: one
// region yields h, c, i, f, o.
// COMB-LABEL: func.func @fgr
// COMB: lstm.layer
// COMB-COUNT-5: lstm.gate identity
// COMB-NOT: lstm.gate
// COMB: %[[R:.*]]:5 = lstm.pointwise
// COMB-NOT: lstm.pointwise ins
// COMB: lstm.yield state(%[[R]]#4, %[[R]]#2, %[[R]]#0, %[[R]]#1, %[[R]]#3 :
func.func @fgr(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %c0: tensor<?x8xf32>,
               %i0: tensor<?x8xf32>, %f0: tensor<?x8xf32>, %o0: tensor<?x8xf32>,
               %W: tensor<32x4xf32>, %R: tensor<32x8xf32>, %b: tensor<32xf32>,
               %P: tensor<3x8xf32>, %Rg: tensor<24x24xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %Wi = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wf = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wz = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wo = tensor.extract_slice %W[24, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Ri = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rf = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rz = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ro = tensor.extract_slice %R[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bi = tensor.extract_slice %b[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bf = tensor.extract_slice %b[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bz = tensor.extract_slice %b[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bo = tensor.extract_slice %b[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %pi = tensor.extract_slice %P[0, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
  %pf = tensor.extract_slice %P[1, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
  %po = tensor.extract_slice %P[2, 0] [1, 8] [1, 1] : tensor<3x8xf32> to tensor<8xf32>
  // Rg_<to><from> = Rg[<to>, <from>] (order i, f, o).
  %Rg_ii = tensor.extract_slice %Rg[0, 0] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %Rg_if = tensor.extract_slice %Rg[0, 8] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %Rg_io = tensor.extract_slice %Rg[0, 16] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %Rg_fi = tensor.extract_slice %Rg[8, 0] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %Rg_ff = tensor.extract_slice %Rg[8, 8] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %Rg_fo = tensor.extract_slice %Rg[8, 16] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %Rg_oi = tensor.extract_slice %Rg[16, 0] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %Rg_of = tensor.extract_slice %Rg[16, 8] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %Rg_oo = tensor.extract_slice %Rg[16, 16] [8, 8] [1, 1] : tensor<24x24xf32> to tensor<8x8xf32>
  %hT, %cT, %iT, %fT, %oT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0, %i0, %f0, %o0 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>, %ip: tensor<?x8xf32>, %fp: tensor<?x8xf32>, %op: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h, %ip, %fp, %op : tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wi, %Ri, %Rg_ii, %Rg_if, %Rg_io : tensor<8x4xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bi : tensor<8xf32>) peephole(%pi, %c : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%xt, %h, %ip, %fp, %op : tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wf, %Rf, %Rg_fi, %Rg_ff, %Rg_fo : tensor<8x4xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bf : tensor<8xf32>) peephole(%pf, %c : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %z = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wz, %Rz : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bz : tensor<8xf32>) -> tensor<?x8xf32>
    %iz = arith.mulf %i, %z : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %iz : tensor<?x8xf32>
    %o = lstm.gate sigmoid (%xt, %h, %ip, %fp, %op : tensor<?x4xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wo, %Ro, %Rg_oi, %Rg_of, %Rg_oo : tensor<8x4xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>)
        bias(%bo : tensor<8xf32>) peephole(%po, %cn : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield state(%hn, %cn, %i, %f, %o : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %hT, %cT : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// CIFG (raw), f = 1 - i joins the region.
// CHECK-LABEL: func.func @cifg
// CHECK: lstm.layer
// CHECK-COUNT-3: lstm.gate identity
// CHECK: lstm.pointwise
// CHECK: arith.subf
// CHECK-NOT: lstm.one_minus
// CHECK-NOT: lstm.pointwise ins
// CHECK: lstm.yield
func.func @cifg(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %c0: tensor<?x8xf32>,
                %W: tensor<24x4xf32>, %R: tensor<24x8xf32>, %b: tensor<24xf32>,
                %P: tensor<2x8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %Wi = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Wz = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Wo = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<24x4xf32> to tensor<8x4xf32>
  %Ri = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rz = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Ro = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bi = tensor.extract_slice %b[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bz = tensor.extract_slice %b[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bo = tensor.extract_slice %b[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %pi = tensor.extract_slice %P[0, 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
  %po = tensor.extract_slice %P[1, 0] [1, 8] [1, 1] : tensor<2x8xf32> to tensor<8xf32>
  %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0 : tensor<?x8xf32>, tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wi, %Ri : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bi : tensor<8xf32>)
        peephole(%pi, %c : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    // Coupled input and forget gate.
    %f = lstm.one_minus %i : tensor<?x8xf32>
    %z = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wz, %Rz : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bz : tensor<8xf32>) -> tensor<?x8xf32>
    %iz = arith.mulf %i, %z : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %iz : tensor<?x8xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wo, %Ro : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bo : tensor<8xf32>)
        peephole(%po, %cn : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %hT, %cT : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Every layer of a stack gets its own region.
// COMB-LABEL: func.func @stack
// COMB: lstm.layer forward
// COMB: lstm.pointwise ins
// COMB: lstm.layer forward
// COMB: lstm.pointwise ins
// COMB-NOT: lstm.pointwise ins
// COMB: return
func.func @stack(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %h1: tensor<?x8xf32>,
                 %W0: tensor<16x4xf32>, %R0: tensor<16x8xf32>,
                 %W1: tensor<16x8xf32>, %R1: tensor<16x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %Wa0 = tensor.extract_slice %W0[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wg0 = tensor.extract_slice %W0[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Ra0 = tensor.extract_slice %R0[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rg0 = tensor.extract_slice %R0[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wa0, %Ra0 : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg0, %Rg0 : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %Wa1 = tensor.extract_slice %W1[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Wg1 = tensor.extract_slice %W1[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Ra1 = tensor.extract_slice %R1[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rg1 = tensor.extract_slice %R1[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x8xf32>) init(%h1 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wa1, %Ra1 : tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>)
        weights(%Wg1, %Rg1 : tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Both directions of a bidirectional layer get their own region.
// COMB-LABEL: func.func @bidirectional
// COMB: lstm.layer forward
// COMB: lstm.pointwise ins
// COMB: lstm.layer reverse
// COMB: lstm.pointwise ins
// COMB-NOT: lstm.pointwise ins
// COMB: tensor.concat dim(2)
func.func @bidirectional(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %h1: tensor<?x8xf32>,
                         %W: tensor<16x4xf32>, %R: tensor<16x8xf32>,
                         %Wrev: tensor<16x4xf32>, %Rrev: tensor<16x8xf32>)
    -> tensor<?x?x16xf32> {
  %Wa = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wg = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Ra = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rg = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %yf, %hTf = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wa, %Ra : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg, %Rg : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %Wa_r = tensor.extract_slice %Wrev[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wg_r = tensor.extract_slice %Wrev[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Ra_r = tensor.extract_slice %Rrev[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rg_r = tensor.extract_slice %Rrev[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %yr, %hTr = lstm.layer reverse ins(%x : tensor<?x?x4xf32>) init(%h1 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wa_r, %Ra_r : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg_r, %Rg_r : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %y = tensor.concat dim(2) %yf, %yr : (tensor<?x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x16xf32>
  return %y : tensor<?x?x16xf32>
}

// -----

// A plain RNN's one pointwise op is the epilogue of its one gate: split
// into the gate's products (an identity gate, the GEMM) and a region of the
// epilogue, which lower to the GEMM and the elementwise kernel the gate
// lowers to, in the form lstm-to-persistent runs.
// CHECK-LABEL: func.func @rnn
// CHECK: %[[P:.*]] = lstm.gate identity(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?x8xf32>) weights(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[HN:.*]] = lstm.pointwise ins(%[[P]], %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>)
// CHECK: math.tanh
// CHECK: lstm.yield out(%[[HN]] : tensor<?x8xf32>) state(%[[HN]] : tensor<?x8xf32>)
// A gate without an epilogue stays as it is.
// CHECK-LABEL: func.func @linear_rnn
// CHECK-NOT: lstm.pointwise
// CHECK: lstm.gate identity
// CHECK-NOT: lstm.pointwise
func.func @rnn(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %W: tensor<8x4xf32>,
               %R: tensor<8x8xf32>, %bW: tensor<8xf32>, %bR: tensor<8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%bW, %bR : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

func.func @linear_rnn(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %W: tensor<8x4xf32>,
                      %R: tensor<8x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate identity (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// No pointwise work at all: nothing changes.
// CHECK-LABEL: func.func @no_pointwise
// CHECK-NOT: lstm.pointwise ins
// CHECK: %[[G:.*]] = lstm.gate identity(%{{.*}}, %{{.*}} : tensor<?x4xf32>, tensor<?x8xf32>) weights(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK-NEXT: lstm.yield state(%[[G]] : tensor<?x8xf32>)
func.func @no_pointwise(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                        %W: tensor<8x4xf32>, %R: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %g = lstm.gate identity (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>) weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    lstm.yield state(%g : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// A single pointwise op between GEMMs: left alone.
// CHECK-LABEL: func.func @single_op
// CHECK-NOT: lstm.pointwise ins
// CHECK: lstm.gate identity
// CHECK-NEXT: math.tanh %{{.*}} : tensor<?x8xf32>
// CHECK-NEXT: lstm.yield
func.func @single_op(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                     %W: tensor<8x4xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %g = lstm.gate identity (%xt : tensor<?x4xf32>) weights(%W : tensor<8x4xf32>) -> tensor<?x8xf32>
    %t = math.tanh %g : tensor<?x8xf32>
    lstm.yield state(%t : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// Pointwise work split by a GEMM that reads it, with work on both sides that
// does not depend on the GEMM: a is computed in the first group, b (which
// reads only h) moves to the second, where its only user is.
// Splat constants become scalar constants; values used after the group
// (the GEMM operand, the yield) are its results.
// CHECK-LABEL: func.func @two_groups
// CHECK: ^bb0(%[[XT:.*]]: tensor<4x8xf32>, %[[H:.*]]: tensor<4x8xf32>):
// CHECK: %[[A:.*]] = lstm.pointwise ins(%[[XT]], %[[H]] : tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[VX:.*]]: f32, %[[VH:.*]]: f32):
// CHECK-NEXT: %[[VA:.*]] = arith.mulf %[[VX]], %[[VH]] : f32
// CHECK-NEXT: %[[VA2:.*]] = arith.addf %[[VA]], %[[VX]] : f32
// CHECK-NEXT: lstm.pointwise_yield %[[VA2]] : f32
// CHECK: %[[G:.*]] = lstm.gate identity(%[[A]] : tensor<4x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: %[[R:.*]] = lstm.pointwise ins(%[[H]], %[[G]] : tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32> {
// CHECK-NEXT: ^bb0(%[[WH:.*]]: f32, %[[WG:.*]]: f32):
// CHECK-NEXT: %[[TWO:.*]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[VB:.*]] = arith.mulf %[[WH]], %[[TWO]] : f32
// CHECK-NEXT: %[[VS:.*]] = arith.addf %[[WG]], %[[VB]] : f32
// CHECK-NEXT: %[[VT:.*]] = math.tanh %[[VS]] : f32
// CHECK-NEXT: lstm.pointwise_yield %[[VT]] : f32
// CHECK: lstm.yield state(%[[R]] : tensor<4x8xf32>)
func.func @two_groups(%x: tensor<?x4x8xf32>, %h0: tensor<4x8xf32>,
                      %R: tensor<8x8xf32>) -> tensor<4x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x4x8xf32>) init(%h0 : tensor<4x8xf32>) -> (), (tensor<4x8xf32>) {
  ^bb0(%xt: tensor<4x8xf32>, %h: tensor<4x8xf32>):
    %two = arith.constant dense<2.0> : tensor<4x8xf32>
    %a = arith.mulf %xt, %h : tensor<4x8xf32>
    %a2 = arith.addf %a, %xt : tensor<4x8xf32>
    %b = arith.mulf %h, %two : tensor<4x8xf32>
    %g = lstm.gate identity (%a2 : tensor<4x8xf32>) weights(%R : tensor<8x8xf32>) -> tensor<4x8xf32>
    %s = arith.addf %g, %b : tensor<4x8xf32>
    %t = math.tanh %s : tensor<4x8xf32>
    lstm.yield state(%t : tensor<4x8xf32>)
  }
  return %hT : tensor<4x8xf32>
}

// -----

// Pointwise work on a different shape (a weight computed in the cell) is a
// group of its own shape, not mixed with the [B, H] work.
// CHECK-LABEL: func.func @weight_arithmetic
// CHECK: %[[W:.*]] = lstm.pointwise ins(%{{.*}}, %{{.*}} : tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
// CHECK: %[[P:.*]] = lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[W]] : tensor<8x4xf32>) -> tensor<?x8xf32>
// CHECK: lstm.pointwise ins(%[[P]], %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
func.func @weight_arithmetic(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                             %Wa: tensor<8x4xf32>, %Wb: tensor<8x4xf32>,
                             %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %Wa, %Wb : tensor<8x4xf32>
    %w = arith.mulf %s, %Wa : tensor<8x4xf32>
    %g = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%w : tensor<8x4xf32>) bias(%b : tensor<8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %g, %h : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// A gate with only a peephole term (p ⊙ a, from the backward pass) joins the
// group like any gate without products.
// CHECK-LABEL: func.func @peephole_only
// CHECK: lstm.pointwise ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
// CHECK: %[[A:.*]] = arith.mulf
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %[[A]]
// CHECK: arith.addf %[[P]]
// CHECK-NOT: lstm.gate
func.func @peephole_only(%x: tensor<?x?x8xf32>, %c: tensor<?x8xf32>, %p: tensor<8xf32>) -> tensor<?x8xf32> {
  %y = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%c : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %s: tensor<?x8xf32>):
    %a = arith.mulf %xt, %s : tensor<?x8xf32>
    %g = lstm.gate identity peephole(%p, %a : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %b = arith.addf %g, %xt : tensor<?x8xf32>
    lstm.yield state(%b : tensor<?x8xf32>)
  }
  return %y : tensor<?x8xf32>
}
