// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// RUN: lstm-opt %s --lstm-wavefront=side-output-max-product=268435456 -split-input-file | FileCheck %s
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-wavefront --canonicalize --cse | FileCheck %s --check-prefix=STACK3
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-combine-gate-gemms --lstm-wavefront --canonicalize --cse | FileCheck %s --check-prefix=COMBINED
// RUN: lstm-opt %S/Inputs/wavefront-rnn2.mlir --lstm-wavefront --canonicalize --cse | FileCheck %s --check-prefix=RNN2
// RUN: lstm-opt %S/Inputs/wavefront-gru4-reverse.mlir --lstm-wavefront --canonicalize --cse | FileCheck %s --check-prefix=GRU4
// RUN: lstm-opt %S/Inputs/wavefront-peephole4.mlir --lstm-wavefront --canonicalize --cse | FileCheck %s --check-prefix=PEEP4
// With fewer-products-only (what lstm-optimize asks where it hoists), a
// chain is rewritten only where its loop runs fewer products in sequence
// than its layers with their input products hoisted: two Elman layers (2
// products a cell, 1 on the input: 2(T + 1) against 2T) stay layers, three
// LSTM layers (2(T + 2) against 3T once combined) do not. lstm-optimize
// without hoisting rewrites both.
// RUN: lstm-opt %S/Inputs/wavefront-rnn2.mlir --lstm-wavefront=fewer-products-only=true | FileCheck %s --check-prefix=FEWER2
// RUN: lstm-opt %S/Inputs/wavefront-rnn2.mlir --lstm-optimize | FileCheck %s --check-prefix=FEWER2
// RUN: lstm-opt %S/Inputs/wavefront-rnn2.mlir '--lstm-optimize=hoist=false' | FileCheck %s --check-prefix=WAVE2
// RUN: lstm-opt %S/Inputs/lstm-stack3.mlir --lstm-combine-gate-gemms --lstm-wavefront=fewer-products-only=true | FileCheck %s --check-prefix=FEWER3
// FEWER2-COUNT-2: lstm.layer forward
// FEWER2-NOT: lstm.wavefront_layers
// WAVE2-NOT: lstm.layer forward
// WAVE2: lstm.wavefront_layers = 2
// FEWER3-NOT: lstm.layer forward
// FEWER3: lstm.wavefront_layers = 3

