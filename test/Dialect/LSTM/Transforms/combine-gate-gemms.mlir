// RUN: lstm-opt %s --lstm-combine-gate-gemms -split-input-file -verify-each | FileCheck %s
// RUN: lstm-opt %s --lstm-combine-gate-gemms --canonicalize -split-input-file | FileCheck %s --check-prefix=CANON
// RUN: lstm-opt %examples/lstm.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=LSTM
// RUN: lstm-opt %examples/peephole.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=PEEP
// RUN: lstm-opt %examples/gru.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=GRU
// RUN: lstm-opt %examples/cho_gru.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=CHO
// RUN: lstm-opt %examples/mgu.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=MGU
// RUN: lstm-opt %examples/greff_fgr.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=FGR
// RUN: lstm-opt %examples/greff_cifg.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=CIFG
// RUN: lstm-opt %examples/stack3.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %examples/bidirectional.mlir --lstm-combine-gate-gemms | FileCheck %s --check-prefix=BIDIR

// The LSTM, 8 products (4 gates x {x_t, h}) become 2 GEMMs; every gate keeps
// only addends. The weights packed are the gates' blocks of W and R in order:
// W and R themselves, no copy.
// LSTM-LABEL: func.func @forward
// LSTM-SAME: %[[WX:[^:]*]]: tensor<512x64xf32>, %[[WH:[^:]*]]: tensor<512x128xf32>
// LSTM-NOT: tensor.concat
// LSTM: lstm.layer forward
// LSTM-NEXT: ^bb0(%[[XT:.*]]: tensor<?x64xf32>, %[[H:.*]]: tensor<?x128xf32>, %{{.*}}: tensor<?x128xf32>):
// LSTM-NEXT: %[[GX:.*]] = lstm.gate identity(%[[XT]] : tensor<?x64xf32>) weights(%[[WX]] : tensor<512x64xf32>) -> tensor<?x512xf32>
// LSTM: %[[XI:.*]] = tensor.extract_slice %[[GX]][0, 0] [%{{.*}}, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
// LSTM: %[[XF:.*]] = tensor.extract_slice %[[GX]][0, 128] [%{{.*}}, 128] [1, 1]
// LSTM: %[[XG:.*]] = tensor.extract_slice %[[GX]][0, 256] [%{{.*}}, 128] [1, 1]
// LSTM: %[[XO:.*]] = tensor.extract_slice %[[GX]][0, 384] [%{{.*}}, 128] [1, 1]
// LSTM: %[[GH:.*]] = lstm.gate identity(%[[H]] : tensor<?x128xf32>) weights(%[[WH]] : tensor<512x128xf32>) -> tensor<?x512xf32>
// LSTM: %[[HI:.*]] = tensor.extract_slice %[[GH]][0, 0] [%{{.*}}, 128] [1, 1]
// LSTM: %[[HF:.*]] = tensor.extract_slice %[[GH]][0, 128] [%{{.*}}, 128] [1, 1]
// LSTM: %[[HG:.*]] = tensor.extract_slice %[[GH]][0, 256] [%{{.*}}, 128] [1, 1]
// LSTM: %[[HO:.*]] = tensor.extract_slice %[[GH]][0, 384] [%{{.*}}, 128] [1, 1]
// LSTM-NOT: weights(
// LSTM: lstm.gate sigmoid add(%[[XI]], %[[HI]] : tensor<?x128xf32>, tensor<?x128xf32>) bias(
// LSTM-NOT: weights(
// LSTM: lstm.gate sigmoid add(%[[XF]], %[[HF]] : tensor<?x128xf32>, tensor<?x128xf32>) bias(
// LSTM-NOT: weights(
// LSTM: lstm.gate tanh add(%[[XG]], %[[HG]] : tensor<?x128xf32>, tensor<?x128xf32>) bias(
// LSTM-NOT: weights(
// LSTM: lstm.gate sigmoid add(%[[XO]], %[[HO]] : tensor<?x128xf32>, tensor<?x128xf32>) bias(
// LSTM-NOT: weights(
// LSTM: lstm.yield

// Peepholes stay on their gates.
// PEEP-NOT: tensor.concat
// PEEP: lstm.layer
// PEEP-COUNT-2: lstm.gate identity{{.*}}
// PEEP: lstm.gate sigmoid add({{.*}}) bias({{.*}}) peephole(
// PEEP: lstm.gate sigmoid add({{.*}}) bias({{.*}}) peephole(
// PEEP: lstm.gate tanh add(
// PEEP: lstm.gate sigmoid add({{.*}}) bias({{.*}}) peephole(
// PEEP-NOT: weights(
// PEEP: lstm.yield

// The PyTorch GRU keeps R_n h separate from x (its own gate), so all three
// gates share h: two GEMMs, [B, 3H] each.
// GRU-NOT: tensor.concat
// GRU: lstm.layer
// GRU: lstm.gate identity({{.*}}) weights({{.*}} : tensor<384x64xf32>) -> tensor<?x384xf32>
// GRU: lstm.gate identity({{.*}}) weights({{.*}} : tensor<384x128xf32>) -> tensor<?x384xf32>
// GRU-NOT: weights(
// GRU: lstm.yield

