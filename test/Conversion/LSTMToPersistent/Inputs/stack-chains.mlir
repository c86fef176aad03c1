// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lstm-opt --lstm-optimize=wavefront=false of chains of layers of 4 and 8
// units, each h_t = tanh(x_t W^T + h_{t-1} R^T) (an identity gate and
// math.tanh), T and B dynamic: the input projections hoisted, layer l + 1's
// a GEMM over layer l's whole output. @three_layers: a chain of three
// (the last one 8 wide); @reverse_layers: two reverse layers;
// @forward_then_reverse: no chain (the directions differ);
// @output_read_between: layer 1 starts from layer 0's final state;
// @output_in_last_phase (written by hand): layer 0's product reads a value
// of the step (h_t = tanh(R (x_t W^T + h_{t-1}))), so its step has two
// phases and ends with a block barrier, and its output is complete only
// there.
module {
  func.func @three_layers(%arg0: tensor<?x?x4xf32>, %arg1: tensor<?x4xf32>, %arg2: tensor<?x4xf32>, %arg3: tensor<?x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x4xf32>, %arg7: tensor<4x4xf32>, %arg8: tensor<8x4xf32>, %arg9: tensor<8x8xf32>, %arg10: tensor<?x8xf32>) -> (tensor<?x?x8xf32>, tensor<?x4xf32>, tensor<?x8xf32>) {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %0 = lstm.gate identity(%collapsed : tensor<?x4xf32>) weights(%arg4 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
    %dim_0 = tensor.dim %arg0, %c1 : tensor<?x?x4xf32>
    %expanded = tensor.expand_shape %0 [[0, 1], [2]] output_shape [%dim, %dim_0, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs, %finals = lstm.layer forward ins(%expanded : tensor<?x?x4xf32>) init(%arg1 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg11: tensor<?x4xf32>, %arg12: tensor<?x4xf32>):
      %3 = lstm.gate identity(%arg12 : tensor<?x4xf32>) weights(%arg5 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %4 = lstm.pointwise ins(%3, %arg11 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg13: f32, %arg14: f32):
        %5 = arith.addf %arg13, %arg14 : f32
        %6 = math.tanh %5 : f32
        lstm.pointwise_yield %6 : f32
      }
      lstm.yield out(%4 : tensor<?x4xf32>) state(%4 : tensor<?x4xf32>)
    }
    %collapsed_1 = tensor.collapse_shape %outputs [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %1 = lstm.gate identity(%collapsed_1 : tensor<?x4xf32>) weights(%arg6 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim_2 = tensor.dim %outputs, %c0 : tensor<?x?x4xf32>
    %dim_3 = tensor.dim %outputs, %c1 : tensor<?x?x4xf32>
    %expanded_4 = tensor.expand_shape %1 [[0, 1], [2]] output_shape [%dim_2, %dim_3, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs_5, %finals_6 = lstm.layer forward ins(%expanded_4 : tensor<?x?x4xf32>) init(%arg2 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg11: tensor<?x4xf32>, %arg12: tensor<?x4xf32>):
      %3 = lstm.gate identity(%arg12 : tensor<?x4xf32>) weights(%arg7 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %4 = lstm.pointwise ins(%3, %arg11 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg13: f32, %arg14: f32):
        %5 = arith.addf %arg13, %arg14 : f32
        %6 = math.tanh %5 : f32
        lstm.pointwise_yield %6 : f32
      }
      lstm.yield out(%4 : tensor<?x4xf32>) state(%4 : tensor<?x4xf32>)
    }
    %collapsed_7 = tensor.collapse_shape %outputs_5 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %2 = lstm.gate identity(%collapsed_7 : tensor<?x4xf32>) weights(%arg8 : tensor<8x4xf32>) -> tensor<?x8xf32>
    %dim_8 = tensor.dim %outputs_5, %c0 : tensor<?x?x4xf32>
    %dim_9 = tensor.dim %outputs_5, %c1 : tensor<?x?x4xf32>
    %expanded_10 = tensor.expand_shape %2 [[0, 1], [2]] output_shape [%dim_8, %dim_9, 8] : tensor<?x8xf32> into tensor<?x?x8xf32>
    %outputs_11, %finals_12 = lstm.layer forward ins(%expanded_10 : tensor<?x?x8xf32>) init(%arg10 : tensor<?x8xf32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
    ^bb0(%arg11: tensor<?x8xf32>, %arg12: tensor<?x8xf32>):
      %3 = lstm.gate identity(%arg12 : tensor<?x8xf32>) weights(%arg9 : tensor<8x8xf32>) -> tensor<?x8xf32>
      %4 = lstm.pointwise ins(%3, %arg11 : tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32> {
      ^bb0(%arg13: f32, %arg14: f32):
        %5 = arith.addf %arg13, %arg14 : f32
        %6 = math.tanh %5 : f32
        lstm.pointwise_yield %6 : f32
      }
      lstm.yield out(%4 : tensor<?x8xf32>) state(%4 : tensor<?x8xf32>)
    }
    return %outputs_11, %finals_6, %finals_12 : tensor<?x?x8xf32>, tensor<?x4xf32>, tensor<?x8xf32>
  }
  func.func @reverse_layers(%arg0: tensor<?x?x4xf32>, %arg1: tensor<?x4xf32>, %arg2: tensor<?x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %0 = lstm.gate identity(%collapsed : tensor<?x4xf32>) weights(%arg3 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
    %dim_0 = tensor.dim %arg0, %c1 : tensor<?x?x4xf32>
    %expanded = tensor.expand_shape %0 [[0, 1], [2]] output_shape [%dim, %dim_0, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs, %finals = lstm.layer reverse ins(%expanded : tensor<?x?x4xf32>) init(%arg1 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg7: tensor<?x4xf32>, %arg8: tensor<?x4xf32>):
      %2 = lstm.gate identity(%arg8 : tensor<?x4xf32>) weights(%arg4 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %3 = lstm.pointwise ins(%2, %arg7 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg9: f32, %arg10: f32):
        %4 = arith.addf %arg9, %arg10 : f32
        %5 = math.tanh %4 : f32
        lstm.pointwise_yield %5 : f32
      }
      lstm.yield out(%3 : tensor<?x4xf32>) state(%3 : tensor<?x4xf32>)
    }
    %collapsed_1 = tensor.collapse_shape %outputs [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %1 = lstm.gate identity(%collapsed_1 : tensor<?x4xf32>) weights(%arg5 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim_2 = tensor.dim %outputs, %c0 : tensor<?x?x4xf32>
    %dim_3 = tensor.dim %outputs, %c1 : tensor<?x?x4xf32>
    %expanded_4 = tensor.expand_shape %1 [[0, 1], [2]] output_shape [%dim_2, %dim_3, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs_5, %finals_6 = lstm.layer reverse ins(%expanded_4 : tensor<?x?x4xf32>) init(%arg2 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg7: tensor<?x4xf32>, %arg8: tensor<?x4xf32>):
      %2 = lstm.gate identity(%arg8 : tensor<?x4xf32>) weights(%arg6 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %3 = lstm.pointwise ins(%2, %arg7 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg9: f32, %arg10: f32):
        %4 = arith.addf %arg9, %arg10 : f32
        %5 = math.tanh %4 : f32
        lstm.pointwise_yield %5 : f32
      }
      lstm.yield out(%3 : tensor<?x4xf32>) state(%3 : tensor<?x4xf32>)
    }
    return %outputs_5, %finals_6 : tensor<?x?x4xf32>, tensor<?x4xf32>
  }
  func.func @forward_then_reverse(%arg0: tensor<?x?x4xf32>, %arg1: tensor<?x4xf32>, %arg2: tensor<?x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %0 = lstm.gate identity(%collapsed : tensor<?x4xf32>) weights(%arg3 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
    %dim_0 = tensor.dim %arg0, %c1 : tensor<?x?x4xf32>
    %expanded = tensor.expand_shape %0 [[0, 1], [2]] output_shape [%dim, %dim_0, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs, %finals = lstm.layer forward ins(%expanded : tensor<?x?x4xf32>) init(%arg1 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg7: tensor<?x4xf32>, %arg8: tensor<?x4xf32>):
      %2 = lstm.gate identity(%arg8 : tensor<?x4xf32>) weights(%arg4 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %3 = lstm.pointwise ins(%2, %arg7 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg9: f32, %arg10: f32):
        %4 = arith.addf %arg9, %arg10 : f32
        %5 = math.tanh %4 : f32
        lstm.pointwise_yield %5 : f32
      }
      lstm.yield out(%3 : tensor<?x4xf32>) state(%3 : tensor<?x4xf32>)
    }
    %collapsed_1 = tensor.collapse_shape %outputs [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %1 = lstm.gate identity(%collapsed_1 : tensor<?x4xf32>) weights(%arg5 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim_2 = tensor.dim %outputs, %c0 : tensor<?x?x4xf32>
    %dim_3 = tensor.dim %outputs, %c1 : tensor<?x?x4xf32>
    %expanded_4 = tensor.expand_shape %1 [[0, 1], [2]] output_shape [%dim_2, %dim_3, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs_5, %finals_6 = lstm.layer reverse ins(%expanded_4 : tensor<?x?x4xf32>) init(%arg2 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg7: tensor<?x4xf32>, %arg8: tensor<?x4xf32>):
      %2 = lstm.gate identity(%arg8 : tensor<?x4xf32>) weights(%arg6 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %3 = lstm.pointwise ins(%2, %arg7 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg9: f32, %arg10: f32):
        %4 = arith.addf %arg9, %arg10 : f32
        %5 = math.tanh %4 : f32
        lstm.pointwise_yield %5 : f32
      }
      lstm.yield out(%3 : tensor<?x4xf32>) state(%3 : tensor<?x4xf32>)
    }
    return %outputs_5, %finals_6 : tensor<?x?x4xf32>, tensor<?x4xf32>
  }
  func.func @output_read_between(%arg0: tensor<?x?x4xf32>, %arg1: tensor<?x4xf32>, %arg2: tensor<4x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %0 = lstm.gate identity(%collapsed : tensor<?x4xf32>) weights(%arg2 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
    %dim_0 = tensor.dim %arg0, %c1 : tensor<?x?x4xf32>
    %expanded = tensor.expand_shape %0 [[0, 1], [2]] output_shape [%dim, %dim_0, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs, %finals = lstm.layer forward ins(%expanded : tensor<?x?x4xf32>) init(%arg1 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg6: tensor<?x4xf32>, %arg7: tensor<?x4xf32>):
      %2 = lstm.gate identity(%arg7 : tensor<?x4xf32>) weights(%arg3 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %3 = lstm.pointwise ins(%2, %arg6 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg8: f32, %arg9: f32):
        %4 = arith.addf %arg8, %arg9 : f32
        %5 = math.tanh %4 : f32
        lstm.pointwise_yield %5 : f32
      }
      lstm.yield out(%3 : tensor<?x4xf32>) state(%3 : tensor<?x4xf32>)
    }
    %collapsed_1 = tensor.collapse_shape %outputs [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %1 = lstm.gate identity(%collapsed_1 : tensor<?x4xf32>) weights(%arg4 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim_2 = tensor.dim %outputs, %c0 : tensor<?x?x4xf32>
    %dim_3 = tensor.dim %outputs, %c1 : tensor<?x?x4xf32>
    %expanded_4 = tensor.expand_shape %1 [[0, 1], [2]] output_shape [%dim_2, %dim_3, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs_5, %finals_6 = lstm.layer forward ins(%expanded_4 : tensor<?x?x4xf32>) init(%finals : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg6: tensor<?x4xf32>, %arg7: tensor<?x4xf32>):
      %2 = lstm.gate identity(%arg7 : tensor<?x4xf32>) weights(%arg5 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %3 = lstm.pointwise ins(%2, %arg6 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg8: f32, %arg9: f32):
        %4 = arith.addf %arg8, %arg9 : f32
        %5 = math.tanh %4 : f32
        lstm.pointwise_yield %5 : f32
      }
      lstm.yield out(%3 : tensor<?x4xf32>) state(%3 : tensor<?x4xf32>)
    }
    return %outputs_5, %finals_6 : tensor<?x?x4xf32>, tensor<?x4xf32>
  }
  func.func @output_in_last_phase(%arg0: tensor<?x?x4xf32>, %arg1: tensor<?x4xf32>, %arg2: tensor<?x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>) {
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %0 = lstm.gate identity(%collapsed : tensor<?x4xf32>) weights(%arg3 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
    %dim_0 = tensor.dim %arg0, %c1 : tensor<?x?x4xf32>
    %expanded = tensor.expand_shape %0 [[0, 1], [2]] output_shape [%dim, %dim_0, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs, %finals = lstm.layer forward ins(%expanded : tensor<?x?x4xf32>) init(%arg1 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg7: tensor<?x4xf32>, %arg8: tensor<?x4xf32>):
      %2 = lstm.pointwise ins(%arg7, %arg8 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg9: f32, %arg10: f32):
        %4 = arith.addf %arg9, %arg10 : f32
        lstm.pointwise_yield %4 : f32
      }
      %3 = lstm.gate identity(%2 : tensor<?x4xf32>) weights(%arg4 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %5 = lstm.pointwise ins(%3 : tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg9: f32):
        %6 = math.tanh %arg9 : f32
        lstm.pointwise_yield %6 : f32
      }
      lstm.yield out(%5 : tensor<?x4xf32>) state(%5 : tensor<?x4xf32>)
    }
    %collapsed_1 = tensor.collapse_shape %outputs [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %1 = lstm.gate identity(%collapsed_1 : tensor<?x4xf32>) weights(%arg5 : tensor<4x4xf32>) -> tensor<?x4xf32>
    %dim_2 = tensor.dim %outputs, %c0 : tensor<?x?x4xf32>
    %dim_3 = tensor.dim %outputs, %c1 : tensor<?x?x4xf32>
    %expanded_4 = tensor.expand_shape %1 [[0, 1], [2]] output_shape [%dim_2, %dim_3, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %outputs_5, %finals_6 = lstm.layer forward ins(%expanded_4 : tensor<?x?x4xf32>) init(%arg2 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg7: tensor<?x4xf32>, %arg8: tensor<?x4xf32>):
      %2 = lstm.gate identity(%arg8 : tensor<?x4xf32>) weights(%arg6 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %3 = lstm.pointwise ins(%2, %arg7 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg9: f32, %arg10: f32):
        %4 = arith.addf %arg9, %arg10 : f32
        %5 = math.tanh %4 : f32
        lstm.pointwise_yield %5 : f32
      }
      lstm.yield out(%3 : tensor<?x4xf32>) state(%3 : tensor<?x4xf32>)
    }
    return %outputs_5, %finals_6 : tensor<?x?x4xf32>, tensor<?x4xf32>
  }
}

