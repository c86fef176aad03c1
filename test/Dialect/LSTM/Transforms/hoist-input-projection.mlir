// RUN: lstm-opt %s --lstm-hoist-input-projection -split-input-file -verify-each | FileCheck %s
// RUN: lstm-opt %examples/lstm.mlir --lstm-hoist-input-projection -verify-each | FileCheck %s --check-prefix=LSTM
// RUN: lstm-opt %examples/lstm.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection -verify-each | FileCheck %s --check-prefix=COMB
// RUN: lstm-opt %examples/gru.mlir --lstm-hoist-input-projection -verify-each | FileCheck %s --check-prefix=GRU
// RUN: lstm-opt %examples/cho_gru.mlir --lstm-hoist-input-projection -verify-each | FileCheck %s --check-prefix=CHO
// RUN: lstm-opt %examples/stack3.mlir --lstm-hoist-input-projection -verify-each | FileCheck %s --check-prefix=STACK
// RUN: lstm-opt %examples/bidirectional.mlir --lstm-combine-gate-gemms --lstm-hoist-input-projection -verify-each | FileCheck %s --check-prefix=BIDIR
// RUN: lstm-opt %examples/varlen.mlir --lstm-hoist-input-projection -verify-each | FileCheck %s --check-prefix=VARLEN

// The raw LSTM cell: the four x products become one GEMM over T·B rows
// against the stacked W; the recurrent products stay. The biases stay in the
// gates (each gate also has R h: folding them would reassociate its sum).
// The gates' blocks of W, stacked in order, are W itself.
// LSTM-LABEL: func.func @forward
// LSTM-SAME: (%[[X:[^:]*]]: tensor<?x?x64xf32>, %{{[^:]*}}: tensor<?x128xf32>, %{{[^:]*}}: tensor<?x128xf32>, %[[W:[^:]*]]: tensor<512x64xf32>
// LSTM-NOT: tensor.concat
// LSTM: %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x64xf32> into tensor<?x64xf32>
// LSTM-NEXT: %[[P:.*]] = lstm.gate identity(%[[FLAT]] : tensor<?x64xf32>) weights(%[[W]] : tensor<512x64xf32>) -> tensor<?x512xf32>
// LSTM: %[[T:.*]] = tensor.dim %[[X]], %c0
// LSTM: %[[B:.*]] = tensor.dim %[[X]], %c1
// LSTM-NEXT: %[[SEQ:.*]] = tensor.expand_shape %[[P]] {{\[}}[0, 1], [2]] output_shape [%[[T]], %[[B]], 512] : tensor<?x512xf32> into tensor<?x?x512xf32>
// LSTM-NEXT: lstm.layer forward ins(%[[SEQ]] : tensor<?x?x512xf32>)
// LSTM-NEXT: ^bb0(%[[PT:.*]]: tensor<?x512xf32>, %[[H:.*]]: tensor<?x128xf32>, %{{.*}}: tensor<?x128xf32>):
// LSTM: %[[PI:.*]] = tensor.extract_slice %[[PT]][0, 0] [%{{.*}}, 128] [1, 1] : tensor<?x512xf32> to tensor<?x128xf32>
// LSTM: %[[PF:.*]] = tensor.extract_slice %[[PT]][0, 128] [%{{.*}}, 128] [1, 1]
// LSTM: %[[PG:.*]] = tensor.extract_slice %[[PT]][0, 256] [%{{.*}}, 128] [1, 1]
// LSTM: %[[PO:.*]] = tensor.extract_slice %[[PT]][0, 384] [%{{.*}}, 128] [1, 1]
// LSTM: lstm.gate sigmoid(%[[H]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<128x128xf32>) add(%[[PI]] : tensor<?x128xf32>) bias(
// LSTM: lstm.gate sigmoid(%[[H]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<128x128xf32>) add(%[[PF]] : tensor<?x128xf32>) bias(
// LSTM: lstm.gate tanh(%[[H]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<128x128xf32>) add(%[[PG]] : tensor<?x128xf32>) bias(
// LSTM: lstm.gate sigmoid(%[[H]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<128x128xf32>) add(%[[PO]] : tensor<?x128xf32>) bias(
// LSTM-NOT: tensor<?x64xf32>
// LSTM: lstm.yield

