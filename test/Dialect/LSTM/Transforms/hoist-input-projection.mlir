// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-hoist-input-projection -split-input-file | FileCheck %s
// RUN: lstm-opt %s --lstm-combine-gate-gemms --lstm-hoist-input-projection -split-input-file | FileCheck %s --check-prefix=COMB

// The raw LSTM cell (x of 4 features, h of 8): the four x products become
// one GEMM over T·B rows against the stacked W; the recurrent products
// stay. The biases stay in the gates (each gate also has R h: folding them
// would reassociate its sum). The gates' blocks of W, stacked in order, are
// W itself.
// CHECK-LABEL: func.func @lstm
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>, %{{[^:]*}}: tensor<?x8xf32>, %{{[^:]*}}: tensor<?x8xf32>, %[[W:[^:]*]]: tensor<32x4xf32>
// CHECK-NOT: tensor.concat
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
// CHECK-NEXT: %[[P:.*]] = lstm.gate identity(%[[FLAT]] : tensor<?x4xf32>) weights(%[[W]] : tensor<32x4xf32>) -> tensor<?x32xf32>
// CHECK: %[[T:.*]] = tensor.dim %[[X]], %c0
// CHECK: %[[B:.*]] = tensor.dim %[[X]], %c1
// CHECK-NEXT: %[[SEQ:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [%[[T]], %[[B]], 32] : tensor<?x32xf32> into tensor<?x?x32xf32>
// CHECK-NEXT: lstm.layer forward ins(%[[SEQ]] : tensor<?x?x32xf32>)
// CHECK-NEXT: ^bb0(%[[PT:[^:]*]]: tensor<?x32xf32>, %[[H:[^:]*]]: tensor<?x8xf32>, %{{[^:]*}}: tensor<?x8xf32>):
// CHECK: %[[PI:.*]] = tensor.extract_slice %[[PT]][0, 0] [%{{.*}}, 8] [1, 1] : tensor<?x32xf32> to tensor<?x8xf32>
// CHECK: %[[PF:.*]] = tensor.extract_slice %[[PT]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK: %[[PG:.*]] = tensor.extract_slice %[[PT]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: %[[PO:.*]] = tensor.extract_slice %[[PT]][0, 24] [%{{.*}}, 8] [1, 1]
// CHECK: lstm.gate sigmoid(%[[H]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(%[[PI]] : tensor<?x8xf32>) bias(
// CHECK: lstm.gate sigmoid(%[[H]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(%[[PF]] : tensor<?x8xf32>) bias(
// CHECK: lstm.gate tanh(%[[H]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(%[[PG]] : tensor<?x8xf32>) bias(
// CHECK: lstm.gate sigmoid(%[[H]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(%[[PO]] : tensor<?x8xf32>) bias(
// CHECK-NOT: tensor<?x4xf32>
// CHECK: lstm.yield

// After combining, the combined identity gate on x_t is the hoisted GEMM;
// the cell slices the step's [B, 32] row block directly and keeps one GEMM.
// COMB-LABEL: func.func @lstm
// COMB-SAME: %[[WX:[^:]*]]: tensor<32x4xf32>, %[[WH:[^:]*]]: tensor<32x8xf32>
// COMB-NOT: tensor.concat
// COMB: tensor.collapse_shape
// COMB-NEXT: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[WX]] : tensor<32x4xf32>) -> tensor<?x32xf32>
// COMB: lstm.layer forward ins(%{{.*}} : tensor<?x?x32xf32>)
// COMB-NEXT: ^bb0(%[[PT:[^:]*]]: tensor<?x32xf32>, %[[H:[^:]*]]: tensor<?x8xf32>, %{{[^:]*}}: tensor<?x8xf32>):
// COMB-COUNT-4: tensor.extract_slice %[[PT]]
// COMB: lstm.gate identity(%[[H]] : tensor<?x8xf32>) weights(%[[WH]] : tensor<32x8xf32>) -> tensor<?x32xf32>
// COMB-NOT: lstm.gate identity
// COMB-NOT: weights(
// COMB: lstm.yield
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

