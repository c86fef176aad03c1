// RUN: lstm-opt %s --lstm-differentiate --canonicalize --cse -split-input-file -verify-each | FileCheck %s
// RUN: lstm-opt %s --lstm-combine-gate-gemms --lstm-differentiate --canonicalize --cse --canonicalize -split-input-file | FileCheck %s --check-prefix=COMBINED

// A tanh RNN. The gradient function runs the forward, whose outputs y are
// all the backward needs: the gate's result is y, and the states the steps
// started from are y shifted by one step behind h0 (H_prev, rebuilt from y
// rather than saved). Then the backward layer in the other direction:
// its state is dh, its input the cotangent dy of y and the saved sequences;
// per step tanh' from the saved result and dh_{t-1} = dz · R, a gate
// product against R^T made once before the loop. dz leaves the loop as the
// only output; after it: dX = dZ · W, dW = dZ^T · X, dR = dZ^T · H_prev and
// db = the sum of dZ over all T·B rows.

func.func @rnn(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %W: tensor<8x4xf32>,
               %R: tensor<8x8xf32>, %b: tensor<8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>)
        bias(%b : tensor<8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %hT : tensor<?x?x8xf32>, tensor<?x8xf32>
}

// CHECK-LABEL: func.func @rnn(
// CHECK-LABEL: func.func @rnn_grad(
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x4xf32>, %[[H0:[^:]*]]: tensor<?x8xf32>, %[[W:[^:]*]]: tensor<8x4xf32>, %[[R:[^:]*]]: tensor<8x8xf32>, %[[B:[^:]*]]: tensor<8xf32>, %[[DY:[^:]*]]: tensor<?x?x8xf32>, %[[DHT:[^:]*]]: tensor<?x8xf32>)
// CHECK-SAME: -> (tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<8x4xf32>, tensor<8x8xf32>, tensor<8xf32>)
// CHECK: %[[FWD:.*]], %{{.*}} = lstm.layer forward ins(%[[X]] : tensor<?x?x4xf32>) init(%[[H0]] : tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<?x4xf32>, %{{.*}}: tensor<?x8xf32>):
// CHECK-NEXT: %[[HN:.*]] = lstm.gate tanh
// CHECK-NEXT: lstm.yield out(%[[HN]] : tensor<?x8xf32>) state(%[[HN]] : tensor<?x8xf32>)
// CHECK: %[[RT:.*]] = linalg.transpose ins(%[[R]] : tensor<8x8xf32>) {{.*}} permutation = [1, 0]
// CHECK: %[[FIRST:.*]] = tensor.expand_shape %[[H0]] {{\[\[}}0, 1], [2]] output_shape [1, %{{.*}}, 8] : tensor<?x8xf32> into tensor<1x?x8xf32>
// CHECK: %[[ALL:.*]] = tensor.concat dim(0) %[[FIRST]], %[[FWD]] : (tensor<1x?x8xf32>, tensor<?x?x8xf32>) -> tensor<?x?x8xf32>
// CHECK: %[[HPREV:.*]] = tensor.extract_slice %[[ALL]][0, 0, 0] [%{{.*}}, %{{.*}}, 8] [1, 1, 1]
// The backward cell does not read H_prev (only dR does, after the loop):
// the canonicaliser drops it from the layer's inputs.
// CHECK: %[[DZS:.*]], %[[DH0:.*]] = lstm.layer reverse ins(%[[DY]], %[[FWD]] : {{.*}}) init(%[[DHT]] : tensor<?x8xf32>)
// CHECK-NEXT: ^bb0(%[[DYT:.*]]: tensor<?x8xf32>, %[[YT:.*]]: tensor<?x8xf32>, %[[DH:.*]]: tensor<?x8xf32>):
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[DH]], %[[DYT]]
// CHECK-NEXT: %[[Y2:.*]] = arith.mulf %[[YT]], %[[YT]]
// CHECK-NEXT: %[[ONE:.*]] = lstm.one_minus %[[Y2]]
// CHECK-NEXT: %[[DZ:.*]] = arith.mulf %[[D]], %[[ONE]]
// CHECK-NEXT: %[[DHP:.*]] = lstm.gate identity(%[[DZ]] : tensor<?x8xf32>) weights(%[[RT]] : tensor<8x8xf32>)
// CHECK-NEXT: lstm.yield out(%[[DZ]] : tensor<?x8xf32>) state(%[[DHP]] : tensor<?x8xf32>)
// CHECK: %[[DZF:.*]] = tensor.collapse_shape %[[DZS]] {{\[\[}}0, 1], [2]]
// CHECK: %[[DXF:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DZF]], %[[W]] : tensor<?x8xf32>, tensor<8x4xf32>)
// CHECK: %[[DX:.*]] = tensor.expand_shape %[[DXF]]
// CHECK: %[[XF:.*]] = tensor.collapse_shape %[[X]]
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} ins(%[[DZF]], %[[XF]] : tensor<?x8xf32>, tensor<?x4xf32>) outs(%{{.*}} : tensor<8x4xf32>)
// CHECK: %[[HF:.*]] = tensor.collapse_shape %[[HPREV]]
// CHECK: %[[DR:.*]] = linalg.generic {{.*}} ins(%[[DZF]], %[[HF]] : tensor<?x8xf32>, tensor<?x8xf32>) outs(%{{.*}} : tensor<8x8xf32>)
// The bias gradient, a sum over all T·B rows, is the GEMM 1ᵀ·dZ (cuBLAS on
// the GPU), the ones a splat that canonicalization does not fold into it.
// CHECK: %[[ONES:.*]] = tensor.splat %{{.*}}[%{{.*}}] : tensor<1x?xf32>
// CHECK: %[[DB1:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[ONES]], %[[DZF]] : tensor<1x?xf32>, tensor<?x8xf32>) outs(%{{.*}} : tensor<1x8xf32>)
// CHECK: %[[DB:.*]] = tensor.collapse_shape %[[DB1]] {{\[\[}}0, 1]] : tensor<1x8xf32> into tensor<8xf32>
// CHECK: return %[[DX]], %[[DH0]], %[[DW]], %[[DR]], %[[DB]]

