// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-combine-gate-gemms -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-combine-gate-gemms --canonicalize -split-input-file | FileCheck %s --check-prefix=CANON

// The LSTM (PyTorch layout, x of 4 features, h of 8): its 8 products (4
// gates x {x_t, h}) become 2 GEMMs; every gate keeps only addends. The
// weights packed are the gates' blocks of W and R in order: W and R
// themselves, no copy.
// CHECK-LABEL: func.func @lstm
// CHECK-SAME: %[[WX:[^:]*]]: tensor<32x4xf32>, %[[WH:[^:]*]]: tensor<32x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer forward
// CHECK-NEXT: ^bb0(%[[XT:[^:]*]]: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<?x8xf32>, %{{[^:]*}}: tensor<?x8xf32>):
// CHECK-NEXT: %[[GX:.*]] = lstm.gate identity(%[[XT]] : tensor<?x4xf32>) weights(%[[WX]] : tensor<32x4xf32>) -> tensor<?x32xf32>
// CHECK: %[[XI:.*]] = tensor.extract_slice %[[GX]][0, 0] [%{{.*}}, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
// CHECK: %[[XF:.*]] = tensor.extract_slice %[[GX]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK: %[[XG:.*]] = tensor.extract_slice %[[GX]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: %[[XO:.*]] = tensor.extract_slice %[[GX]][0, 24] [%{{.*}}, 8] [1, 1]
// CHECK: %[[GH:.*]] = lstm.gate identity(%[[H]] : tensor<?x8xf32>) weights(%[[WH]] : tensor<32x8xf32>) -> tensor<?x32xf32>
// CHECK: %[[HI:.*]] = tensor.extract_slice %[[GH]][0, 0] [%{{.*}}, 8] [1, 1]
// CHECK: %[[HF:.*]] = tensor.extract_slice %[[GH]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK: %[[HG:.*]] = tensor.extract_slice %[[GH]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: %[[HO:.*]] = tensor.extract_slice %[[GH]][0, 24] [%{{.*}}, 8] [1, 1]
// CHECK-NOT: weights(
// CHECK: lstm.gate sigmoid add(%[[XI]], %[[HI]] : tensor<?x8xf32>, tensor<?x8xf32>) bias(
// CHECK-NOT: weights(
// CHECK: lstm.gate sigmoid add(%[[XF]], %[[HF]] : tensor<?x8xf32>, tensor<?x8xf32>) bias(
// CHECK-NOT: weights(
// CHECK: lstm.gate tanh add(%[[XG]], %[[HG]] : tensor<?x8xf32>, tensor<?x8xf32>) bias(
// CHECK-NOT: weights(
// CHECK: lstm.gate sigmoid add(%[[XO]], %[[HO]] : tensor<?x8xf32>, tensor<?x8xf32>) bias(
// CHECK-NOT: weights(
// CHECK: lstm.yield
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

// The peephole LSTM (o peeps at the new c): the peepholes stay on their
// gates.
// CHECK-LABEL: func.func @peephole
// CHECK-SAME: %[[W:[^:]*]]: tensor<32x4xf32>, %[[R:[^:]*]]: tensor<32x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer
// CHECK-NEXT: ^bb0(%[[XT:[^:]*]]: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<?x8xf32>, %[[C:[^:]*]]: tensor<?x8xf32>):
// CHECK-NEXT: lstm.gate identity(%[[XT]] : tensor<?x4xf32>) weights(%[[W]] : tensor<32x4xf32>) -> tensor<?x32xf32>
// CHECK: lstm.gate identity(%[[H]] : tensor<?x8xf32>) weights(%[[R]] : tensor<32x8xf32>) -> tensor<?x32xf32>
// CHECK-NOT: weights(
// CHECK: lstm.gate sigmoid add({{.*}}) bias({{.*}}) peephole(%{{.*}}, %[[C]] : tensor<8xf32>, tensor<?x8xf32>)
// CHECK-NOT: weights(
// CHECK: lstm.gate sigmoid add({{.*}}) bias({{.*}}) peephole(%{{.*}}, %[[C]] : tensor<8xf32>, tensor<?x8xf32>)
// CHECK-NOT: weights(
// CHECK: lstm.gate tanh add({{.*}}) bias({{.*}}) -> tensor<?x8xf32>
// CHECK: %[[CN:.*]] = arith.addf
// CHECK-NOT: weights(
// CHECK: lstm.gate sigmoid add({{.*}}) bias({{.*}}) peephole(%{{.*}}, %[[CN]] : tensor<8xf32>, tensor<?x8xf32>)
// CHECK-NOT: weights(
// CHECK: lstm.yield
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