// Cho GRU, R_n multiplies r ⊙ h, which depends on the gate r; it is not
// combined with R_r and R_z (the h group has two gates, not three). The x
// group is all of W; the h group the first two blocks of R, one slice.
// CHO-LABEL: func.func @forward
// CHO-SAME: %[[WX:[^:]*]]: tensor<384x64xf32>, %[[R:[^:]*]]: tensor<384x128xf32>
// CHO: %[[WH:.*]] = tensor.extract_slice %[[R]][0, 0] [256, 128] [1, 1] : tensor<384x128xf32> to tensor<256x128xf32>
// CHO-NOT: tensor.concat
// CHO: lstm.layer
// CHO-NEXT: ^bb0(%[[XT:.*]]: tensor<?x64xf32>, %[[H:.*]]: tensor<?x128xf32>):
// CHO: %[[GX:.*]] = lstm.gate identity(%[[XT]] : tensor<?x64xf32>) weights(%[[WX]] : tensor<384x64xf32>) -> tensor<?x384xf32>
// CHO: %[[XN:.*]] = tensor.extract_slice %[[GX]][0, 256] [%{{.*}}, 128] [1, 1]
// CHO: %[[GH:.*]] = lstm.gate identity(%[[H]] : tensor<?x128xf32>) weights(%[[WH]] : tensor<256x128xf32>) -> tensor<?x256xf32>
// CHO: %[[R:.*]] = lstm.gate sigmoid add(
// CHO: lstm.gate sigmoid add(
// CHO: %[[RH:.*]] = arith.mulf %[[R]], %[[H]]
// CHO: lstm.gate tanh(%[[RH]] : tensor<?x128xf32>) weights(%[[RN:.*]] : tensor<128x128xf32>) add(%[[XN]] : tensor<?x128xf32>) bias(
// CHO-NOT: weights(
// CHO: lstm.yield

// MGU, the x products of f and n combine; h multiplies only f (n multiplies
// f ⊙ h), so no recurrent product is combined.
// MGU-NOT: tensor.concat
// MGU: lstm.layer
// MGU-NEXT: ^bb0(%[[XT:.*]]: tensor<?x64xf32>, %[[H:.*]]: tensor<?x128xf32>):
// MGU: lstm.gate identity(%[[XT]] : tensor<?x64xf32>) weights(%{{.*}} : tensor<256x64xf32>) -> tensor<?x256xf32>
// MGU: %[[F:.*]] = lstm.gate sigmoid(%[[H]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<128x128xf32>) add(
// MGU: %[[FH:.*]] = arith.mulf %[[F]], %[[H]]
// MGU: lstm.gate tanh(%[[FH]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<128x128xf32>) add(
// MGU: lstm.yield

// FGR, x and h combine over the four gates; each previous gate activation
// (i, f, o of the last step, part of the state) is its own operand group
// over the three gates that read it.
// (Each group's weights are in-order blocks of W, R or a column block of
// Rg: slices, no concatenation.)
// FGR-NOT: tensor.concat
// FGR: lstm.layer
// FGR-NEXT: ^bb0(%[[XT:[^:]*]]: {{.*}}, %[[H:[^:]*]]: {{.*}}, %[[C:[^:]*]]: {{.*}}, %[[IP:[^:]*]]: {{.*}}, %[[FP:[^:]*]]: {{.*}}, %[[OP:[^:]*]]: tensor<?x128xf32>):
// FGR: lstm.gate identity(%[[XT]] : tensor<?x64xf32>) weights(%{{.*}} : tensor<512x64xf32>) -> tensor<?x512xf32>
// FGR: lstm.gate identity(%[[H]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<512x128xf32>) -> tensor<?x512xf32>
// FGR: lstm.gate identity(%[[IP]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<384x128xf32>) -> tensor<?x384xf32>
// FGR: lstm.gate identity(%[[FP]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<384x128xf32>) -> tensor<?x384xf32>
// FGR: lstm.gate identity(%[[OP]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<384x128xf32>) -> tensor<?x384xf32>
// FGR: lstm.gate sigmoid add(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} : {{.*}}) bias({{.*}}) peephole(
// FGR: lstm.gate sigmoid add(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} : {{.*}}) bias({{.*}}) peephole(
// FGR: lstm.gate tanh add(%{{[^,]*}}, %{{[^ ]*}} : tensor<?x128xf32>, tensor<?x128xf32>) bias(
// FGR: lstm.gate sigmoid add(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^ ]*}} : {{.*}}) bias({{.*}}) peephole(
// FGR-NOT: weights(
// FGR: lstm.yield

// CIFG, three gates (f = 1 - i).
// CIFG-NOT: tensor.concat
// CIFG: lstm.layer
// CIFG-COUNT-2: lstm.gate identity{{.*}}
// CIFG-NOT: weights(
// CIFG: lstm.yield

// Stacked and bidirectional layers: each layer packs its own weights (its
// own W and R, as they are).
// STACK: lstm.layer forward
// STACK-COUNT-2: lstm.gate identity{{.*}}
// STACK-NOT: weights(
// STACK: lstm.yield
// STACK: lstm.layer forward
// STACK-COUNT-2: lstm.gate identity{{.*}}
// STACK-NOT: weights(
// STACK: lstm.yield
// STACK: lstm.layer forward
// STACK-COUNT-2: lstm.gate identity{{.*}}
// STACK-NOT: weights(
// STACK: lstm.yield

// BIDIR: lstm.layer forward
// BIDIR-COUNT-2: lstm.gate identity{{.*}}
// BIDIR-NOT: weights(
// BIDIR: lstm.yield
// BIDIR: lstm.layer reverse
// BIDIR-COUNT-2: lstm.gate identity{{.*}}
// BIDIR-NOT: weights(
// BIDIR: lstm.yield

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