// lstm-stack3 (layer 0: input 4, layers 1 and 2: input 8 = hidden): the
// recurrent products of the three layers are one batched gate against [3, 8, 8]
// weights; layer 0's input products (with its own weights) do not depend on
// the recurrence and are made before the loop over all T·B rows, of which
// each diagonal takes its step; the input products of layers 1 and 2 are one
// batched product on the previous diagonal's outputs of layers 0 and 1; both
// are stacked into an addend.
// STACK3-LABEL: func.func @forward
// STACK3-NOT: lstm.layer
// STACK3: %[[T:.*]] = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
// STACK3: %[[LAST:.*]] = arith.subi %[[T]], %c1 : index
// STACK3: %[[FLAT:.*]] = tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
// STACK3: %[[PI:.*]] = lstm.gate identity(%[[FLAT]] : tensor<?x4xf32>) weights(%{{.*}} : tensor<8x4xf32>) -> tensor<?x8xf32>
// STACK3: %[[PROJ:.*]] = tensor.expand_shape %[[PI]] {{\[\[}}0, 1], [2]] output_shape [%[[T]], %{{.*}}, 8] : tensor<?x8xf32> into tensor<?x?x8xf32>
// STACK3-COUNT-3: lstm.gate identity(%[[FLAT]] : tensor<?x4xf32>)
// STACK3-NOT: lstm.gate identity(%[[FLAT]]
// STACK3: %[[ND:.*]] = arith.addi %[[T]], %c2 : index
// STACK3: %[[NONE:.*]] = arith.cmpi eq, %[[T]], %c0 : index
// STACK3: %[[UB:.*]] = arith.select %[[NONE]], %c0, %[[ND]] : index
// STACK3: %[[LOOP:.*]]:4 = scf.for %[[D:.*]] = %c0 to %[[UB]] step %c1 iter_args(%[[H:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}, %[[PREV:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}}) -> (tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<3x?x8xf32>, tensor<?x?x8xf32>)
// First the last layer's output of the diagonal before, from the carried
// outputs: step (d - 1) - 2, clamped at 0 (overwritten there later).
// STACK3: %[[DL:.*]] = arith.subi %[[D]], %c3 : index
// STACK3: %[[SL:.*]] = arith.maxsi %[[DL]], %c0 : index
// STACK3: %[[OUT2:.*]] = tensor.extract_slice %[[PREV]][2, 0, 0] [1, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<?x8xf32>
// STACK3: %[[YN:.*]] = tensor.insert_slice %[[OUT2]] into %[[Y]][%[[SL]], 0, 0]
// STACK3: %[[S0:.*]] = arith.minsi %[[D]], %[[LAST]] : index
// STACK3-NOT: tensor.extract_slice %arg0
// STACK3: %[[BELOW:.*]] = tensor.extract_slice %[[PREV]][0, 0, 0] [2, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<2x?x8xf32>
// STACK3: %[[P0:.*]] = tensor.extract_slice %[[PROJ]][%[[S0]], 0, 0] [1, %{{.*}}, 8] [1, 1, 1] : tensor<?x?x8xf32> to tensor<?x8xf32>
// STACK3: %[[P12:.*]] = lstm.gate identity(%[[BELOW]] : tensor<2x?x8xf32>) weights(%{{.*}} : tensor<2x8x8xf32>) -> tensor<2x?x8xf32>
// STACK3: %[[A0:.*]] = tensor.insert_slice %[[P0]] into %{{.*}}[0, 0, 0] [1, %{{.*}}, 8] [1, 1, 1] : tensor<?x8xf32> into tensor<3x?x8xf32>
// STACK3: %[[A:.*]] = tensor.insert_slice %[[P12]] into %[[A0]][1, 0, 0] [2, %{{.*}}, 8] [1, 1, 1] : tensor<2x?x8xf32> into tensor<3x?x8xf32>
// STACK3: %[[I:.*]] = lstm.gate sigmoid(%[[H]] : tensor<3x?x8xf32>) weights(%{{.*}} : tensor<3x8x8xf32>) add(%[[A]] : tensor<3x?x8xf32>) bias(%{{.*}}, %{{.*}} : tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<3x?x8xf32>
// STACK3-COUNT-2: lstm.gate {{sigmoid|tanh}}(%[[H]] : tensor<3x?x8xf32>)
// STACK3: %[[CN:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<3x?x8xf32>
// STACK3: lstm.gate sigmoid(%[[H]] : tensor<3x?x8xf32>)
// STACK3: %[[TC:.*]] = math.tanh %[[CN]] : tensor<3x?x8xf32>
// STACK3: %[[HN:.*]] = arith.mulf %{{.*}}, %[[TC]] : tensor<3x?x8xf32>
// Inactive layers (d - l outside [0, T)) keep their state; there are none
// from diagonal L - 1 = 2 until T, where the new state is taken as it is.
// STACK3: %[[FROM:.*]] = arith.cmpi sge, %[[D]], %c2 : index
// STACK3: %[[UNTIL:.*]] = arith.cmpi slt, %[[D]], %[[T]] : index
// STACK3: %[[ALL:.*]] = arith.andi %[[FROM]], %[[UNTIL]] : i1
// STACK3: %[[HK:.*]] = scf.if %[[ALL]] -> (tensor<3x?x8xf32>) {
// STACK3-NEXT: scf.yield %[[HN]] : tensor<3x?x8xf32>
// STACK3-NEXT: } else {
// STACK3: linalg.generic {{.*}} ins(%[[HN]], %[[H]] : tensor<3x?x8xf32>, tensor<3x?x8xf32>)
// STACK3: %[[L:.*]] = linalg.index 0 : index
// STACK3: %[[STEP:.*]] = arith.subi %[[D]], %[[L]] : index
// STACK3: %[[STARTED:.*]] = arith.cmpi sge, %[[STEP]], %c0 : index
// STACK3: %[[NOTDONE:.*]] = arith.cmpi slt, %[[STEP]], %[[T]] : index
// STACK3: %[[ACTIVE:.*]] = arith.andi %[[STARTED]], %[[NOTDONE]] : i1
// STACK3: arith.select %[[ACTIVE]]
// STACK3: %[[CK:.*]] = scf.if
// STACK3: linalg.generic {{.*}} ins(%[[CN]], %[[C]] : tensor<3x?x8xf32>, tensor<3x?x8xf32>)
// STACK3: scf.yield %[[HK]], %[[CK]], %[[HN]], %[[YN]]
// STACK3: tensor.extract_slice %[[LOOP]]#0[0, 0, 0] [1, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<?x8xf32>
// After the loop, the last diagonal's (step T - 1), where there was one.
// STACK3: %[[ANY:.*]] = arith.cmpi sgt, %[[UB]], %c0 : index
// STACK3: %[[YALL:.*]] = scf.if %[[ANY]] -> (tensor<?x?x8xf32>) {
// STACK3: %[[LL:.*]] = arith.subi %[[UB]], %c3 : index
// STACK3: %[[SLL:.*]] = arith.maxsi %[[LL]], %c0 : index
// STACK3: %[[OUTL:.*]] = tensor.extract_slice %[[LOOP]]#2[2, 0, 0] [1, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<?x8xf32>
// STACK3: %[[YL:.*]] = tensor.insert_slice %[[OUTL]] into %[[LOOP]]#3[%[[SLL]], 0, 0]
// STACK3: scf.yield %[[YL]]
// STACK3: } else {
// STACK3: scf.yield %[[LOOP]]#3
// STACK3: return %[[YALL]]