// After combining, the combined identity gate on x_t is the hoisted GEMM;
// the cell slices the step's [B, 512] row block directly and keeps one GEMM.
// COMB-LABEL: func.func @forward
// COMB-SAME: %[[WX:[^:]*]]: tensor<512x64xf32>, %[[WH:[^:]*]]: tensor<512x128xf32>
// COMB-NOT: tensor.concat
// COMB: tensor.collapse_shape
// COMB-NEXT: lstm.gate identity(%{{.*}} : tensor<?x64xf32>) weights(%[[WX]] : tensor<512x64xf32>) -> tensor<?x512xf32>
// COMB: lstm.layer forward ins(%{{.*}} : tensor<?x?x512xf32>)
// COMB-NEXT: ^bb0(%[[PT:.*]]: tensor<?x512xf32>, %[[H:.*]]: tensor<?x128xf32>, %{{.*}}: tensor<?x128xf32>):
// COMB-COUNT-4: tensor.extract_slice %[[PT]]
// COMB: lstm.gate identity(%[[H]] : tensor<?x128xf32>) weights(%[[WH]] : tensor<512x128xf32>) -> tensor<?x512xf32>
// COMB-NOT: lstm.gate identity
// COMB-NOT: weights(
// COMB: lstm.yield

// PyTorch's GRU, n's x product has the gate to itself with its bias b_in, so
// b_in folds into the hoisted GEMM (zeros for r and u) and that gate
// disappears; r and u keep their biases (they also have R h).
// GRU: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<128xf32>
// GRU: %[[BIAS:.*]] = tensor.concat dim(0) %[[Z]], %[[Z]], %{{.*}} : {{.*}} -> tensor<384xf32>
// GRU: lstm.gate identity(%{{.*}} : tensor<?x64xf32>) weights(%{{.*}} : tensor<384x64xf32>) bias(%[[BIAS]] : tensor<384xf32>) -> tensor<?x384xf32>
// GRU: lstm.layer forward ins(%{{.*}} : tensor<?x?x384xf32>)
// GRU: %[[PN:.*]] = tensor.extract_slice %{{.*}}[0, 256] [%{{.*}}, 128] [1, 1]
// GRU: lstm.gate sigmoid(%{{.*}}) weights(%{{.*}}) add(%{{.*}}) bias(%{{[^,]*}}, %{{[^ ]*}} :
// GRU: lstm.gate sigmoid(%{{.*}}) weights(%{{.*}}) add(%{{.*}}) bias(%{{[^,]*}}, %{{[^ ]*}} :
// GRU: %[[HN:.*]] = lstm.gate identity(%{{.*}} : tensor<?x128xf32>) weights(
// GRU: %[[RHN:.*]] = arith.mulf %{{.*}}, %[[HN]]
// GRU: arith.addf %[[PN]], %[[RHN]]
// GRU: lstm.yield

// Cho's GRU, all three x products hoist; R_n (r ⊙ h) stays in the cell.
// CHO: lstm.gate identity(%{{.*}} : tensor<?x64xf32>) weights(%{{.*}} : tensor<384x64xf32>) -> tensor<?x384xf32>
// CHO: lstm.layer forward ins(%{{.*}} : tensor<?x?x384xf32>)
// CHO: %[[RH:.*]] = arith.mulf
// CHO: lstm.gate tanh(%[[RH]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<128x128xf32>) add(
// CHO: lstm.yield

// A stack: each layer's input GEMM is hoisted right before that layer, the
// later ones reading the previous layer's output sequence.
// STACK: %[[Y0:.*]], %{{.*}}:2 = lstm.layer forward ins(%{{.*}} : tensor<?x?x512xf32>)
// STACK: lstm.yield
// STACK: %[[F1:.*]] = tensor.collapse_shape %[[Y0]] {{\[}}[0, 1], [2]] : tensor<?x?x128xf32> into tensor<?x128xf32>
// STACK-NEXT: lstm.gate identity(%[[F1]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<512x128xf32>) -> tensor<?x512xf32>
// STACK: %[[Y1:.*]], %{{.*}}:2 = lstm.layer forward ins(%{{.*}} : tensor<?x?x512xf32>)
// STACK: lstm.yield
// STACK: %[[F2:.*]] = tensor.collapse_shape %[[Y1]] {{\[}}[0, 1], [2]]
// STACK-NEXT: lstm.gate identity(%[[F2]] : tensor<?x128xf32>) weights(%{{.*}} : tensor<512x128xf32>) -> tensor<?x512xf32>
// STACK: lstm.layer forward ins(%{{.*}} : tensor<?x?x512xf32>)

// Bidirectional: both directions hoist their own GEMM on the same x.
// BIDIR: tensor.collapse_shape %[[X:[^ ]*]]
// BIDIR: lstm.layer forward ins(%{{.*}} : tensor<?x?x512xf32>)
// BIDIR: tensor.collapse_shape %[[X]]
// BIDIR: lstm.layer reverse ins(%{{.*}} : tensor<?x?x512xf32>)

// Lengths stay on the layer: the hoisted sequence is indexed like x and the
// layer masks rows past their length as before.
// VARLEN: lstm.layer forward ins(%{{.*}} : tensor<?x?x512xf32>) init({{.*}}) lengths(%{{.*}} : tensor<?xi32>)

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