// The PyTorch GRU keeps R_n h separate from x (its own gate), so all three
// gates share h: two GEMMs, [B, 3H] each, on W and R as they are; r
// multiplies the slice of R_n h.
// CHECK-LABEL: func.func @gru
// CHECK-SAME: %[[W:[^:]*]]: tensor<24x4xf32>, %[[R:[^:]*]]: tensor<24x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer
// CHECK: %[[GX:.*]] = lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[W]] : tensor<24x4xf32>) -> tensor<?x24xf32>
// CHECK: %[[XN:.*]] = tensor.extract_slice %[[GX]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: %[[GH:.*]] = lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(%[[R]] : tensor<24x8xf32>) -> tensor<?x24xf32>
// CHECK: %[[HN:.*]] = tensor.extract_slice %[[GH]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK-NOT: weights(
// CHECK: %[[RG:.*]] = lstm.gate sigmoid add(
// CHECK: lstm.gate sigmoid add(
// CHECK: lstm.gate identity add(%[[XN]] : tensor<?x8xf32>) bias(
// CHECK: %[[RN:.*]] = lstm.gate identity add(%[[HN]] : tensor<?x8xf32>) bias(
// CHECK: arith.mulf %[[RG]], %[[RN]]
// CHECK-NOT: weights(
// CHECK: lstm.yield
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

// Cho's GRU, R_n multiplies r ⊙ h, which depends on the gate r; it is not
// combined with R_r and R_z (the h group has two gates, not three). The x
// group is all of W; the h group the first two blocks of R, one slice.
// CHECK-LABEL: func.func @cho_gru
// CHECK-SAME: %[[WX:[^:]*]]: tensor<24x4xf32>, %[[R:[^:]*]]: tensor<24x8xf32>
// CHECK: %[[WH:.*]] = tensor.extract_slice %[[R]][0, 0] [16, 8] [1, 1] : tensor<24x8xf32> to tensor<16x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer
// CHECK-NEXT: ^bb0(%[[XT:[^:]*]]: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<?x8xf32>):
// CHECK: %[[GX:.*]] = lstm.gate identity(%[[XT]] : tensor<?x4xf32>) weights(%[[WX]] : tensor<24x4xf32>) -> tensor<?x24xf32>
// CHECK: %[[XN:.*]] = tensor.extract_slice %[[GX]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: %[[GH:.*]] = lstm.gate identity(%[[H]] : tensor<?x8xf32>) weights(%[[WH]] : tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK: %[[RG:.*]] = lstm.gate sigmoid add(
// CHECK: lstm.gate sigmoid add(
// CHECK: %[[RH:.*]] = arith.mulf %[[RG]], %[[H]]
// CHECK: lstm.gate tanh(%[[RH]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(%[[XN]] : tensor<?x8xf32>) bias(
// CHECK-NOT: weights(
// CHECK: lstm.yield
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

// MGU, the x products of f and n combine (all of W); h multiplies only f (n
// multiplies f ⊙ h), so no recurrent product is combined.
// CHECK-LABEL: func.func @mgu
// CHECK-SAME: %[[W:[^:]*]]: tensor<16x4xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer
// CHECK-NEXT: ^bb0(%[[XT:[^:]*]]: tensor<?x4xf32>, %[[H:[^:]*]]: tensor<?x8xf32>):
// CHECK: lstm.gate identity(%[[XT]] : tensor<?x4xf32>) weights(%[[W]] : tensor<16x4xf32>) -> tensor<?x16xf32>
// CHECK-NOT: lstm.gate identity
// CHECK: %[[F:.*]] = lstm.gate sigmoid(%[[H]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(
// CHECK: %[[FH:.*]] = arith.mulf %[[F]], %[[H]]
// CHECK: lstm.gate tanh(%[[FH]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(
// CHECK: lstm.yield
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