// After lstm-combine-gate-gemms: one GEMM for layer 0's inputs over all
// steps before the loop, then per diagonal one batched GEMM for the inputs
// of layers 1 and 2 and one for all recurrent products; the input
// products' gate disappears (its result is the stacked addend).
// COMBINED-NOT: lstm.layer
// COMBINED: lstm.gate identity(%{{.*}} : tensor<?x4xf32>) weights(%{{.*}} : tensor<32x4xf32>) -> tensor<?x32xf32>
// COMBINED: scf.for
// COMBINED-NOT: lstm.gate identity(%{{.*}} : tensor<?x4xf32>)
// COMBINED: lstm.gate identity(%{{.*}} : tensor<2x?x8xf32>) weights(%{{.*}} : tensor<2x32x8xf32>) -> tensor<2x?x32xf32>
// COMBINED-NOT: lstm.gate identity add
// COMBINED: %[[X:.*]] = tensor.insert_slice %{{.*}}[1, 0, 0] [2, %{{.*}}, 32] [1, 1, 1] : tensor<2x?x32xf32> into tensor<3x?x32xf32>
// COMBINED: tensor.extract_slice %[[X]][0, 0, 0] [3, %{{.*}}, 8] [1, 1, 1] : tensor<3x?x32xf32> to tensor<3x?x8xf32>
// COMBINED: lstm.gate identity(%{{.*}} : tensor<3x?x8xf32>) weights(%{{.*}} : tensor<3x32x8xf32>) -> tensor<3x?x32xf32>
// COMBINED-COUNT-4: lstm.gate {{sigmoid|tanh}} add(
// COMBINED: scf.yield

