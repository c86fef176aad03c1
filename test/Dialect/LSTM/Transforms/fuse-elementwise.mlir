// RUN: lstm-opt %s --lstm-fuse-elementwise -split-input-file -verify-each | FileCheck %s
// RUN: lstm-opt %examples/lstm.mlir --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=LSTM-RAW
// RUN: lstm-opt %examples/lstm.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=LSTM
// RUN: lstm-opt %examples/peephole.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=PEEP
// RUN: lstm-opt %examples/gru.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=GRU
// RUN: lstm-opt %examples/cho_gru.mlir --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=CHO
// RUN: lstm-opt %examples/cho_gru.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=CHO
// RUN: lstm-opt %examples/mgu.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=MGU
// RUN: lstm-opt %examples/greff_fgr.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=FGR
// RUN: lstm-opt %examples/greff_cifg.mlir --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=CIFG
// RUN: lstm-opt %examples/stack3.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %examples/bidirectional.mlir --lstm-combine-gate-gemms --lstm-fuse-elementwise -verify-each | FileCheck %s --check-prefix=BIDIR
// RUN: lstm-opt %examples/rnn_tanh.mlir --lstm-fuse-elementwise | FileCheck %s --check-prefix=RNN

// The raw LSTM, each gate keeps its two products as a GEMM where it was
// (an identity gate without biases); biases, activations, the cell update
// and the output are one region.
// LSTM-RAW: lstm.layer forward
// LSTM-RAW-NEXT: ^bb0(%[[XT:.*]]: tensor<?x64xf32>, %[[H:.*]]: tensor<?x128xf32>, %[[C:.*]]: tensor<?x128xf32>):
// LSTM-RAW-NEXT: %[[PI:.*]] = lstm.gate identity(%[[XT]], %[[H]] : tensor<?x64xf32>, tensor<?x128xf32>) weights({{.*}}) -> tensor<?x128xf32>
// LSTM-RAW-NEXT: %[[PF:.*]] = lstm.gate identity(%[[XT]], %[[H]] : {{.*}}) weights({{.*}}) -> tensor<?x128xf32>
// LSTM-RAW-NEXT: %[[PG:.*]] = lstm.gate identity(%[[XT]], %[[H]] : {{.*}}) weights({{.*}}) -> tensor<?x128xf32>
// LSTM-RAW-NEXT: %[[PO:.*]] = lstm.gate identity(%[[XT]], %[[H]] : {{.*}}) weights({{.*}}) -> tensor<?x128xf32>
// LSTM-RAW-NEXT: %[[R:.*]]:2 = lstm.pointwise ins(%[[PI]], %{{.*}}, %{{.*}}, %[[PF]], %{{.*}}, %{{.*}}, %[[PG]], %{{.*}}, %{{.*}}, %[[C]], %[[PO]], %{{.*}}, %{{.*}} : tensor<?x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<?x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<?x128xf32>, tensor<128xf32>, tensor<128xf32>, tensor<?x128xf32>, tensor<?x128xf32>, tensor<128xf32>, tensor<128xf32>) -> tensor<?x128xf32>, tensor<?x128xf32> {
// LSTM-RAW-NEXT: ^bb0(%[[VPI:[^:]*]]: f32, %[[VBWI:[^:]*]]: f32, %[[VBRI:[^:]*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32, %[[VC:[^:]*]]: f32, %{{.*}}: f32, %{{.*}}: f32, %{{.*}}: f32):
// LSTM-RAW-NEXT: %[[S1:.*]] = arith.addf %[[VPI]], %[[VBWI]] : f32
// LSTM-RAW-NEXT: %[[S2:.*]] = arith.addf %[[S1]], %[[VBRI]] : f32
// LSTM-RAW-NEXT: arith.constant 1.000000e+00 : f32
// LSTM-RAW-NEXT: arith.negf %[[S2]] : f32
// LSTM-RAW-NEXT: math.exp
// LSTM-RAW-NEXT: arith.addf
// LSTM-RAW-NEXT: %[[I:.*]] = arith.divf
// LSTM-RAW: %[[F:.*]] = arith.divf
// LSTM-RAW: %[[G:.*]] = math.tanh
// LSTM-RAW-NEXT: %[[IG:.*]] = arith.mulf %[[I]], %[[G]] : f32
// LSTM-RAW-NEXT: %[[FC:.*]] = arith.mulf %[[F]], %[[VC]] : f32
// LSTM-RAW-NEXT: %[[CN:.*]] = arith.addf %[[FC]], %[[IG]] : f32
// LSTM-RAW: %[[O:.*]] = arith.divf
// LSTM-RAW-NEXT: %[[TC:.*]] = math.tanh %[[CN]] : f32
// LSTM-RAW-NEXT: %[[HN:.*]] = arith.mulf %[[O]], %[[TC]] : f32
// LSTM-RAW-NEXT: lstm.pointwise_yield %[[CN]], %[[HN]] : f32, f32
// LSTM-RAW-NEXT: }
// LSTM-RAW-NEXT: lstm.yield out(%[[R]]#1 : tensor<?x128xf32>) state(%[[R]]#1, %[[R]]#0 : tensor<?x128xf32>, tensor<?x128xf32>)

