// RUN: lstm-opt %s --lstm-differentiate -split-input-file -verify-diagnostics

// An op without a derivative on the path from the arguments to a result is
// named.
func.func @no_rule(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    // expected-error @+1 {{'math.cbrt' op has no derivative (lstm-differentiate)}}
    %c = math.cbrt %s : tensor<?x8xf32>
    lstm.yield state(%c : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}

// -----

// Outside the layers too.
func.func @no_rule_outside(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    lstm.yield state(%s : tensor<?x8xf32>)
  }
  // expected-error @+1 {{'math.floor' op has no derivative (lstm-differentiate)}}
  %f = math.floor %hT : tensor<?x8xf32>
  return %f : tensor<?x8xf32>
}

// -----

// A weight the cell computes from the step's state.
func.func @weight_in_cell(%x: tensor<?x8x8xf32>, %h0: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x8x8xf32>) init(%h0 : tensor<8x8xf32>)
      -> (), (tensor<8x8xf32>) {
  ^bb0(%xt: tensor<8x8xf32>, %h: tensor<8x8xf32>):
    // expected-error @+1 {{a gate weight that the cell computes at every step is not differentiated}}
    %w = math.tanh %h : tensor<8x8xf32>
    %g = lstm.gate tanh (%xt : tensor<8x8xf32>) weights(%w : tensor<8x8xf32>) -> tensor<8x8xf32>
    lstm.yield state(%g : tensor<8x8xf32>)
  }
  return %hT : tensor<8x8xf32>
}

// -----

// The names of the gradient functions are taken.
// expected-error @+1 {{lstm-differentiate would add @f_grad, which the module already has}}
func.func @f(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    lstm.yield state(%s : tensor<?x8xf32>)
  }
  return %hT : tensor<?x8xf32>
}
func.func @f_grad() {
  return
}

// -----

// A batched gate (from lstm-wavefront) is not differentiated.
func.func @batched(%x: tensor<?x?x8xf32>, %h0: tensor<?x8xf32>, %a: tensor<2x?x8xf32>,
                   %w: tensor<2x8x8xf32>) -> (tensor<?x8xf32>, tensor<2x?x8xf32>) {
  %hT = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0 : tensor<?x8xf32>)
      -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %s = arith.addf %xt, %h : tensor<?x8xf32>
    lstm.yield state(%s : tensor<?x8xf32>)
  }
  // expected-error @+1 {{is a batched gate, which lstm-differentiate does not differentiate: run lstm-differentiate before lstm-wavefront}}
  %g = lstm.gate tanh (%a : tensor<2x?x8xf32>) weights(%w : tensor<2x8x8xf32>) -> tensor<2x?x8xf32>
  return %hT, %g : tensor<?x8xf32>, tensor<2x?x8xf32>
}

// -----

// A gate bias the cell computes from the step's state (a row of it).
func.func @bias_in_cell(%x: tensor<?x8x8xf32>, %h0: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %hT = lstm.layer forward ins(%x : tensor<?x8x8xf32>) init(%h0 : tensor<8x8xf32>)
      -> (), (tensor<8x8xf32>) {
  ^bb0(%xt: tensor<8x8xf32>, %h: tensor<8x8xf32>):
    // expected-error @+1 {{lstm-differentiate: a bias or peephole weight that the cell computes at every step is not differentiated (define it outside the layer)}}
    %bt = tensor.extract_slice %h[0, 0] [1, 8] [1, 1] : tensor<8x8xf32> to tensor<8xf32>
    %g = lstm.gate tanh (%xt : tensor<8x8xf32>) weights(%w : tensor<8x8xf32>) bias(%bt : tensor<8xf32>) -> tensor<8x8xf32>
    lstm.yield state(%g : tensor<8x8xf32>)
  }
  return %hT : tensor<8x8xf32>
}
