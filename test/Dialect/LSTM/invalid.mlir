// Every verifier error of the lstm dialect, each with its message.
// RUN: lstm-opt %s -split-input-file -verify-diagnostics

func.func @no_inputs(%h0: tensor<?x8xf32>) {
  // expected-error @+1 {{'lstm.layer' op needs at least one input sequence}}
  %hT = "lstm.layer"(%h0) <{direction = 0 : i32, operandSegmentSizes = array<i32: 0, 1, 0>, resultSegmentSizes = array<i32: 0, 1>}> ({
  ^bb0(%h: tensor<?x8xf32>):
    lstm.yield state(%h : tensor<?x8xf32>)
  }) : (tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @no_states(%x: tensor<?x?x4xf32>) {
  // expected-error @+1 {{'lstm.layer' op needs at least one recurrent state}}
  "lstm.layer"(%x) <{direction = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0>, resultSegmentSizes = array<i32: 0, 0>}> ({
  ^bb0(%xt: tensor<?x4xf32>):
    "lstm.yield"() <{operandSegmentSizes = array<i32: 0, 0>}> : () -> ()
  }) : (tensor<?x?x4xf32>) -> ()
  return
}

// -----

func.func @input_batch_mismatch(%a: tensor<5x2x4xf32>, %b: tensor<5x3x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{input #1 has shape 'tensor<5x3x4xf32>' whose [T, B] does not match input #0 ('tensor<5x2x4xf32>')}}
  %hT = lstm.layer forward ins(%a, %b : tensor<5x2x4xf32>, tensor<5x3x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%at: tensor<2x4xf32>, %bt: tensor<3x4xf32>, %h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @state_batch_mismatch(%x: tensor<5x2x4xf32>, %h0: tensor<3x8xf32>) {
  // expected-error @+1 {{initial state #0 of type 'tensor<3x8xf32>' must have the batch size (2) as its leading dimension}}
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<3x8xf32>) -> (), (tensor<3x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<3x8xf32>):
    lstm.yield state(%h : tensor<3x8xf32>)
  }
  return
}

// -----

func.func @lengths_mismatch(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>, %len: tensor<3xi32>) {
  // expected-error @+1 {{lengths of type 'tensor<3xi32>' must have one entry per batch row (2)}}
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) lengths(%len : tensor<3xi32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @lengths_float(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>, %len: tensor<2xf32>) {
  // expected-error @+1 {{operand #2 must be 1D tensor of 32-bit signless integer or 64-bit signless integer values, but got 'tensor<2xf32>'}}
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) lengths(%len : tensor<2xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @final_count(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{'lstm.layer' op has 1 initial states but 2 final states}}
  %a, %b = "lstm.layer"(%x, %h0) <{direction = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 0>, resultSegmentSizes = array<i32: 0, 2>}> ({
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }) : (tensor<5x2x4xf32>, tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>)
  return
}

// -----

func.func @final_type(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{final state #0 has type 'tensor<?x8xf32>' but its initial state has type 'tensor<2x8xf32>'}}
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @output_shape(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{output #0 of type 'tensor<6x2x8xf32>' must be [T, B, N] with the inputs' T and B}}
  %y, %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (tensor<6x2x8xf32>), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    lstm.yield out(%h : tensor<2x8xf32>) state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @input_rank(%x: tensor<2x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{operand #0 must be variadic of 3D tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %hT = lstm.layer forward ins(%x : tensor<2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @cell_arity(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{cell takes 1 arguments, expected 1 input slices followed by 1 states}}
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @cell_slice_type(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{cell argument #0 has type 'tensor<2x5xf32>', expected the step slice 'tensor<2x4xf32>' of input #0}}
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x5xf32>, %h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @cell_state_type(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{cell argument #1 has type 'tensor<2x8xf64>', expected the type of initial state #0 ('tensor<2x8xf32>')}}
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf64>):
    lstm.yield state(%h : tensor<2x8xf64>)
  }
  return
}

// -----

func.func @yield_output_count(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (tensor<5x2x8xf32>), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    // expected-error @+1 {{'lstm.yield' op yields 0 outputs but the layer has 1}}
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @yield_output_type(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  %y, %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (tensor<5x2x4xf32>), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    // expected-error @+1 {{'lstm.yield' op output #0 has type 'tensor<2x8xf32>', expected 'tensor<2x4xf32>' (one step of the layer's output 'tensor<5x2x4xf32>')}}
    lstm.yield out(%h : tensor<2x8xf32>) state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

func.func @yield_state_count(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    // expected-error @+1 {{'lstm.yield' op yields 2 states but the layer has 1}}
    lstm.yield state(%h, %h : tensor<2x8xf32>, tensor<2x8xf32>)
  }
  return
}

// -----

func.func @yield_state_type(%x: tensor<5x2x4xf32>, %h0: tensor<2x8xf32>) {
  %hT = lstm.layer forward ins(%x : tensor<5x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    // expected-error @+1 {{'lstm.yield' op state #0 has type 'tensor<2x4xf32>', expected the initial state's type 'tensor<2x8xf32>'}}
    lstm.yield state(%xt : tensor<2x4xf32>)
  }
  return
}

// -----

func.func @yield_outside(%h: tensor<2x8xf32>) {
  // expected-error @+1 {{'lstm.yield' op expects parent op 'lstm.layer'}}
  lstm.yield state(%h : tensor<2x8xf32>)
}

// -----

func.func @gate_no_products(%b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op needs at least one (input, weight) pair, addend or peephole}}
  %g = "lstm.gate"(%b) <{activation = 0 : i32, operandSegmentSizes = array<i32: 0, 0, 0, 1, 0, 0>}> : (tensor<8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_addend_shape(%x: tensor<2x4xf32>, %W: tensor<8x4xf32>, %a: tensor<2x7xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op addend #0 of type 'tensor<2x7xf32>' must have the result's shape 'tensor<2x8xf32>'}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xf32>) weights(%W : tensor<8x4xf32>) add(%a : tensor<2x7xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_pair_count(%x: tensor<2x4xf32>, %W: tensor<8x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op has 2 inputs but 1 weights}}
  %g = "lstm.gate"(%x, %x, %W) <{activation = 0 : i32, operandSegmentSizes = array<i32: 2, 1, 0, 0, 0, 0>}> : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<8x4xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_half_peephole(%x: tensor<2x4xf32>, %W: tensor<8x4xf32>, %p: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op needs both a peephole weight and the state it reads}}
  %g = "lstm.gate"(%x, %W, %p) <{activation = 0 : i32, operandSegmentSizes = array<i32: 1, 1, 0, 0, 1, 0>}> : (tensor<2x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_element_type(%x: tensor<2x4xf32>, %W: tensor<8x4xf64>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op operand of type 'tensor<8x4xf64>' does not have the result's element type 'f32'}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xf32>) weights(%W : tensor<8x4xf64>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_integer(%x: tensor<2x4xi32>, %W: tensor<8x4xi32>) -> tensor<2x8xi32> {
  // expected-error @+1 {{operand #0 must be variadic of 2D/3D tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xi32>) weights(%W : tensor<8x4xi32>) -> tensor<2x8xi32>
  return %g : tensor<2x8xi32>
}

// -----

func.func @gate_batch(%x: tensor<3x4xf32>, %W: tensor<8x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op input #0 of type 'tensor<3x4xf32>' does not have the result's batch size 2}}
  %g = lstm.gate sigmoid (%x : tensor<3x4xf32>) weights(%W : tensor<8x4xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_weight_rows(%x: tensor<2x4xf32>, %W: tensor<9x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op weight #0 of type 'tensor<9x4xf32>' must have 8 rows (the result's hidden size)}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xf32>) weights(%W : tensor<9x4xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_weight_columns(%x: tensor<2x4xf32>, %h: tensor<?x8xf32>, %W: tensor<8x4xf32>, %R: tensor<8x6xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'lstm.gate' op weight #1 of type 'tensor<8x6xf32>' must have 8 columns to multiply input #1 of type 'tensor<?x8xf32>'}}
  %g = lstm.gate tanh (%x, %h : tensor<2x4xf32>, tensor<?x8xf32>) weights(%W, %R : tensor<8x4xf32>, tensor<8x6xf32>) -> tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}

// -----

func.func @gate_bias(%x: tensor<2x4xf32>, %W: tensor<8x4xf32>, %b: tensor<7xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op bias #0 of type 'tensor<7xf32>' must have 8 elements}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xf32>) weights(%W : tensor<8x4xf32>) bias(%b : tensor<7xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_peephole_weight(%x: tensor<2x4xf32>, %W: tensor<8x4xf32>, %p: tensor<4xf32>, %c: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op peephole weight of type 'tensor<4xf32>' must have 8 elements}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xf32>) weights(%W : tensor<8x4xf32>) peephole(%p, %c : tensor<4xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_peephole_state(%x: tensor<2x4xf32>, %W: tensor<8x4xf32>, %p: tensor<8xf32>, %c: tensor<2x7xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op peephole state of type 'tensor<2x7xf32>' must have the result's shape 'tensor<2x8xf32>'}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xf32>) weights(%W : tensor<8x4xf32>) peephole(%p, %c : tensor<8xf32>, tensor<2x7xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @gate_unknown_activation(%x: tensor<2x4xf32>, %W: tensor<8x4xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'activation' [sigmoid, tanh, relu, identity]}}
  %g = lstm.gate softsign (%x : tensor<2x4xf32>) weights(%W : tensor<8x4xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @one_minus_types(%x: tensor<2x4xf32>) -> tensor<2x4xf64> {
  // expected-error @+1 {{'lstm.one_minus' op requires the same type for all operands and results}}
  %y = "lstm.one_minus"(%x) : (tensor<2x4xf32>) -> tensor<2x4xf64>
  return %y : tensor<2x4xf64>
}

// -----

func.func @pointwise_no_result(%a: tensor<2x8xf32>) {
  // expected-error @+1 {{'lstm.pointwise' op needs at least one result}}
  "lstm.pointwise"(%a) ({
  ^bb0(%x: f32):
    "lstm.pointwise_yield"() : () -> ()
  }) : (tensor<2x8xf32>) -> ()
  return
}

// -----

func.func @pointwise_batch_mismatch(%a: tensor<2x8xf32>, %b: tensor<3x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.pointwise' op operand #1 of type 'tensor<3x8xf32>' does not match the common shape [2, 8]}}
  %r = lstm.pointwise ins(%a, %b : tensor<2x8xf32>, tensor<3x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32, %y: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_result_mismatch(%a: tensor<?x8xf32>) -> tensor<?x4xf32> {
  // expected-error @+1 {{'lstm.pointwise' op result #0 of type 'tensor<?x4xf32>' does not match the common shape [?, 8]}}
  %r = lstm.pointwise ins(%a : tensor<?x8xf32>) -> tensor<?x4xf32> {
  ^bb0(%x: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<?x4xf32>
}

// -----

func.func @pointwise_bias_mismatch(%a: tensor<?x8xf32>, %b: tensor<4xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'lstm.pointwise' op operand #1 of type 'tensor<4xf32>' must have the common shape [?, 8] without its batch extent}}
  %r = lstm.pointwise ins(%a, %b : tensor<?x8xf32>, tensor<4xf32>) -> tensor<?x8xf32> {
  ^bb0(%x: f32, %y: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<?x8xf32>
}

// -----

func.func @pointwise_only_vectors(%b: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.pointwise' op needs at least one operand of the results' rank (the batch extent comes from it)}}
  %r = lstm.pointwise ins(%b : tensor<8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_rank3_into_rank2(%a: tensor<2x2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.pointwise' op operand #0 of type 'tensor<2x2x8xf32>' must have rank 2 or 1 (the results' rank 2, without the batch extent)}}
  %r = lstm.pointwise ins(%a : tensor<2x2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_rank4(%a: tensor<2x2x2x8xf32>) -> tensor<2x2x2x8xf32> {
  // expected-error @+1 {{operand #0 must be variadic of 1D/2D/3D tensor of any type values, but got 'tensor<2x2x2x8xf32>'}}
  %r = lstm.pointwise ins(%a : tensor<2x2x2x8xf32>) -> tensor<2x2x2x8xf32> {
  ^bb0(%x: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<2x2x2x8xf32>
}

// -----

// The batched cell of a wavefront: [L, B, N] with per-layer [L, N] biases.
func.func @pointwise_layers_mismatch(%a: tensor<3x?x8xf32>, %b: tensor<2x8xf32>) -> tensor<3x?x8xf32> {
  // expected-error @+1 {{'lstm.pointwise' op operand #1 of type 'tensor<2x8xf32>' must have the common shape [3, ?, 8] without its batch extent}}
  %r = lstm.pointwise ins(%a, %b : tensor<3x?x8xf32>, tensor<2x8xf32>) -> tensor<3x?x8xf32> {
  ^bb0(%x: f32, %y: f32):
    %s = arith.addf %x, %y : f32
    lstm.pointwise_yield %s : f32
  }
  return %r : tensor<3x?x8xf32>
}

// -----

func.func @pointwise_rank3_result_mismatch(%a: tensor<3x?x8xf32>) -> tensor<3x?x4xf32> {
  // expected-error @+1 {{'lstm.pointwise' op result #0 of type 'tensor<3x?x4xf32>' does not match the common shape [3, ?, 8]}}
  %r = lstm.pointwise ins(%a : tensor<3x?x8xf32>) -> tensor<3x?x4xf32> {
  ^bb0(%x: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<3x?x4xf32>
}

// -----

func.func @pointwise_arity(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.pointwise' op region takes 2 arguments, expected one per operand (1)}}
  %r = lstm.pointwise ins(%a : tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32, %y: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_arg_type(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.pointwise' op region argument #0 has type 'f64', expected 'f32' (the element type of operand #0)}}
  %r = lstm.pointwise ins(%a : tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f64):
    %y = arith.truncf %x : f64 to f32
    lstm.pointwise_yield %y : f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_yield_count(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = lstm.pointwise ins(%a : tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{'lstm.pointwise_yield' op yields 2 values but the op has 1 results}}
    lstm.pointwise_yield %x, %x : f32, f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_yield_type(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = lstm.pointwise ins(%a : tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32):
    %y = arith.extf %x : f32 to f64
    // expected-error @+1 {{'lstm.pointwise_yield' op value #0 has type 'f64', expected 'f32' (the element type of result #0)}}
    lstm.pointwise_yield %y : f64
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_tensor_in_region(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = lstm.pointwise ins(%a : tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{'tensor.splat' op computes on 'tensor<4xf32>' in an lstm.pointwise region, which takes only scalars}}
    %t = tensor.splat %x : tensor<4xf32>
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_side_effect(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = lstm.pointwise ins(%a : tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{'memref.alloca' op is not allowed in an lstm.pointwise region: only side-effect-free scalar ops are}}
    %m = memref.alloca() : memref<4xf32>
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_captures(%a: tensor<2x8xf32>, %s: f32) -> tensor<2x8xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %r = lstm.pointwise ins(%a : tensor<2x8xf32>) -> tensor<2x8xf32> {
  ^bb0(%x: f32):
    // expected-error @+1 {{using value defined outside the region}}
    %y = arith.addf %x, %s : f32
    lstm.pointwise_yield %y : f32
  }
  return %r : tensor<2x8xf32>
}

// -----

func.func @pointwise_yield_outside(%a: f32) {
  // expected-error @+1 {{'lstm.pointwise_yield' op expects parent op 'lstm.pointwise'}}
  lstm.pointwise_yield %a : f32
  return
}

// -----

func.func @gate_integer(%x: tensor<2x4xi32>, %W: tensor<8x4xi32>) -> tensor<2x8xi32> {
  // expected-error @+1 {{operand #0 must be variadic of 2D/3D tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xi32>) weights(%W : tensor<8x4xi32>) -> tensor<2x8xi32>
  return %g : tensor<2x8xi32>
}

// -----

func.func @batched_gate_unbatched_weight(%x: tensor<3x2x4xf32>, %W: tensor<8x4xf32>) -> tensor<3x2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op operand of type 'tensor<8x4xf32>' must have rank 3 like the batched result 'tensor<3x2x8xf32>'}}
  %g = lstm.gate sigmoid (%x : tensor<3x2x4xf32>) weights(%W : tensor<8x4xf32>) -> tensor<3x2x8xf32>
  return %g : tensor<3x2x8xf32>
}

// -----

func.func @unbatched_gate_batched_bias(%x: tensor<2x4xf32>, %W: tensor<8x4xf32>, %b: tensor<3x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op operand of type 'tensor<3x8xf32>' must have rank 1 like the unbatched result 'tensor<2x8xf32>'}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xf32>) weights(%W : tensor<8x4xf32>) bias(%b : tensor<3x8xf32>) -> tensor<2x8xf32>
  return %g : tensor<2x8xf32>
}

// -----

func.func @batched_gate_groups(%x: tensor<3x2x4xf32>, %W: tensor<2x8x4xf32>) -> tensor<3x2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op operand of type 'tensor<2x8x4xf32>' must have 3 groups (the result's leading extent)}}
  %g = lstm.gate sigmoid (%x : tensor<3x2x4xf32>) weights(%W : tensor<2x8x4xf32>) -> tensor<3x2x8xf32>
  return %g : tensor<3x2x8xf32>
}

// -----

func.func @batched_gate_columns(%x: tensor<3x2x4xf32>, %W: tensor<3x8x5xf32>) -> tensor<3x2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op weight #0 of type 'tensor<3x8x5xf32>' must have 4 columns to multiply input #0 of type 'tensor<3x2x4xf32>'}}
  %g = lstm.gate sigmoid (%x : tensor<3x2x4xf32>) weights(%W : tensor<3x8x5xf32>) -> tensor<3x2x8xf32>
  return %g : tensor<3x2x8xf32>
}

// -----

func.func @gate_rank4(%x: tensor<1x3x2x4xf32>, %W: tensor<1x3x8x4xf32>) -> tensor<1x3x2x8xf32> {
  // expected-error @+1 {{'lstm.gate' op operand #0 must be variadic of}}
  %g = lstm.gate sigmoid (%x : tensor<1x3x2x4xf32>) weights(%W : tensor<1x3x8x4xf32>) -> tensor<1x3x2x8xf32>
  return %g : tensor<1x3x2x8xf32>
}

// -----

// Zero features: only the sequence length, the batch and the group extent
// may be 0 (issue 11: the passes sliced such extents, which upstream's
// verifiers reject).
func.func @layer_input_without_features(%x: tensor<?x?x0xf32>, %h0: tensor<?x8xf32>) {
  // expected-error @+1 {{'lstm.layer' op input #0 of type 'tensor<?x?x0xf32>' has no features: its extent 2 is 0 (only the sequence length, the batch and the group extent may be 0)}}
  %hT = lstm.layer forward ins(%x : tensor<?x?x0xf32>) init(%h0 : tensor<?x8xf32>) -> (), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x0xf32>, %h: tensor<?x8xf32>):
    lstm.yield state(%h : tensor<?x8xf32>)
  }
  return
}

// -----

func.func @layer_state_without_features(%x: tensor<?x?x4xf32>, %h0: tensor<?x0xf32>) {
  // expected-error @+1 {{'lstm.layer' op initial state #0 of type 'tensor<?x0xf32>' has no features: its extent 1 is 0}}
  %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x0xf32>) -> (), (tensor<?x0xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x0xf32>):
    lstm.yield state(%h : tensor<?x0xf32>)
  }
  return
}

// -----

func.func @layer_output_without_features(%x: tensor<?x?x4xf32>, %h0: tensor<?x8xf32>, %o: tensor<?x0xf32>) {
  // expected-error @+1 {{'lstm.layer' op output #0 of type 'tensor<?x?x0xf32>' has no features: its extent 2 is 0}}
  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x4xf32>) init(%h0 : tensor<?x8xf32>) -> (tensor<?x?x0xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x4xf32>, %h: tensor<?x8xf32>):
    lstm.yield out(%o : tensor<?x0xf32>) state(%h : tensor<?x8xf32>)
  }
  return
}

// -----

func.func @gate_weight_without_rows(%x: tensor<?x4xf32>, %W: tensor<0x4xf32>) -> tensor<?x0xf32> {
  // expected-error @+1 {{'lstm.gate' op the result of type 'tensor<?x0xf32>' has no features: its extent 1 is 0}}
  %g = lstm.gate sigmoid (%x : tensor<?x4xf32>) weights(%W : tensor<0x4xf32>) -> tensor<?x0xf32>
  return %g : tensor<?x0xf32>
}

// -----

func.func @gate_input_without_features(%x: tensor<?x0xf32>, %W: tensor<8x0xf32>) -> tensor<?x8xf32> {
  // expected-error @+1 {{'lstm.gate' op input #0 of type 'tensor<?x0xf32>' has no features: its extent 1 is 0}}
  %g = lstm.gate sigmoid (%x : tensor<?x0xf32>) weights(%W : tensor<8x0xf32>) -> tensor<?x8xf32>
  return %g : tensor<?x8xf32>
}

// -----

func.func @batched_gate_without_features(%x: tensor<3x?x4xf32>, %W: tensor<3x8x4xf32>, %b: tensor<3x0xf32>) -> tensor<3x?x8xf32> {
  // expected-error @+1 {{'lstm.gate' op bias #0 of type 'tensor<3x0xf32>' has no features: its extent 1 is 0}}
  %g = lstm.gate sigmoid (%x : tensor<3x?x4xf32>) weights(%W : tensor<3x8x4xf32>) bias(%b : tensor<3x0xf32>) -> tensor<3x?x8xf32>
  return %g : tensor<3x?x8xf32>
}

// -----

// A batch of 0 is fine (the gate computes nothing).
func.func @gate_empty_batch(%x: tensor<0x4xf32>, %W: tensor<8x4xf32>) -> tensor<0x8xf32> {
  %g = lstm.gate sigmoid (%x : tensor<0x4xf32>) weights(%W : tensor<8x4xf32>) -> tensor<0x8xf32>
  return %g : tensor<0x8xf32>
}

// -----

func.func @pointwise_without_features(%a: tensor<?x0xf32>) -> tensor<?x0xf32> {
  // expected-error @+1 {{'lstm.pointwise' op a value of the region's iteration space of type 'tensor<?x0xf32>' has no features: its extent 1 is 0}}
  %r = lstm.pointwise ins(%a : tensor<?x0xf32>) -> tensor<?x0xf32> {
  ^bb0(%x: f32):
    lstm.pointwise_yield %x : f32
  }
  return %r : tensor<?x0xf32>
}

// -----

// Sizes in bytes beyond 2^63: the lowerings compute offsets and strides in
// 64-bit integers (issue 11: a weight of 384 x (2^63 - 1) gave negative
// offsets).
func.func @gate_weight_too_large(%x: tensor<?x9223372036854775807xf32>, %W: tensor<128x9223372036854775807xf32>) -> tensor<?x128xf32> {
  // expected-error @+1 {{'lstm.gate' op operand #0 of type 'tensor<?x9223372036854775807xf32>' is larger than 2^63 bytes, more than any buffer can be}}
  %g = lstm.gate sigmoid (%x : tensor<?x9223372036854775807xf32>) weights(%W : tensor<128x9223372036854775807xf32>) -> tensor<?x128xf32>
  return %g : tensor<?x128xf32>
}

// -----

func.func @layer_sequence_too_large(%x: tensor<4611686018427387904x2x4xf32>, %h0: tensor<2x8xf32>) {
  // expected-error @+1 {{'lstm.layer' op operand #0 of type 'tensor<4611686018427387904x2x4xf32>' is larger than 2^63 bytes}}
  %hT = lstm.layer forward ins(%x : tensor<4611686018427387904x2x4xf32>) init(%h0 : tensor<2x8xf32>) -> (), (tensor<2x8xf32>) {
  ^bb0(%xt: tensor<2x4xf32>, %h: tensor<2x8xf32>):
    lstm.yield state(%h : tensor<2x8xf32>)
  }
  return
}

// -----

// Element types that the lowerings compile: f16, bf16, f32, f64 (an f8 type
// has no LLVM arithmetic: "failed to legalize operation 'math.tanh'" after
// the module verified, found by the fuzzer of test/Fuzz).
func.func @f8_gate(%x: tensor<2x4xf8E4M3FN>, %W: tensor<8x4xf8E4M3FN>) -> tensor<2x8xf8E4M3FN> {
  // expected-error @+1 {{'lstm.gate' op operand #0 must be variadic of 2D/3D tensor of 16-bit float or bfloat16 type or 32-bit float or 64-bit float values, but got 'tensor<2x4xf8E4M3FN>'}}
  %g = lstm.gate sigmoid (%x : tensor<2x4xf8E4M3FN>) weights(%W : tensor<8x4xf8E4M3FN>) -> tensor<2x8xf8E4M3FN>
  return %g : tensor<2x8xf8E4M3FN>
}

// -----

// A grid barrier synchronises the threads of a kernel: outside one there is
// no grid.
func.func @grid_barrier_on_host(%counter: memref<1xi32>, %k: index) {
  // expected-error @+1 {{'lstm.grid_barrier' op must be inside a GPU kernel (gpu.launch or gpu.func)}}
  lstm.grid_barrier %counter[%k] : memref<1xi32>
  return
}

// -----

func.func @grid_barrier_counter(%counter: memref<2xi32>, %k: index) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'lstm.grid_barrier' op counter must be memref<1xi32>, got 'memref<2xi32>'}}
    lstm.grid_barrier %counter[%k] : memref<2xi32>
    gpu.terminator
  }
  return
}

// -----

func.func @block_barrier_on_host() {
  // expected-error @+1 {{'lstm.block_barrier' op must be inside a GPU kernel (gpu.launch or gpu.func)}}
  lstm.block_barrier
  return
}

// -----

func.func @warp_barrier_on_host() {
  // expected-error @+1 {{'lstm.warp_barrier' op must be inside a GPU kernel (gpu.launch or gpu.func)}}
  lstm.warp_barrier
  return
}

// -----

func.func @warps_barrier_on_host(%id: i32) {
  // expected-error @+1 {{'lstm.warps_barrier' op must be inside a GPU kernel (gpu.launch or gpu.func)}}
  lstm.warps_barrier %id warps 2 : i32
  return
}

// -----

func.func @warps_barrier_block_id() {
  %c1 = arith.constant 1 : index
  %id = arith.constant 0 : i32
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'lstm.warps_barrier' op id must be 1 to 15 (0 is the block's barrier), got 0}}
    lstm.warps_barrier %id warps 2 : i32
    gpu.terminator
  }
  return
}

// -----

func.func @warps_barrier_warps(%id: i32) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'lstm.warps_barrier' op attribute 'warps' failed to satisfy constraint}}
    lstm.warps_barrier %id warps 33 : i32
    gpu.terminator
  }
  return
}

// -----

func.func @warp_mma_fragments(%a: i32, %c: f32) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error @+1 {{'lstm.warp_mma' op takes 4 registers of A, 2 of B and 4 accumulators, got 4, 1 and 4}}
    %d:4 = lstm.warp_mma [%a, %a, %a, %a] [%a] [%c, %c, %c, %c]
    gpu.terminator
  }
  return
}
