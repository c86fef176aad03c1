// Round trip of every op: custom form, then generic form back to custom.
// RUN: lstm-opt %s | FileCheck %s
// RUN: lstm-opt %s | lstm-opt | FileCheck %s
// RUN: lstm-opt %s --mlir-print-op-generic | lstm-opt | FileCheck %s

// CHECK-LABEL: func.func @lstm_cell
func.func @lstm_cell(%x: tensor<?x?x16xf32>, %h0: tensor<?x32xf32>,
                     %c0: tensor<?x32xf32>, %lengths: tensor<?xi32>,
                     %W: tensor<32x16xf32>, %R: tensor<32x32xf32>,
                     %b: tensor<32xf32>, %p: tensor<32xf32>)
    -> (tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>) {
  // CHECK: lstm.layer reverse ins(%{{.*}} : tensor<?x?x16xf32>) init(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<?x32xf32>) lengths(%{{.*}} : tensor<?xi32>) -> (tensor<?x?x32xf32>), (tensor<?x32xf32>, tensor<?x32xf32>) {
  // CHECK-NEXT: ^bb0(%[[XT:.*]]: tensor<?x16xf32>, %[[H:.*]]: tensor<?x32xf32>, %[[C:.*]]: tensor<?x32xf32>):
  %y, %hT, %cT = lstm.layer reverse ins(%x : tensor<?x?x16xf32>)
      init(%h0, %c0 : tensor<?x32xf32>, tensor<?x32xf32>)
      lengths(%lengths : tensor<?xi32>)
      -> (tensor<?x?x32xf32>), (tensor<?x32xf32>, tensor<?x32xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x32xf32>, %c: tensor<?x32xf32>):
    // CHECK: %[[I:.*]] = lstm.gate sigmoid(%[[XT]], %[[H]] : tensor<?x16xf32>, tensor<?x32xf32>) weights(%{{.*}}, %{{.*}} : tensor<32x16xf32>, tensor<32x32xf32>) bias(%{{.*}}, %{{.*}} : tensor<32xf32>, tensor<32xf32>) peephole(%{{.*}}, %[[C]] : tensor<32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x32xf32>)
        weights(%W, %R : tensor<32x16xf32>, tensor<32x32xf32>)
        bias(%b, %b : tensor<32xf32>, tensor<32xf32>)
        peephole(%p, %c : tensor<32xf32>, tensor<?x32xf32>) -> tensor<?x32xf32>
    // CHECK: %[[G:.*]] = lstm.gate tanh(%[[XT]] : tensor<?x16xf32>) weights(%{{.*}} : tensor<32x16xf32>) -> tensor<?x32xf32>
    %g = lstm.gate tanh (%xt : tensor<?x16xf32>) weights(%W : tensor<32x16xf32>)
        -> tensor<?x32xf32>
    // CHECK: lstm.gate relu
    %r = lstm.gate relu (%h : tensor<?x32xf32>) weights(%R : tensor<32x32xf32>)
        bias(%b : tensor<32xf32>) -> tensor<?x32xf32>
    // CHECK: lstm.gate identity
    %l = lstm.gate identity (%h : tensor<?x32xf32>) weights(%R : tensor<32x32xf32>)
        -> tensor<?x32xf32>
    // CHECK: %[[A:.*]] = lstm.gate identity(%[[H]] : tensor<?x32xf32>) weights(%{{.*}} : tensor<32x32xf32>) add(%[[G]] : tensor<?x32xf32>) -> tensor<?x32xf32>
    %a = lstm.gate identity (%h : tensor<?x32xf32>) weights(%R : tensor<32x32xf32>)
        add(%g : tensor<?x32xf32>) -> tensor<?x32xf32>
    // A gate whose only terms are addends (the form that
    // lstm-combine-gate-gemms leaves behind).
    // CHECK: %[[S:.*]] = lstm.gate sigmoid add(%[[G]], %[[A]] : tensor<?x32xf32>, tensor<?x32xf32>) bias(%{{.*}} : tensor<32xf32>) -> tensor<?x32xf32>
    %sa = lstm.gate sigmoid add(%g, %a : tensor<?x32xf32>, tensor<?x32xf32>)
        bias(%b : tensor<32xf32>) -> tensor<?x32xf32>
    // CHECK: %[[F:.*]] = lstm.one_minus %[[I]] : tensor<?x32xf32>
    %f = lstm.one_minus %i : tensor<?x32xf32>
    %ig = arith.mulf %i, %g : tensor<?x32xf32>
    %fc = arith.mulf %f, %c : tensor<?x32xf32>
    %cn = arith.addf %ig, %fc : tensor<?x32xf32>
    %rl = arith.addf %r, %l : tensor<?x32xf32>
    %s = arith.addf %rl, %sa : tensor<?x32xf32>
    %hn = arith.mulf %cn, %s : tensor<?x32xf32>
    // CHECK: lstm.yield out(%{{.*}} : tensor<?x32xf32>) state(%{{.*}}, %{{.*}} : tensor<?x32xf32>, tensor<?x32xf32>)
    lstm.yield out(%hn : tensor<?x32xf32>) state(%hn, %cn : tensor<?x32xf32>, tensor<?x32xf32>)
  }
  return %y, %hT, %cT : tensor<?x?x32xf32>, tensor<?x32xf32>, tensor<?x32xf32>
}