// PyTorch's GRU, n's x product has the gate to itself with its bias b_in, so
// b_in folds into the hoisted GEMM (zeros for r and z) and that gate
// disappears; r and z keep their biases (they also have R h).
// CHECK-LABEL: func.func @gru
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[BIAS:.*]] = tensor.concat dim(0) %[[Z]], %[[Z]], %{{.*}} : {{.*}} -> tensor<24xf32>
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%{{.*}} : tensor<24x4xf32>) bias(%[[BIAS]] : tensor<24xf32>) -> tensor<?x24xf32>
// CHECK: lstm.layer forward ins(%{{.*}} : tensor<?x?x24xf32>)
// CHECK: %[[PN:.*]] = tensor.extract_slice %{{.*}}[0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: lstm.gate sigmoid(%{{.*}}) weights(%{{.*}}) add(%{{.*}}) bias(%{{[^,]*}}, %{{[^ ]*}} :
// CHECK: lstm.gate sigmoid(%{{.*}}) weights(%{{.*}}) add(%{{.*}}) bias(%{{[^,]*}}, %{{[^ ]*}} :
// CHECK: %[[HN:.*]] = lstm.gate identity(%{{.*}} : tensor<?x8xf32>) weights(
// CHECK: %[[RHN:.*]] = arith.mulf %{{.*}}, %[[HN]]
// CHECK: arith.addf %[[PN]], %[[RHN]]
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

// Cho's GRU, all three x products hoist; R_n (r ⊙ h) stays in the cell.
// CHECK-LABEL: func.func @cho_gru
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%{{.*}} : tensor<24x4xf32>) -> tensor<?x24xf32>
// CHECK: lstm.layer forward ins(%{{.*}} : tensor<?x?x24xf32>)
// CHECK: %[[RH:.*]] = arith.mulf
// CHECK: lstm.gate tanh(%[[RH]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(
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

// A stack: each layer's input GEMM is hoisted right before that layer, the
// later ones reading the previous layer's output sequence.
// CHECK-LABEL: func.func @stack
// CHECK-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>
// CHECK: %[[F0:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
// CHECK-NEXT: lstm.gate identity(%[[F0]] : tensor<?x4xf32>) weights(%{{.*}} : tensor<16x4xf32>) -> tensor<?x16xf32>
// CHECK: %[[Y0:.*]], %{{.*}} = lstm.layer forward ins(%{{.*}} : tensor<?x?x16xf32>)
// CHECK: lstm.yield
// CHECK: %[[F1:.*]] = tensor.collapse_shape %[[Y0]] {{\[}}[0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
// CHECK-NEXT: lstm.gate identity(%[[F1]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<16x8xf32>) -> tensor<?x16xf32>
// CHECK: lstm.layer forward ins(%{{.*}} : tensor<?x?x16xf32>)
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

// Bidirectional: both directions hoist their own GEMM on the same x.
// COMB-LABEL: func.func @bidirectional
// COMB-SAME: (%[[X:[^:]*]]: tensor<?x?x4xf32>
// COMB: tensor.collapse_shape %[[X]]
// COMB: lstm.layer forward ins(%{{.*}} : tensor<?x?x16xf32>)
// COMB: tensor.collapse_shape %[[X]]
// COMB: lstm.layer reverse ins(%{{.*}} : tensor<?x?x16xf32>)
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

// Lengths stay on the layer: the hoisted sequence is indexed like x and the
// layer masks rows past their length as before.
// CHECK-LABEL: func.func @varlen
// CHECK-SAME: %[[LEN:[^:]*]]: tensor<?xi32>
// CHECK: lstm.layer forward ins(%{{.*}} : tensor<?x?x16xf32>) init({{.*}}) lengths(%[[LEN]] : tensor<?xi32>)
func.func @varlen(%x: tensor<?x?x4xf32>, %len: tensor<?xi32>, %h0: tensor<?x8xf32>,
                  %W: tensor<16x4xf32>, %R: tensor<16x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %Wa = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Wg = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<16x4xf32> to tensor<8x4xf32>
  %Ra = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %Rg = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<16x8xf32> to tensor<8x8xf32>
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      lengths(%len : tensor<?xi32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wa, %Ra : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%Wg, %Rg : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %a, %g : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// -----

// Products on the recurrent state, on a value computed in the cell, and with
// a weight computed in the cell stay in the cell.
// CHECK-LABEL: func.func @not_hoisted
// CHECK-NOT: tensor.collapse_shape
// CHECK: lstm.layer forward ins(%{{.*}} : tensor<?x?x4xf32>)
// CHECK: lstm.gate sigmoid(%{{.*}} : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[X2:.*]] = arith.mulf
// CHECK: lstm.gate tanh(%[[X2]] : tensor<?x4xf32>) weights(%{{.*}} : tensor<8x4xf32>) -> tensor<?x8xf32>
// CHECK: %[[W2:.*]] = arith.addf
// CHECK: lstm.gate tanh(%{{.*}} : tensor<?x4xf32>) weights(%[[W2]] : tensor<8x4xf32>) -> tensor<?x8xf32>
func.func @not_hoisted(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                       %W: tensor<8x4xf32>, %R: tensor<8x8xf32>)
    -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%h : tensor<?x8xf32>) weights(%R : tensor<8x8xf32>) -> tensor<?x8xf32>
    %x2 = arith.mulf %xt, %xt : tensor<?x4xf32>
    %b = lstm.gate tanh (%x2 : tensor<?x4xf32>) weights(%W : tensor<8x4xf32>) -> tensor<?x8xf32>
    %W2 = arith.addf %W, %W : tensor<8x4xf32>
    %c = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%W2 : tensor<8x4xf32>) -> tensor<?x8xf32>
    %ab = arith.mulf %a, %b : tensor<?x8xf32>
    %hn = arith.addf %ab, %c : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// Biases fold only into gates whose single product is hoisted and that have