// FGR (full gate recurrence), x and h combine over the four gates; each
// previous gate activation (i, f, o of the last step, part of the state) is
// its own operand group over the three gates that read it. Each group's
// weights are in-order blocks of W, R or a column block of Rg: slices, no
// concatenation.
// CHECK-LABEL: func.func @fgr
// CHECK-SAME: %[[W:[^:]*]]: tensor<32x4xf32>, %[[R:[^:]*]]: tensor<32x8xf32>, %{{[^:]*}}: tensor<32xf32>, %{{[^:]*}}: tensor<3x8xf32>, %[[RG:[^:]*]]: tensor<24x24xf32>
// CHECK-DAG: %[[RGI:.*]] = tensor.extract_slice %[[RG]][0, 0] [24, 8] [1, 1] : tensor<24x24xf32> to tensor<24x8xf32>
// CHECK-DAG: %[[RGF:.*]] = tensor.extract_slice %[[RG]][0, 8] [24, 8] [1, 1] : tensor<24x24xf32> to tensor<24x8xf32>
// CHECK-DAG: %[[RGO:.*]] = tensor.extract_slice %[[RG]][0, 16] [24, 8] [1, 1] : tensor<24x24xf32> to tensor<24x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer
// CHECK-NEXT: ^bb0(%[[XT:[^:]*]]: {{.*}}, %[[H:[^:]*]]: {{.*}}, %{{[^:]*}}: {{.*}}, %[[IP:[^:]*]]: {{.*}}, %[[FP:[^:]*]]: {{.*}}, %[[OP:[^:]*]]: tensor<?x8xf32>):
// CHECK: lstm.gate identity(%[[XT]] : tensor<?x4xf32>) weights(%[[W]] : tensor<32x4xf32>) -> tensor<?x32xf32>
// CHECK: lstm.gate identity(%[[H]] : tensor<?x8xf32>) weights(%[[R]] : tensor<32x8xf32>) -> tensor<?x32xf32>
// CHECK: lstm.gate identity(%[[IP]] : tensor<?x8xf32>) weights(%[[RGI]] : tensor<24x8xf32>) -> tensor<?x24xf32>
// CHECK: lstm.gate identity(%[[FP]] : tensor<?x8xf32>) weights(%[[RGF]] : tensor<24x8xf32>) -> tensor<?x24xf32>
// CHECK: lstm.gate identity(%[[OP]] : tensor<?x8xf32>) weights(%[[RGO]] : tensor<24x8xf32>) -> tensor<?x24xf32>
// CHECK: lstm.gate sigmoid add(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} : {{.*}}) bias({{.*}}) peephole(
// CHECK: lstm.gate sigmoid add(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} : {{.*}}) bias({{.*}}) peephole(
// CHECK: lstm.gate tanh add(%{{[^,]*}}, %{{[^ ]*}} : tensor<?x8xf32>, tensor<?x8xf32>) bias(
// CHECK: lstm.gate sigmoid add(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} : {{.*}}) bias({{.*}}) peephole(
// CHECK-NOT: weights(
// CHECK: lstm.yield
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

// CIFG, three gates with weights (f = 1 - i): W and R as they are.
// CHECK-LABEL: func.func @cifg
// CHECK-SAME: %[[W:[^:]*]]: tensor<24x4xf32>, %[[R:[^:]*]]: tensor<24x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[W]] : tensor<24x4xf32>) -> tensor<?x24xf32>
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(%[[R]] : tensor<24x8xf32>) -> tensor<?x24xf32>
// CHECK-NOT: weights(
// CHECK: lstm.one_minus
// CHECK-NOT: weights(
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