// The training forward returns y and hT and saves nothing else: the
// backward reads y, which it is given as a result.
// CHECK-LABEL: func.func @rnn_train(
// CHECK-SAME: -> (tensor<?x?x8xf32>, tensor<?x8xf32>) {
// CHECK: %[[T:.*]], %[[TF:.*]] = lstm.layer forward
// CHECK: return %[[T]], %[[TF]]

// The backward takes the arguments, what the training forward returned and
// the cotangents, and does not run the forward recurrence; it rebuilds
// H_prev from h0 and y.
// CHECK-LABEL: func.func @rnn_backward(
// CHECK-SAME: %{{[^:]*}}: tensor<?x?x4xf32>, %[[BH0:[^:]*]]: tensor<?x8xf32>, %{{[^:]*}}: tensor<8x4xf32>, %{{[^:]*}}: tensor<8x8xf32>, %{{[^:]*}}: tensor<8xf32>, %[[BY:[^:]*]]: tensor<?x?x8xf32>, %{{[^:]*}}: tensor<?x8xf32>, %[[BDY:[^:]*]]: tensor<?x?x8xf32>, %[[BDH:[^:]*]]: tensor<?x8xf32>)
// CHECK-NOT: lstm.layer forward
// CHECK: %[[BFIRST:.*]] = tensor.expand_shape %[[BH0]]
// CHECK: %[[BALL:.*]] = tensor.concat dim(0) %[[BFIRST]], %[[BY]]
// CHECK: %[[BH:.*]] = tensor.extract_slice %[[BALL]][0, 0, 0]
// CHECK: lstm.layer reverse ins(%[[BDY]], %[[BY]] : {{.*}}) init(%[[BDH]] : tensor<?x8xf32>)
// CHECK-NOT: lstm.layer
// CHECK: return