// nothing else: a gets both of its biases folded, b (which also has R h)
// keeps its own and gets zeros in the stacked biases, c (identity) folds and
// is replaced by its slice.
// CHECK-LABEL: func.func @fold_biases
// CHECK-SAME: %[[BA:[^:]*]]: tensor<8xf32>, %[[BA2:[^:]*]]: tensor<8xf32>, %[[BB:[^:]*]]: tensor<8xf32>, %[[BC:[^:]*]]: tensor<8xf32>)
// CHECK: %[[W:.*]] = tensor.concat dim(0) {{.*}} -> tensor<24x4xf32>
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: %[[B0:.*]] = tensor.concat dim(0) %[[BA]], %[[Z]], %[[BC]] : {{.*}} -> tensor<24xf32>
// CHECK: %[[B1:.*]] = tensor.concat dim(0) %[[BA2]], %[[Z]], %[[Z]] : {{.*}} -> tensor<24xf32>
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%[[W]] : tensor<24x4xf32>) bias(%[[B0]], %[[B1]] : tensor<24xf32>, tensor<24xf32>) -> tensor<?x24xf32>
// CHECK: ^bb0(%[[PT:.*]]: tensor<?x24xf32>, %[[H:.*]]: tensor<?x8xf32>):
// CHECK: %[[SA:.*]] = tensor.extract_slice %[[PT]][0, 0] [%{{.*}}, 8] [1, 1]
// CHECK: %[[SB:.*]] = tensor.extract_slice %[[PT]][0, 8] [%{{.*}}, 8] [1, 1]
// CHECK: %[[SC:.*]] = tensor.extract_slice %[[PT]][0, 16] [%{{.*}}, 8] [1, 1]
// CHECK: %[[A:.*]] = lstm.gate sigmoid add(%[[SA]] : tensor<?x8xf32>) -> tensor<?x8xf32>
// CHECK: %[[G:.*]] = lstm.gate tanh(%[[H]] : tensor<?x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(%[[SB]] : tensor<?x8xf32>) bias(%[[BB]] : tensor<8xf32>) -> tensor<?x8xf32>
// CHECK: %[[AB:.*]] = arith.mulf %[[A]], %[[G]]
// CHECK: arith.addf %[[AB]], %[[SC]]
func.func @fold_biases(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                       %Wa: tensor<8x4xf32>, %Wb: tensor<8x4xf32>, %Wc: tensor<8x4xf32>,
                       %R: tensor<8x8xf32>, %ba: tensor<8xf32>, %ba2: tensor<8xf32>,
                       %bb: tensor<8xf32>, %bc: tensor<8xf32>)
    -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%Wa : tensor<8x4xf32>) bias(%ba, %ba2 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %b = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>) weights(%Wb, %R : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bb : tensor<8xf32>) -> tensor<?x8xf32>
    %c = lstm.gate identity (%xt : tensor<?x4xf32>) weights(%Wc : tensor<8x4xf32>) bias(%bc : tensor<8xf32>) -> tensor<?x8xf32>
    %ab = arith.mulf %a, %b : tensor<?x8xf32>
    %hn = arith.addf %ab, %c : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// A bias computed in the cell is not folded (it is not available before the