// Layer 0's input size equals the hidden size: the input of all layers is
// one batched operand [x_t; output of layer 0 at the previous diagonal].
// RNN2-LABEL: func.func @forward
// What each layer's lowering would have checked, the loop checks before it
// starts: the batch of every layer's initial state.
// RNN2: cf.assert %{{.*}}, "lstm.layer: initial state #0 has a different batch size than the input (at {{.*}}wavefront-rnn2.mlir:16:15)"
// RNN2: cf.assert %{{.*}}, "lstm.layer: initial state #0 has a different batch size than the input (at {{.*}}wavefront-rnn2.mlir:25:15)"
// RNN2: scf.for %[[D:.*]] = %c0 to %{{.*}} step %c1 iter_args(%[[H:.*]] = %{{.*}}, %[[PREV:.*]] = %{{.*}}, %{{.*}} = %{{.*}})
// RNN2-DAG: %[[XT:.*]] = tensor.extract_slice %arg0[%{{.*}}, 0, 0] [1, %{{.*}}, 16] [1, 1, 1] : tensor<?x?x16xf32> to tensor<?x16xf32>
// RNN2-DAG: %[[Y0:.*]] = tensor.extract_slice %[[PREV]][0, 0, 0] [1, %{{.*}}, 16] [1, 1, 1] : tensor<2x?x16xf32> to tensor<1x?x16xf32>
// RNN2: %[[IN0:.*]] = tensor.insert_slice %[[XT]] into %{{.*}}[0, 0, 0]
// RNN2: %[[IN:.*]] = tensor.insert_slice %[[Y0]] into %[[IN0]][1, 0, 0]
// RNN2: %[[HN:.*]] = lstm.gate tanh(%[[IN]], %[[H]] : tensor<2x?x16xf32>, tensor<2x?x16xf32>) weights(%{{.*}}, %{{.*}} : tensor<2x16x16xf32>, tensor<2x16x16xf32>) bias(%{{.*}} : tensor<2x16xf32>) -> tensor<2x?x16xf32>
// RNN2: scf.yield %{{.*}}, %[[HN]], %{{.*}}

// A reverse stack: layer 0 reads step T-1-min(d, T-1) of its input
// projections (made before the loop: its input size, 8, is not the others'),
// the last layer's output of the diagonal before goes to
// T-1-max(d-1-3, 0) first, the last diagonal's after the loop. GRU's gated
// recurrent product stays a product of the batched gate; its input-only
// gate keeps its bias.
// GRU4-LABEL: func.func @forward
// GRU4: %[[T:.*]] = tensor.dim %arg0, %c0 : tensor<?x?x8xf32>
// GRU4: %[[LAST:.*]] = arith.subi %[[T]], %c1 : index
// GRU4: %[[PI:.*]] = lstm.gate identity(%{{.*}} : tensor<?x8xf32>)
// GRU4: %[[PROJ:.*]] = tensor.expand_shape %[[PI]]
// GRU4: %[[LOOP:.*]]:3 = scf.for %[[D:.*]] = %c0 to %[[UB:.*]] step %c1 iter_args(%[[H:.*]] = %{{.*}}, %[[PREV:.*]] = %{{.*}}, %[[Y:.*]] = %{{.*}})
// GRU4: %[[DL:.*]] = arith.subi %[[D]], %c4 : index
// GRU4: %[[SL:.*]] = arith.maxsi %[[DL]], %c0 : index
// GRU4: %[[TL:.*]] = arith.subi %[[LAST]], %[[SL]] : index
// GRU4: %[[OUT3:.*]] = tensor.extract_slice %[[PREV]][3, 0, 0]
// GRU4: tensor.insert_slice %[[OUT3]] into %[[Y]][%[[TL]], 0, 0]
// GRU4: %[[S0:.*]] = arith.minsi %[[D]], %[[LAST]] : index
// GRU4: %[[T0:.*]] = arith.subi %[[LAST]], %[[S0]] : index
// GRU4: tensor.extract_slice %{{.*}}[%[[T0]], 0, 0] [1, %{{.*}}, 16] [1, 1, 1] : tensor<?x?x16xf32> to tensor<?x16xf32>
// GRU4: lstm.gate identity add(%{{.*}} : tensor<4x?x16xf32>) bias(%{{.*}} : tensor<4x16xf32>) -> tensor<4x?x16xf32>
// GRU4: lstm.gate identity(%[[H]] : tensor<4x?x16xf32>) weights(%{{.*}} : tensor<4x16x16xf32>) bias(%{{.*}} : tensor<4x16xf32>) -> tensor<4x?x16xf32>
// GRU4: lstm.one_minus %{{.*}} : tensor<4x?x16xf32>
// GRU4: %[[ANY:.*]] = arith.cmpi sgt, %[[UB]], %c0 : index
// GRU4: scf.if %[[ANY]]
// GRU4: %[[LL:.*]] = arith.subi %[[UB]], %c4 : index
// GRU4: %[[SLL:.*]] = arith.maxsi %[[LL]], %c0 : index
// GRU4: %[[TLL:.*]] = arith.subi %[[LAST]], %[[SLL]] : index
// GRU4: tensor.insert_slice %{{.*}} into %[[LOOP]]#2[%[[TLL]], 0, 0]