// A layer with two input sequences, no outputs, and static shapes.
// CHECK-LABEL: func.func @two_inputs_no_outputs
func.func @two_inputs_no_outputs(%a: tensor<5x2x3xf64>, %b: tensor<5x2x4xf64>,
                                 %h0: tensor<2x6xf64>, %Wa: tensor<6x3xf64>,
                                 %Wb: tensor<6x4xf64>) -> tensor<2x6xf64> {
  // CHECK: lstm.layer forward ins(%{{.*}}, %{{.*}} : tensor<5x2x3xf64>, tensor<5x2x4xf64>) init(%{{.*}} : tensor<2x6xf64>) -> (), (tensor<2x6xf64>)
  %hT = lstm.layer forward ins(%a, %b : tensor<5x2x3xf64>, tensor<5x2x4xf64>)
      init(%h0 : tensor<2x6xf64>) -> (), (tensor<2x6xf64>) {
  ^bb0(%at: tensor<2x3xf64>, %bt: tensor<2x4xf64>, %h: tensor<2x6xf64>):
    %hn = lstm.gate tanh (%at, %bt : tensor<2x3xf64>, tensor<2x4xf64>)
        weights(%Wa, %Wb : tensor<6x3xf64>, tensor<6x4xf64>) -> tensor<2x6xf64>
    // CHECK: lstm.yield state(%{{.*}} : tensor<2x6xf64>)
    lstm.yield state(%hn : tensor<2x6xf64>)
  }
  return %hT : tensor<2x6xf64>
}

// A fused pointwise region: [B, N] operands, an [N] bias, mixed element
// types (a comparison), two results.
// CHECK-LABEL: func.func @pointwise
func.func @pointwise(%a: tensor<?x8xf32>, %b: tensor<?x8xf32>, %bias: tensor<8xf32>)
    -> (tensor<?x8xf32>, tensor<?x8xi1>) {
  // CHECK: %[[R:.*]]:2 = lstm.pointwise ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>, tensor<?x8xi1> {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
  // CHECK-NEXT: %[[S:.*]] = arith.addf %[[A]], %[[B]] : f32
  // CHECK-NEXT: %[[T:.*]] = arith.addf %[[S]], %[[C]] : f32
  // CHECK-NEXT: %[[H:.*]] = math.tanh %[[T]] : f32
  // CHECK-NEXT: %[[P:.*]] = arith.cmpf ogt, %[[H]], %[[A]] : f32
  // CHECK-NEXT: lstm.pointwise_yield %[[H]], %[[P]] : f32, i1
  // CHECK-NEXT: }
  %r:2 = lstm.pointwise ins(%a, %b, %bias : tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf32>)
      -> tensor<?x8xf32>, tensor<?x8xi1> {
  ^bb0(%x: f32, %y: f32, %z: f32):
    %s = arith.addf %x, %y : f32
    %t = arith.addf %s, %z : f32
    %h = math.tanh %t : f32
    %p = arith.cmpf ogt, %h, %x : f32
    lstm.pointwise_yield %h, %p : f32, i1
  }
  return %r#0, %r#1 : tensor<?x8xf32>, tensor<?x8xi1>
}