// Stacked layers: each layer packs its own weights (its own W and R, as
// they are).
// CHECK-LABEL: func.func @stack
// CHECK-SAME: %[[W0:[^:]*]]: tensor<16x4xf32>, %[[R0:[^:]*]]: tensor<16x8xf32>, %[[W1:[^:]*]]: tensor<16x8xf32>, %[[R1:[^:]*]]: tensor<16x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer forward
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[W0]] : tensor<16x4xf32>) -> tensor<?x16xf32>
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(%[[R0]] : tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NOT: weights(
// CHECK: lstm.yield
// CHECK: lstm.layer forward
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(%[[W1]] : tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(%[[R1]] : tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NOT: weights(
// CHECK: lstm.yield
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

// Bidirectional: each direction packs its own weights.
// CHECK-LABEL: func.func @bidirectional
// CHECK-SAME: %[[W:[^:]*]]: tensor<16x4xf32>, %[[R:[^:]*]]: tensor<16x8xf32>, %[[WREV:[^:]*]]: tensor<16x4xf32>, %[[RREV:[^:]*]]: tensor<16x8xf32>
// CHECK-NOT: tensor.concat
// CHECK: lstm.layer forward
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[W]] : tensor<16x4xf32>) -> tensor<?x16xf32>
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(%[[R]] : tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NOT: weights(
// CHECK: lstm.yield
// CHECK: lstm.layer reverse
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[WREV]] : tensor<16x4xf32>) -> tensor<?x16xf32>
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(%[[RREV]] : tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK-NOT: weights(
// CHECK: lstm.yield
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

// Each operand is multiplied by a single gate: nothing to combine.
// CHECK-LABEL: func.func @one_gate_per_operand
// CHECK-NOT: tensor.concat
// CHECK: lstm.gate sigmoid(%{{.*}} : tensor<?x4xf32>) weights(%{{.*}} : tensor<8x4xf32>) -> tensor<?x8xf32>
// CHECK: lstm.gate tanh(%{{.*}} : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK-NOT: lstm.gate identity
func.func @one_gate_per_operand(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                                %W: tensor<8x4xf32>, %R: tensor<8x8xf32>)
    -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%W : tensor<8x4xf32>) -> tensor<?x8xf32>
    %b = lstm.gate tanh (%h : tensor<?x8xf32>) weights(%R : tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %b : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// A weight computed inside the cell cannot be packed once before the loop:
// its product stays; the other two products on %xt still combine.
// CHECK-LABEL: func.func @weight_inside_cell
// CHECK: %[[P:.*]] = tensor.concat dim(0) %[[A:[^,]*]], %[[C:[^ ]*]] : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<16x4xf32>
// CHECK: lstm.layer
// CHECK-NEXT: ^bb0(%[[XT:.*]]: tensor<?x4xf32>, %{{.*}}: tensor<?x8xf32>):
// CHECK: %[[G:.*]] = lstm.gate identity(%[[XT]] : tensor<?x4xf32>) weights(%[[P]] : tensor<16x4xf32>) -> tensor<?x16xf32>
// CHECK: %[[SA:.*]] = tensor.extract_slice %[[G]][0, 0] [%{{.*}}, 8] [1, 1]
// CHECK: %[[SC:.*]] = tensor.extract_slice %[[G]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK: lstm.gate sigmoid add(%[[SA]] : tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[WB:.*]] = arith.addf
// CHECK: lstm.gate tanh(%[[XT]] : tensor<?x4xf32>) weights(%[[WB]] : tensor<8x4xf32>) -> tensor<?x8xf32>
// CHECK: lstm.gate tanh add(%[[SC]] : tensor<?x8xf32>) -> tensor<?x8xf32>
func.func @weight_inside_cell(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                              %Wa: tensor<8x4xf32>, %Wb: tensor<8x4xf32>,
                              %Wc: tensor<8x4xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%Wa : tensor<8x4xf32>) -> tensor<?x8xf32>
    %Wb2 = arith.addf %Wb, %Wb : tensor<8x4xf32>
    %b = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%Wb2 : tensor<8x4xf32>) -> tensor<?x8xf32>
    %c = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%Wc : tensor<8x4xf32>) -> tensor<?x8xf32>
    %ab = arith.mulf %a, %b : tensor<?x8xf32>
    %hn = arith.addf %ab, %c : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// Only weights defined inside the cell: nothing combines.
// CHECK-LABEL: func.func @all_weights_inside_cell
// CHECK-NOT: tensor.concat
// CHECK-NOT: lstm.gate identity
func.func @all_weights_inside_cell(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                                   %W: tensor<8x4xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %Wa = arith.addf %W, %W : tensor<8x4xf32>
    %Wb = arith.mulf %W, %W : tensor<8x4xf32>
    %a = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%Wa : tensor<8x4xf32>) -> tensor<?x8xf32>
    %b = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%Wb : tensor<8x4xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %b : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// Weights of dynamic shape are not stacked (the slice offsets would be
// run-time values).
// CHECK-LABEL: func.func @dynamic_weights
// CHECK-NOT: tensor.concat
// CHECK-NOT: lstm.gate identity
func.func @dynamic_weights(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                           %Wa: tensor<?x4xf32>, %Wb: tensor<?x4xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%Wa : tensor<?x4xf32>) -> tensor<?x8xf32>
    %b = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%Wb : tensor<?x4xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %b : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// One gate multiplies the same operand twice: both of its products join the
// group, and the gate gets two addends.
// CHECK-LABEL: func.func @two_products_same_operand
// CHECK: %[[P:.*]] = tensor.concat dim(0) {{.*}} : (tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<24x8xf32>
// CHECK: %[[G:.*]] = lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(%[[P]] : tensor<24x8xf32>) -> tensor<?x24xf32>
// CHECK: %[[S0:.*]] = tensor.extract_slice %[[G]][0, 0] [%{{.*}}, 8] [1, 1]
// CHECK: %[[S1:.*]] = tensor.extract_slice %[[G]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK: %[[S2:.*]] = tensor.extract_slice %[[G]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: lstm.gate sigmoid add(%[[S0]], %[[S1]] : tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: lstm.gate tanh add(%[[S2]] : tensor<?x8xf32>) -> tensor<?x8xf32>
func.func @two_products_same_operand(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                                     %A: tensor<8x8xf32>, %B: tensor<8x8xf32>,
                                     %C: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%h, %h : tensor<?x8xf32>, tensor<?x8xf32>) weights(%A, %B : tensor<8x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %b = lstm.gate tanh (%h : tensor<?x8xf32>) weights(%C : tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %b : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// Constant weights: the packing is a tensor.concat of constants before the
// layer. Upstream MLIR (LLVM 22) has no folder for tensor.concat of
// constants, so canonicalize leaves it there, outside the time loop.
// CHECK-LABEL: func.func @constant_weights
// CANON-LABEL: func.func @constant_weights
// CANON: %[[A:.*]] = arith.constant dense<1.000000e+00> : tensor<2x4xf32>
// CANON: %[[B:.*]] = arith.constant dense<2.000000e+00> : tensor<2x4xf32>
// CANON: %[[P:.*]] = tensor.concat dim(0) %[[A]], %[[B]] : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<4x4xf32>
// CANON-NEXT: lstm.layer
// CANON-NOT: tensor.concat
// CANON: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[P]] : tensor<4x4xf32>) -> tensor<?x4xf32>
func.func @constant_weights(%x: tensor<?x?x4xf32>, %h0: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %Wa = arith.constant dense<1.0> : tensor<2x4xf32>
  %Wb = arith.constant dense<2.0> : tensor<2x4xf32>
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x2xf32>) -> (), (tensor<?x2xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x2xf32>):
    %a = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%Wa : tensor<2x4xf32>) -> tensor<?x2xf32>
    %b = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%Wb : tensor<2x4xf32>) -> tensor<?x2xf32>
    %hn = arith.mulf %a, %b : tensor<?x2xf32>
    lstm.yield state(%hn : tensor<?x2xf32>)
  }
  return %hT : tensor<?x2xf32>
}

// -----

// A block used by two gates (JANET's forget gate and its shifted copy) is
// packed twice: the packing [W[0:2]; W[0:2]; W[2:4]] is not W, although its
// parts are slices of W and the first and last are adjacent.
// CHECK-LABEL: func.func @repeated_block
// CHECK-SAME: %[[W:[^:]*]]: tensor<4x4xf32>
// CHECK-DAG: %[[A:.*]] = tensor.extract_slice %[[W]][0, 0] [2, 4] [1, 1]
// CHECK-DAG: %[[B:.*]] = tensor.extract_slice %[[W]][2, 0] [2, 4] [1, 1]
// CHECK: %[[P:.*]] = tensor.concat dim(0) %[[A]], %[[A]], %[[B]] : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<6x4xf32>
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[P]] : tensor<6x4xf32>) -> tensor<?x6xf32>
func.func @repeated_block(%x: tensor<?x?x4xf32>, %h0: tensor<?x2xf32>, %W: tensor<4x4xf32>) -> tensor<?x2xf32> {
  %Wa = tensor.extract_slice %W[0, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
  %Wb = tensor.extract_slice %W[2, 0] [2, 4] [1, 1] : tensor<4x4xf32> to tensor<2x4xf32>
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x2xf32>) -> (), (tensor<?x2xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x2xf32>):
    %a = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%Wa : tensor<2x4xf32>) -> tensor<?x2xf32>
    %a2 = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%Wa : tensor<2x4xf32>) -> tensor<?x2xf32>
    %b = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%Wb : tensor<2x4xf32>) -> tensor<?x2xf32>
    %ab = arith.mulf %a, %b : tensor<?x2xf32>
    %hn = arith.addf %ab, %a2 : tensor<?x2xf32>
    lstm.yield state(%hn : tensor<?x2xf32>)
  }
  return %hT : tensor<?x2xf32>
}