// Peephole weights are stacked like biases; the output gate peeps at the
// new (batched) cell state.
// PEEP4-LABEL: func.func @forward
// PEEP4: scf.for
// PEEP4: lstm.gate sigmoid({{.*}}) weights({{.*}}) add({{.*}}) bias(%{{.*}} : tensor<4x16xf32>) peephole(%{{.*}}, %{{.*}} : tensor<4x16xf32>, tensor<4x?x16xf32>) -> tensor<4x?x16xf32>
// PEEP4: %[[CN:.*]] = arith.addf %{{.*}}, %{{.*}} : tensor<4x?x16xf32>
// PEEP4: lstm.gate sigmoid({{.*}}) peephole(%{{.*}}, %[[CN]] : tensor<4x16xf32>, tensor<4x?x16xf32>) -> tensor<4x?x16xf32>

// -----

// T = 1 and L > T need nothing special: a static T = 1 gives 2 diagonals.
// CHECK-LABEL: func.func @static_t1
// CHECK-NOT: lstm.layer
// CHECK: %[[ND:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step
// CHECK: lstm.gate tanh(%{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x3x4xf32>) weights(%{{.*}}, %{{.*}} : tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK: return %{{.*}} : tensor<1x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
func.func @static_t1(%x: tensor<1x3x4xf32>, %h0: tensor<3x4xf32>, %h1: tensor<3x4xf32>,
                     %W0: tensor<4x4xf32>, %R0: tensor<4x4xf32>,
                     %W1: tensor<4x4xf32>, %R1: tensor<4x4xf32>)
    -> (tensor<1x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<1x3x4xf32>) init(%h0 : tensor<3x4xf32>)
      -> (tensor<1x3x4xf32>), (tensor<3x4xf32>) {
  ^bb0(%xt: tensor<3x4xf32>, %h: tensor<3x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<3x4xf32>, tensor<3x4xf32>)
        weights(%W0, %R0 : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
    lstm.yield out(%hn : tensor<3x4xf32>) state(%hn : tensor<3x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<1x3x4xf32>) init(%h1 : tensor<3x4xf32>)
      -> (tensor<1x3x4xf32>), (tensor<3x4xf32>) {
  ^bb0(%xt: tensor<3x4xf32>, %h: tensor<3x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<3x4xf32>, tensor<3x4xf32>)
        weights(%W1, %R1 : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
    lstm.yield out(%hn : tensor<3x4xf32>) state(%hn : tensor<3x4xf32>)
  }
  return %y1, %hT0, %hT1 : tensor<1x3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// -----

// Left alone: a single layer is no stack.
// CHECK-LABEL: func.func @single_layer
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
func.func @single_layer(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> tensor<?x?x4xf32> {
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y : tensor<?x?x4xf32>
}

// -----

// Left alone: mixed directions (the reverse layer's first step needs the
// forward layer's last output, so no two cells of the stack overlap).
// CHECK-LABEL: func.func @mixed_directions
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK: lstm.layer reverse
func.func @mixed_directions(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> tensor<?x?x4xf32> {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer reverse ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1 : tensor<?x?x4xf32>
}

// -----

// Left alone: a bidirectional layer (its two layers read the same input
// and feed a tensor.concat, not each other).
// CHECK-LABEL: func.func @bidirectional
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK: lstm.layer reverse
// CHECK: tensor.concat
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

// Left alone: layers with lengths.
// CHECK-LABEL: func.func @lengths
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK: lstm.layer forward
func.func @lengths(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>,
                   %len: tensor<?xi32>) -> tensor<?x?x4xf32> {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      lengths(%len : tensor<?xi32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      lengths(%len : tensor<?xi32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1 : tensor<?x?x4xf32>
}

// -----

// Layer 0's output sequence is also returned (as a training forward returns
// what its layers save): the loop stores the batched output of every
// diagonal d at step d of an [L, T + L - 1, B, N] tensor, of which layer l's
// sequence is the view from step l of its row (layer l runs step t on
// diagonal l + t). The last layer's output is a view of the same store (its
// steps are there already): the loop's own output sequence is yielded as it
// came in, for the canonicaliser to drop.
// The batch size is dynamic: the wavefront runs where B·N·K of the largest
// product (N·K = 16 here) is at most 2^28, the layers above
// (wavefront-side-outputs.mlir). The if yields the whole store (and the
// views' lengths), the layers' branch putting layer 0's and layer 2's
// sequences where the views are (the store made before the layers, its
// extents those of x that the layers' sequences have, each sequence put in
// right after its layer: lstm-write-sequences-in-place then has the layer
// write it there), and the views are taken after the if:
// through the if's result the views' strides would not be known, and
// bufferization copied them.
// CHECK-LABEL: func.func @intermediate_used
// CHECK: %[[SMALL:.*]] = arith.cmpi ule, %{{.*}}, %c16777216 : index
// CHECK: %[[IF:.*]]:3 = scf.if %[[SMALL]] -> (tensor<3x?x?x4xf32>, index, index)
// CHECK-NOT: lstm.layer
// CHECK: %[[T:.*]] = tensor.dim %arg0, %c0{{.*}} : tensor<?x?x4xf32>
// CHECK: %[[ROWS:.*]] = arith.addi %[[T]], %c2{{.*}} : index
// CHECK: %[[STORE:.*]] = tensor.empty(%[[ROWS]], %{{.*}}) : tensor<3x?x?x4xf32>
// CHECK: %[[LOOP:.*]]:4 = scf.for %[[D:.*]] = {{.*}} iter_args({{.*}}, %[[SEQ:.*]] = %{{.*}}, %[[S:.*]] = %[[STORE]]) -> (tensor<3x?x4xf32>, tensor<3x?x4xf32>, tensor<?x?x4xf32>, tensor<3x?x?x4xf32>)
// CHECK: %[[OUT:.*]] = lstm.gate tanh({{.*}}) weights({{.*}}) -> tensor<3x?x4xf32>
// CHECK: %[[ROW:.*]] = tensor.insert_slice %[[OUT]] into %[[S]][0, %[[D]], 0, 0] [3, 1, %{{.*}}, 4] [1, 1, 1, 1] : tensor<3x?x4xf32> into tensor<3x?x?x4xf32>
// CHECK: scf.yield {{.*}}, %[[SEQ]], %[[ROW]] :
// CHECK: scf.yield %[[LOOP]]#3, %{{.*}}, %{{.*}} : tensor<3x?x?x4xf32>, index, index
// CHECK: } else {
// CHECK-NOT: lstm.layer
// CHECK: %[[WHOLE:.*]] = bufferization.alloc_tensor(%{{.*}}, %{{.*}}) : tensor<3x?x?x4xf32>
// CHECK: %[[L0:.*]], %{{.*}} = lstm.layer forward
// CHECK: %[[PUT:.*]] = tensor.insert_slice %[[L0]] into %[[WHOLE]][0, 0, 0, 0] [1, %{{.*}}, %{{.*}}, 4] [1, 1, 1, 1]
// CHECK: lstm.layer forward
// CHECK: %[[L2:.*]], %{{.*}} = lstm.layer forward
// CHECK: %[[PUT2:.*]] = tensor.insert_slice %[[L2]] into %[[PUT]][2, 2, 0, 0] [1, %{{.*}}, %{{.*}}, 4] [1, 1, 1, 1]
// CHECK: scf.yield %[[PUT2]], %{{.*}}, %{{.*}} : tensor<3x?x?x4xf32>, index, index
// CHECK: %[[B:.*]] = tensor.dim %[[IF]]#0, %c2
// CHECK: %[[Y0:.*]] = tensor.extract_slice %[[IF]]#0[0, 0, 0, 0] [1, %[[IF]]#1, %[[B]], 4] [1, 1, 1, 1] : tensor<3x?x?x4xf32> to tensor<?x?x4xf32>
// CHECK: %[[Y2:.*]] = tensor.extract_slice %[[IF]]#0[2, 2, 0, 0] [1, %[[IF]]#2, %{{.*}}, 4] [1, 1, 1, 1] : tensor<3x?x?x4xf32> to tensor<?x?x4xf32>
// CHECK: return %[[Y0]], %[[Y2]]
func.func @intermediate_used(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y2, %hT2 = lstm.layer forward ins(%y1 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y0, %y2 : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// The same in reverse: the stores' steps count the diagonals from the last,
// so that a layer's steps still come in ascending order: layer 0 (step t on
// diagonal T - 1 - t) from step L - 1 = 2, layer 2 from step 0.
// CHECK-LABEL: func.func @intermediate_used_reverse
// CHECK: %[[SMALL:.*]] = arith.cmpi ule, %{{.*}}, %c16777216 : index
// CHECK: %[[IF:.*]]:3 = scf.if %[[SMALL]]
// CHECK-NOT: lstm.layer
// CHECK: %[[T:.*]] = tensor.dim %arg0, %c0{{.*}} : tensor<?x?x4xf32>
// CHECK: %[[LAST:.*]] = arith.subi %[[T]], %c1
// CHECK: %[[LOOP:.*]]:4 = scf.for %[[D:.*]] = {{.*}} iter_args({{.*}}, %[[S:.*]] = %{{.*}}) -> (tensor<3x?x4xf32>, tensor<3x?x4xf32>, tensor<?x?x4xf32>, tensor<3x?x?x4xf32>)
// CHECK: %[[END:.*]] = arith.addi %[[LAST]], %c2
// CHECK: %[[R:.*]] = arith.subi %[[END]], %[[D]] : index
// CHECK: tensor.insert_slice %{{.*}} into %[[S]][0, %[[R]], 0, 0] [3, 1, %{{.*}}, 4]
// CHECK: scf.yield %[[LOOP]]#3, %{{.*}}, %{{.*}} :
// CHECK: } else {
// CHECK: %[[ROWS:.*]] = arith.addi %c2{{.*}}, %{{.*}} : index
// CHECK: %[[WHOLE:.*]] = bufferization.alloc_tensor(%{{.*}}, %{{.*}}) : tensor<3x?x?x4xf32>
// CHECK: lstm.layer reverse
// CHECK: %[[PUT:.*]] = tensor.insert_slice %{{.*}} into %[[WHOLE]][0, 2, 0, 0]
// CHECK-COUNT-2: lstm.layer reverse
// CHECK: tensor.insert_slice %{{.*}} into %[[PUT]][2, 0, 0, 0]
// CHECK: %[[Y0:.*]] = tensor.extract_slice %[[IF]]#0[0, 2, 0, 0] [1, %[[IF]]#1, %{{.*}}, 4] [1, 1, 1, 1] : tensor<3x?x?x4xf32> to tensor<?x?x4xf32>
// CHECK: %[[Y2:.*]] = tensor.extract_slice %[[IF]]#0[2, 0, 0, 0] [1, %[[IF]]#2, %{{.*}}, 4] [1, 1, 1, 1] : tensor<3x?x?x4xf32> to tensor<?x?x4xf32>
// CHECK: return %[[Y0]], %[[Y2]]
func.func @intermediate_used_reverse(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %y0, %hT0 = lstm.layer reverse ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer reverse ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y2, %hT2 = lstm.layer reverse ins(%y1 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y0, %y2 : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// Left alone: two such layers. A step of this cell has one product on its
// input and one on its state: the layers, their input products hoisted, run
// 2T products one after the other, the wavefront 2(T + 1), and it would also
// store layer 0's output a diagonal at a time.
// CHECK-LABEL: func.func @intermediate_used_two_layers
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK: lstm.layer forward
func.func @intermediate_used_two_layers(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y0, %y1 : tensor<?x?x4xf32>, tensor<?x?x4xf32>
}

// -----

// Left alone: the cells differ in structure (tanh against relu).
// CHECK-LABEL: func.func @different_cells
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK: lstm.layer forward
func.func @different_cells(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> tensor<?x?x4xf32> {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate relu (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1 : tensor<?x?x4xf32>
}

// -----

// Left alone: layer 0's input size differs (3 against 4) and its input
// slice is used by something else than a gate product.
// CHECK-LABEL: func.func @input_used_pointwise
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK: lstm.layer forward
func.func @input_used_pointwise(%x: tensor<?x?x3xf32>, %h0: tensor<?x4xf32>,
                                %W0: tensor<4x3xf32>, %W: tensor<4x4xf32>)
    -> tensor<?x?x4xf32> {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x3xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x3xf32>, %h: tensor<?x4xf32>):
    %xs = math.tanh %xt : tensor<?x3xf32>
    %hn = lstm.gate tanh (%xs, %h : tensor<?x3xf32>, tensor<?x4xf32>)
        weights(%W0, %W : tensor<4x3xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %xs = math.tanh %xt : tensor<?x4xf32>
    %hn = lstm.gate tanh (%xs, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1 : tensor<?x?x4xf32>
}

// -----

// Left alone: layer 0's final state initialises layer 1, so it is needed
// before the last layer.
// CHECK-LABEL: func.func @final_feeds_init
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK: lstm.layer forward
func.func @final_feeds_init(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> tensor<?x?x4xf32> {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%hT0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1 : tensor<?x?x4xf32>
}

// -----

// An op between the layers that reads layer 0's final state but nothing the
// chain reads moves below the last layer, where the loop is built.
// CHECK-LABEL: func.func @read_between
// CHECK: scf.for
// CHECK: lstm.wavefront_layers = 2
// CHECK: arith.negf %{{.*}} : tensor<?x4xf32>
// CHECK-NOT: lstm.layer
func.func @read_between(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %neg = arith.negf %hT0 : tensor<?x4xf32>
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1, %neg : tensor<?x?x4xf32>, tensor<?x4xf32>
}

// -----

// With an op of memory effects between the layers nothing moves (it might
// observe the order), so layer 0's final state is read before the last
// layer and the chain stays layers.
// CHECK-LABEL: func.func @effects_between
// CHECK-NOT: scf.for
// CHECK: lstm.layer forward
// CHECK: memref.alloc
// CHECK: arith.negf
// CHECK: lstm.layer forward
func.func @effects_between(%x: tensor<?x?x4xf32>, %h0: tensor<?x4xf32>, %W: tensor<4x4xf32>)
    -> (tensor<?x?x4xf32>, tensor<?x4xf32>, memref<4xf32>) {
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  %m = memref.alloc() : memref<4xf32>
  %neg = arith.negf %hT0 : tensor<?x4xf32>
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x4xf32>) init(%h0 : tensor<?x4xf32>)
      -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x4xf32>):
    %hn = lstm.gate tanh (%xt, %h : tensor<?x4xf32>, tensor<?x4xf32>)
        weights(%W, %W : tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
    lstm.yield out(%hn : tensor<?x4xf32>) state(%hn : tensor<?x4xf32>)
  }
  return %y1, %neg, %m : tensor<?x?x4xf32>, tensor<?x4xf32>, memref<4xf32>
}