// After combining, the two GEMMs come first and the fused region reads the
// gates' columns of their results (tensor.extract_slice, strided views
// after bufferization) as operands.
// LSTM: lstm.layer forward
// LSTM: %[[GX:.*]] = lstm.gate identity({{.*}}) weights({{.*}} : tensor<512x64xf32>) -> tensor<?x512xf32>
// LSTM: %[[XI:.*]] = tensor.extract_slice %[[GX]][0, 0] [%{{.*}}, 128] [1, 1]
// LSTM: %[[GH:.*]] = lstm.gate identity({{.*}}) weights({{.*}} : tensor<512x128xf32>) -> tensor<?x512xf32>
// LSTM: %[[HI:.*]] = tensor.extract_slice %[[GH]][0, 0] [%{{.*}}, 128] [1, 1]
// LSTM-NOT: lstm.gate
// LSTM: %[[R:.*]]:2 = lstm.pointwise ins(%[[XI]], %[[HI]], {{.*}}) -> tensor<?x128xf32>, tensor<?x128xf32> {
// LSTM-COUNT-2: math.exp
// LSTM: math.tanh
// LSTM: math.exp
// LSTM: math.tanh
// LSTM: lstm.pointwise_yield
// LSTM-NEXT: }
// LSTM-NEXT: lstm.yield out(%[[R]]#1 : tensor<?x128xf32>) state(%[[R]]#1, %[[R]]#0 : tensor<?x128xf32>, tensor<?x128xf32>)

// The output gate peeps at the new c, the region computes c_t before o.
// PEEP: lstm.layer
// PEEP-COUNT-2: lstm.gate identity
// PEEP-NOT: lstm.gate
// PEEP: lstm.pointwise
// PEEP-COUNT-2: math.exp
// PEEP: math.tanh
// PEEP: %[[IG:.*]] = arith.mulf
// PEEP-NEXT: %[[FC:.*]] = arith.mulf
// PEEP-NEXT: %[[CN:.*]] = arith.addf %[[FC]], %[[IG]] : f32
// PEEP: %[[PO:.*]] = arith.mulf %{{.*}}, %[[CN]] : f32
// PEEP-NEXT: arith.addf %{{.*}}, %[[PO]] : f32
// PEEP: math.exp
// PEEP: math.tanh %[[CN]]
// PEEP: lstm.pointwise_yield %[[CN]], %{{.*}} : f32, f32
// PEEP-NOT: lstm.pointwise ins
// PEEP: lstm.yield

// The PyTorch GRU, r ⊙ (R_n h + b_hn) is pointwise, one region.
// GRU: lstm.layer
// GRU-COUNT-2: lstm.gate identity
// GRU-NOT: lstm.gate
// GRU: %[[R:.*]] = lstm.pointwise
// GRU-COUNT-2: math.exp
// GRU: math.tanh
// GRU: arith.subf
// GRU: lstm.pointwise_yield
// GRU-NOT: lstm.pointwise ins
// GRU-NOT: lstm.one_minus
// GRU: lstm.yield out(%[[R]] : tensor<?x128xf32>) state(%[[R]] : tensor<?x128xf32>)