// layer); the product still hoists.
// CHECK-LABEL: func.func @bias_inside_cell
// CHECK: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%{{.*}} : tensor<8x4xf32>) -> tensor<?x8xf32>
// CHECK: ^bb0(%[[PT:.*]]: tensor<?x8xf32>, %{{.*}}: tensor<?x8xf32>):
// CHECK: %[[B2:.*]] = arith.addf
// CHECK: lstm.gate tanh add(%[[PT]] : tensor<?x8xf32>) bias(%[[B2]] : tensor<8xf32>)
func.func @bias_inside_cell(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>,
                            %W: tensor<8x4xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %b2 = arith.addf %b, %b : tensor<8xf32>
    %a = lstm.gate tanh (%xt : tensor<?x4xf32>) weights(%W : tensor<8x4xf32>) bias(%b2 : tensor<8xf32>) -> tensor<?x8xf32>
    %hn = arith.addf %a, %h : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// Two input sequences with static T and B, a reverse layer with lengths: each
// sequence gets its own hoisted GEMM (static shapes throughout), a weight of
// dynamic shape is multiplied on its own, and the original sequences, no
// longer read in the cell, leave the layer.
// CHECK-LABEL: func.func @two_inputs
// CHECK-SAME: (%[[X:[^:]*]]: tensor<5x3x4xf32>, %[[Z:[^:]*]]: tensor<5x3x2xf32>, %[[LEN:[^:]*]]: tensor<3xi32>
// CHECK: %[[FX:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<5x3x4xf32> into tensor<15x4xf32>
// CHECK: %[[PX:.*]] = lstm.gate identity(%[[FX]] : tensor<15x4xf32>) weights(%{{.*}} : tensor<8x4xf32>) -> tensor<15x8xf32>
// CHECK: %[[SX:.*]] = tensor.expand_shape %[[PX]] {{\[}}[0, 1], [2]] output_shape [5, 3, 8] : tensor<15x8xf32> into tensor<5x3x8xf32>
// CHECK: %[[FZ:.*]] = tensor.collapse_shape %[[Z]]
// CHECK: %[[PZ:.*]] = lstm.gate identity(%[[FZ]] : tensor<15x2xf32>) weights(%{{.*}} : tensor<?x2xf32>) -> tensor<15x?xf32>
// CHECK: %[[SZ:.*]] = tensor.expand_shape %[[PZ]] {{\[}}[0, 1], [2]] output_shape [5, 3, %{{.*}}] : tensor<15x?xf32> into tensor<5x3x?xf32>
// CHECK: lstm.layer reverse ins(%[[SX]], %[[SZ]] : tensor<5x3x8xf32>, tensor<5x3x?xf32>) init(%{{.*}} : tensor<3x8xf32>) lengths(%[[LEN]] : tensor<3xi32>)
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<3x8xf32>, %[[B:.*]]: tensor<3x?xf32>, %[[H:.*]]: tensor<3x8xf32>):
// CHECK-NEXT: lstm.gate tanh(%[[H]] : tensor<3x8xf32>) weights(%{{.*}} : tensor<8x8xf32>) add(%[[A]], %[[B]] : tensor<3x8xf32>, tensor<3x?xf32>) -> tensor<3x8xf32>
func.func @two_inputs(%x: tensor<5x3x4xf32>, %z: tensor<5x3x2xf32>, %len: tensor<3xi32>, %h0: tensor<3x8xf32>,
                      %Wa: tensor<8x4xf32>, %Wd: tensor<?x2xf32>, %R: tensor<8x8xf32>)
    -> (tensor<5x3x8xf32>, tensor<3x8xf32>) {
  %y, %hT = lstm.layer reverse ins(%x, %z : tensor<5x3x4xf32>, tensor<5x3x2xf32>) init(%h0 : tensor<3x8xf32>)
      lengths(%len : tensor<3xi32>) -> (tensor<5x3x8xf32>), (tensor<3x8xf32>) {
  ^bb0(%xt: tensor<3x4xf32>, %zt: tensor<3x2xf32>, %h: tensor<3x8xf32>):
    %a = lstm.gate tanh (%xt, %zt, %h : tensor<3x4xf32>, tensor<3x2xf32>, tensor<3x8xf32>) weights(%Wa, %Wd, %R : tensor<8x4xf32>, tensor<?x2xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
    lstm.yield out(%a : tensor<3x8xf32>) state(%a : tensor<3x8xf32>)
  }
  return %y, %hT : tensor<5x3x8xf32>, tensor<3x8xf32>
}

// -----

// x_t is also read by pointwise math: the product hoists, the sequence stays.
// CHECK-LABEL: func.func @slice_still_read
// CHECK: lstm.layer forward ins(%{{.*}}, %{{.*}} : tensor<?x?x8xf32>, tensor<?x?x8xf32>)
// CHECK-NEXT: ^bb0(%[[XT:.*]]: tensor<?x8xf32>, %[[PT:.*]]: tensor<?x8xf32>, %{{.*}}: tensor<?x8xf32>):
// CHECK-NEXT: %[[G:.*]] = lstm.gate tanh add(%[[PT]] : tensor<?x8xf32>)
// CHECK-NEXT: arith.addf %[[G]], %[[XT]]
func.func @slice_still_read(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>,
                            %W: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %a = lstm.gate tanh (%xt : tensor<?x8xf32>) weights(%W : tensor<8x8xf32>) -> tensor<?x8xf32>
    %hn = arith.addf %a, %xt : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}