// -----

// An LSTM whose gate products were combined: the backward step has one GEMM,
// dh_{t-1} = dG · R_packed, where dG [B, 4H] is the gates' dz assembled in
// one buffer (no zero fill: the slices cover it); the input projection's
// and the recurrent product's cotangents are the same dG (CSE), which leaves
// the loop once. With lengths, the backward layer masks the same steps.

func.func @lstm(%x: tensor<?x?x4xf32>, %len: tensor<?xi32>, %h0: tensor<?x8xf32>,
                %c0: tensor<?x8xf32>, %W: tensor<32x4xf32>, %R: tensor<32x8xf32>,
                %b: tensor<32xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %Wi = tensor.extract_slice %W[0, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wf = tensor.extract_slice %W[8, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wg = tensor.extract_slice %W[16, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Wo = tensor.extract_slice %W[24, 0] [8, 4] [1, 1] : tensor<32x4xf32> to tensor<8x4xf32>
  %Ri = tensor.extract_slice %R[0, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rf = tensor.extract_slice %R[8, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Rg = tensor.extract_slice %R[16, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %Ro = tensor.extract_slice %R[24, 0] [8, 8] [1, 1] : tensor<32x8xf32> to tensor<8x8xf32>
  %bi = tensor.extract_slice %b[0] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bf = tensor.extract_slice %b[8] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bg = tensor.extract_slice %b[16] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %bo = tensor.extract_slice %b[24] [8] [1] : tensor<32xf32> to tensor<8xf32>
  %y, %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0 : tensor<?x8xf32>, tensor<?x8xf32>) lengths(%len : tensor<?xi32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>) weights(%Wi, %Ri : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bi : tensor<8xf32>) -> tensor<?x8xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>) weights(%Wf, %Rf : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bf : tensor<8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>) weights(%Wg, %Rg : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bg : tensor<8xf32>) -> tensor<?x8xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>) weights(%Wo, %Ro : tensor<8x4xf32>, tensor<8x8xf32>) bias(%bo : tensor<8xf32>) -> tensor<?x8xf32>
    %ig = arith.mulf %i, %g : tensor<?x8xf32>
    %fc = arith.mulf %f, %c : tensor<?x8xf32>
    %cn = arith.addf %fc, %ig : tensor<?x8xf32>
    %tc = math.tanh %cn : tensor<?x8xf32>
    %hn = arith.mulf %o, %tc : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// The saved sequences: c_{t-1} and the four gates; h_{t-1} is rebuilt from
// y (with lengths too: past a sequence's end y is zero where the state was
// held, and the backward masks those steps). The backward's only output is
// dG: the biases' gradient is one sum of it over the rows, sliced per gate.
// COMBINED-LABEL: func.func @lstm_grad(
// COMBINED: %[[Y:.*]]:6, %{{.*}}:2 = lstm.layer forward {{.*}} lengths(%{{.*}} : tensor<?xi32>)
// COMBINED: tensor.concat dim(0) %{{.*}}, %[[Y]]#0
// COMBINED: lstm.layer reverse {{.*}} lengths(%{{.*}} : tensor<?xi32>)
// COMBINED: %[[DG0:.*]] = tensor.empty(%{{.*}}) : tensor<?x32xf32>
// COMBINED-NOT: linalg.fill
// COMBINED: %[[DG1:.*]] = tensor.insert_slice %{{.*}} into %[[DG0]]
// COMBINED: %[[DG2:.*]] = tensor.insert_slice %{{.*}} into %[[DG1]]
// COMBINED: %[[DG3:.*]] = tensor.insert_slice %{{.*}} into %[[DG2]]
// COMBINED: %[[DG:.*]] = tensor.insert_slice %{{.*}} into %[[DG3]]
// COMBINED-NEXT: %[[DH:.*]] = lstm.gate identity(%[[DG]] : tensor<?x32xf32>) weights(%{{.*}} : tensor<8x32xf32>) -> tensor<?x8xf32>
// COMBINED-NOT: lstm.gate
// COMBINED: lstm.yield out(%[[DG]] : tensor<?x32xf32>) state(%[[DH]], %{{.*}} : tensor<?x8xf32>, tensor<?x8xf32>)
// COMBINED: %[[SUM1:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} {{.*}} outs(%{{.*}} : tensor<1x32xf32>)
// COMBINED: %[[SUM:.*]] = tensor.collapse_shape %[[SUM1]]
// COMBINED-COUNT-4: tensor.extract_slice %[[SUM]]
// The integer lengths get no gradient.
// COMBINED: return {{.*}} : tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<32x4xf32>, tensor<32x8xf32>, tensor<32xf32>
// COMBINED-LABEL: func.func @lstm_train(
// COMBINED-LABEL: func.func @lstm_backward(

// -----

// A reverse layer's backward runs forward in time. A constant bias has no
// gradient; an argument no result depends on gets zeros.

func.func @reverse(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %W: tensor<8x4xf32>,
                   %unused: tensor<8xf32>) -> tensor<?x8xf32> {
  %beta = arith.constant dense<-1.0> : tensor<8xf32>
  %hT = lstm.layer reverse ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %g = lstm.gate sigmoid (%xt : tensor<?x4xf32>) weights(%W : tensor<8x4xf32>)
        bias(%beta : tensor<8xf32>) -> tensor<?x8xf32>
    %hn = arith.mulf %g, %h : tensor<?x8xf32>
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @reverse_grad(
// CHECK: lstm.layer reverse
// CHECK: lstm.layer forward
// CHECK-NOT: iterator_types = ["parallel", "reduction"]
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<8xf32>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[Z]] : tensor<?x?x4xf32>, tensor<?x8xf32>, tensor<8x4xf32>, tensor<8xf32>

// -----

// The states a reverse layer's steps started from are y shifted the other
// way, [y_1, ..., y_{T-1}, h0]. With lengths each sequence starts at its own
// last step, where the state is h0 and not y's next step: the state is saved.

func.func @reverse_states(%x: tensor<?x?x4xf32>, %len: tensor<?xi32>,
                          %h0: tensor<?x8xf32>, %W: tensor<8x4xf32>,
                          %R: tensor<8x8xf32>)
    -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
  %y, %hT = lstm.layer reverse ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %z, %zT = lstm.layer reverse ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>)
      lengths(%len : tensor<?xi32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  return %y, %z : tensor<?x?x8xf32>, tensor<?x?x8xf32>
}

// CHECK-LABEL: func.func @reverse_states_train(
// CHECK-SAME: -> (tensor<?x?x8xf32>, tensor<?x?x8xf32>, tensor<?x?x8xf32>) {
// CHECK: %[[Y:.*]], %{{.*}} = lstm.layer reverse ins
// CHECK: %[[Z:.*]]:2, %{{.*}} = lstm.layer reverse ins({{.*}}) init({{.*}}) lengths
// CHECK: lstm.yield out(%[[ZN:.*]], %[[ZH:.*]] : tensor<?x8xf32>, tensor<?x8xf32>) state(%[[ZN]] : tensor<?x8xf32>)
// CHECK: return %[[Y]], %[[Z]]#0, %[[Z]]#1
// CHECK-LABEL: func.func @reverse_states_backward(
// CHECK-SAME: %[[H0:[^:]*]]: tensor<?x8xf32>, %{{[^:]*}}: tensor<8x4xf32>, %{{[^:]*}}: tensor<8x8xf32>, %[[BY:[^:]*]]: tensor<?x?x8xf32>, %[[BZ:[^:]*]]: tensor<?x?x8xf32>, %[[BZH:[^:]*]]: tensor<?x?x8xf32>,
// CHECK: lstm.layer forward ins(%{{.*}}, %[[BZ]] : {{.*}}) init({{.*}}) lengths
// CHECK: %[[LAST:.*]] = tensor.expand_shape %[[H0]]
// CHECK: %[[ALL:.*]] = tensor.concat dim(0) %[[BY]], %[[LAST]]
// CHECK: %[[HPREV:.*]] = tensor.extract_slice %[[ALL]][1, 0, 0]
// CHECK: lstm.layer forward ins(%{{.*}}, %[[BY]] : {{.*}}) init

// -----

// A fused cell: the adjoint of an lstm.pointwise is another one, built from
// the scalar rules of its region; the bias, broadcast in the forward, gets
// the sum over the rows.

func.func @fused(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>, %b: tensor<8xf32>)
    -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %hn = lstm.pointwise ins(%xt, %h, %b : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32> {
    ^bb0(%a: f32, %s: f32, %c: f32):
      %m = arith.mulf %a, %s : f32
      %p = arith.addf %m, %c : f32
      %t = math.tanh %p : f32
      lstm.pointwise_yield %t : f32
    }
    lstm.yield state(%hn : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @fused_grad(
// CHECK: lstm.layer reverse
// CHECK: %{{.*}}:3 = lstm.pointwise ins(%{{.*}} : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
// CHECK: math.tanh
// CHECK: arith.subf
// CHECK: lstm.pointwise_yield
// CHECK: tensor.splat
// CHECK: iterator_types = ["parallel", "parallel", "reduction"]

// -----

// Two peephole vectors: their per-step products dz ⊙ c leave the loop side
// by side in one [B, 16] output of the backward layer (besides dz for the
// weights), and one sum over its rows gives both gradients, sliced.

func.func @peepholes(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %c0: tensor<?x8xf32>,
                     %W: tensor<8x4xf32>, %R: tensor<8x8xf32>, %p: tensor<8xf32>,
                     %q: tensor<8xf32>) -> tensor<?x8xf32> {
  %hT, %cT = lstm.layer forward ins(%x : tensor<?x?x4xf32>)
      init(%h0, %c0 : tensor<?x8xf32>, tensor<?x8xf32>) -> (), (tensor<?x8xf32>, tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>, %c: tensor<?x8xf32>):
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>)
        peephole(%p, %c : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x8xf32>)
        weights(%W, %R : tensor<8x4xf32>, tensor<8x8xf32>)
        peephole(%q, %c : tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
    %cn = arith.mulf %f, %g : tensor<?x8xf32>
    lstm.yield state(%g, %cn : tensor<?x8xf32>, tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @peepholes_grad(
// CHECK: %[[BWD:.*]]:{{[0-9]+}}, %{{.*}}:2 = lstm.layer reverse
// CHECK: %[[SIDE:.*]] = tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [%{{.*}}, 8] [1, 1] : tensor<?x8xf32> into tensor<?x16xf32>
// CHECK: %[[BOTH:.*]] = tensor.insert_slice %{{.*}} into %[[SIDE]][0, 8] [%{{.*}}, 8] [1, 1] : tensor<?x8xf32> into tensor<?x16xf32>
// CHECK: lstm.yield out({{.*}}%[[BOTH]]
// CHECK: %[[ROWS:.*]] = tensor.collapse_shape %[[BWD]]#{{[0-9]+}} {{.*}} : tensor<?x?x16xf32> into tensor<?x16xf32>
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %[[ROWS]] : tensor<1x?xf32>, tensor<?x16xf32>)
// CHECK: %[[ROW:.*]] = tensor.collapse_shape %[[SUM]] {{.*}} : tensor<1x16xf32> into tensor<16xf32>
// CHECK-DAG: tensor.extract_slice %[[ROW]][0] [8] [1] : tensor<16xf32> to tensor<8xf32>
// CHECK-DAG: tensor.extract_slice %[[ROW]][8] [8] [1] : tensor<16xf32> to tensor<8xf32>
// CHECK-NOT: tensor<1x8xf32>
// CHECK: return