// Cho's GRU, the GEMM of R_n (r ⊙ h) splits the step into two groups. The
// first computes r and r ⊙ h; the second reads the GEMM and computes z, n,
// 1 - z and the new h (z is computed where it is used, not passed on).
// CHO: lstm.layer
// CHO-NEXT: ^bb0(%{{.*}}: tensor<?x64xf32>, %[[H:.*]]: tensor<?x128xf32>):
// CHO: %[[RH:.*]] = lstm.pointwise ins({{.*}}%[[H]] : {{.*}}) -> tensor<?x128xf32> {
// CHO: math.exp
// CHO-NEXT: arith.addf
// CHO-NEXT: %[[VR:.*]] = arith.divf
// CHO-NEXT: %[[VRH:.*]] = arith.mulf %[[VR]], %{{.*}} : f32
// CHO-NEXT: lstm.pointwise_yield %[[VRH]] : f32
// CHO: %[[N:.*]] = lstm.gate identity({{.*}}%[[RH]] : {{.*}}tensor<?x128xf32>) weights({{.*}}tensor<128x128xf32>) -> tensor<?x128xf32>
// CHO-NEXT: %[[HN:.*]] = lstm.pointwise ins({{.*}}%[[N]]{{.*}}%[[H]] : {{.*}}) -> tensor<?x128xf32> {
// CHO: math.exp
// CHO: math.tanh
// CHO: arith.subf
// CHO: lstm.pointwise_yield
// CHO-NOT: lstm.pointwise ins
// CHO: lstm.yield out(%[[HN]] : tensor<?x128xf32>) state(%[[HN]] : tensor<?x128xf32>)

// MGU, R_n multiplies f ⊙ h, two groups as in Cho's GRU.
// MGU: lstm.layer
// MGU: %[[G1:.*]]:2 = lstm.pointwise
// MGU: lstm.gate identity(%[[G1]]#1 : tensor<?x128xf32>)
// MGU: %[[G2:.*]] = lstm.pointwise ins({{.*}}%[[G1]]#0{{.*}})
// MGU-NOT: lstm.pointwise ins
// MGU: lstm.yield out(%[[G2]] : tensor<?x128xf32>)

// FGR, the gate activations are state, read by the next step's GEMMs: one
// region yields h, c, i, f, o.
// FGR: lstm.layer
// FGR-COUNT-5: lstm.gate identity
// FGR-NOT: lstm.gate
// FGR: %[[R:.*]]:5 = lstm.pointwise
// FGR-NOT: lstm.pointwise ins
// FGR: lstm.yield out(%[[R]]#4 : tensor<?x128xf32>) state(%[[R]]#4, %[[R]]#2, %[[R]]#0, %[[R]]#1, %[[R]]#3 :

// CIFG (raw), f = 1 - i joins the region.
// CIFG: lstm.layer
// CIFG-COUNT-3: lstm.gate identity
// CIFG: lstm.pointwise
// CIFG: arith.subf
// CIFG-NOT: lstm.one_minus
// CIFG-NOT: lstm.pointwise ins
// CIFG: lstm.yield

// Every layer of a stack and both directions get their own region.
// STACK-COUNT-3: lstm.pointwise ins
// STACK-NOT: lstm.pointwise ins
// BIDIR: lstm.layer forward
// BIDIR: lstm.pointwise ins
// BIDIR: lstm.layer reverse
// BIDIR: lstm.pointwise ins
// BIDIR-NOT: lstm.pointwise ins

// A plain RNN has a single pointwise op (the epilogue of its one gate): it is
// left alone.
// RNN-NOT: lstm.pointwise ins
// RNN: lstm.gate tanh(%{{.*}}, %{{.*}} : tensor<?x64xf32>, tensor<?x128xf32>) weights(

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