// The batched cell of a wavefront: [L, B, N] operands, [L, N] biases.
// CHECK-LABEL: func.func @pointwise_layers
// CHECK: lstm.pointwise ins(%{{.*}}, %{{.*}} : tensor<3x?x8xf32>, tensor<3x8xf32>) -> tensor<3x?x8xf32>
func.func @pointwise_layers(%a: tensor<3x?x8xf32>, %bias: tensor<3x8xf32>) -> tensor<3x?x8xf32> {
  %r = lstm.pointwise ins(%a, %bias : tensor<3x?x8xf32>, tensor<3x8xf32>) -> tensor<3x?x8xf32> {
  ^bb0(%x: f32, %z: f32):
    %t = arith.addf %x, %z : f32
    lstm.pointwise_yield %t : f32
  }
  return %r : tensor<3x?x8xf32>
}

// Static and dynamic extents mix; constants live inside the region.
// CHECK-LABEL: func.func @pointwise_static
// CHECK: lstm.pointwise ins(%{{.*}}, %{{.*}} : tensor<2x8xf64>, tensor<?x8xf64>) -> tensor<2x8xf64> {
// CHECK: arith.constant 1.000000e+00 : f64
func.func @pointwise_static(%a: tensor<2x8xf64>, %b: tensor<?x8xf64>) -> tensor<2x8xf64> {
  %r = lstm.pointwise ins(%a, %b : tensor<2x8xf64>, tensor<?x8xf64>) -> tensor<2x8xf64> {
  ^bb0(%x: f64, %y: f64):
    %one = arith.constant 1.0 : f64
    %d = arith.subf %one, %x : f64
    %m = arith.mulf %d, %y : f64
    lstm.pointwise_yield %m : f64
  }
  return %r : tensor<2x8xf64>
}

// The batched gate: L = 3 gates at once, every operand with a leading 3.
// CHECK-LABEL: func.func @batched_gate
func.func @batched_gate(%x: tensor<3x?x4xf32>, %W: tensor<3x8x4xf32>,
                        %a: tensor<3x?x8xf32>, %b: tensor<3x8xf32>,
                        %p: tensor<3x8xf32>, %c: tensor<3x?x8xf32>) -> tensor<3x?x8xf32> {
  // CHECK: lstm.gate sigmoid(%{{.*}} : tensor<3x?x4xf32>) weights(%{{.*}} : tensor<3x8x4xf32>) add(%{{.*}} : tensor<3x?x8xf32>) bias(%{{.*}} : tensor<3x8xf32>) peephole(%{{.*}}, %{{.*}} : tensor<3x8xf32>, tensor<3x?x8xf32>) -> tensor<3x?x8xf32>
  %g = lstm.gate sigmoid (%x : tensor<3x?x4xf32>) weights(%W : tensor<3x8x4xf32>)
      add(%a : tensor<3x?x8xf32>) bias(%b : tensor<3x8xf32>)
      peephole(%p, %c : tensor<3x8xf32>, tensor<3x?x8xf32>) -> tensor<3x?x8xf32>
  return %g : tensor<3x?x8xf32>
}
