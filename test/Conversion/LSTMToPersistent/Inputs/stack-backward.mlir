// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The backward of two layers of 4 units, h_t = tanh(x_t W^T + h_{t-1} R^T):
// lstm-opt --lstm-combine-gate-gemms --lstm-differentiate=grad-function=false
// --lstm-optimize=wavefront=false of them, the backward function alone. The
// reverse layers run layer 1's backward, then layer 0's, whose input dy^0 is
// dG^1 · W^1 (a matmul of the collapsed dG^1, which the weight gradients of
// layer 1 also read, between the two layers).
#map = affine_map<(d0, d1, d2) -> (d0, d2)>
#map1 = affine_map<(d0, d1, d2) -> (d2, d1)>
#map2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#map3 = affine_map<(d0, d1, d2) -> (d2, d0)>
module {
  func.func @two_layers_backward(%arg0: tensor<?x?x4xf32>, %arg1: tensor<?x4xf32>, %arg2: tensor<?x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x4xf32>, %arg7: tensor<?x?x4xf32>, %arg8: tensor<?x4xf32>, %arg9: tensor<?x?x4xf32>, %arg10: tensor<?x?x4xf32>, %arg11: tensor<?x?x4xf32>, %arg12: tensor<?x?x4xf32>, %arg13: tensor<?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
    %cst = arith.constant 0.000000e+00 : f32
    %c1 = arith.constant 1 : index
    %c0 = arith.constant 0 : index
    %0 = tensor.empty() : tensor<4x4xf32>
    %transposed = linalg.transpose ins(%arg6 : tensor<4x4xf32>) outs(%0 : tensor<4x4xf32>) permutation = [1, 0] 
    %dim = tensor.dim %arg2, %c0 : tensor<?x4xf32>
    %expanded = tensor.expand_shape %arg2 [[0, 1], [2]] output_shape [1, %dim, 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
    %concat = tensor.concat dim(0) %expanded, %arg7 : (tensor<1x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
    %dim_0 = tensor.dim %arg7, %c0 : tensor<?x?x4xf32>
    %dim_1 = tensor.dim %arg7, %c1 : tensor<?x?x4xf32>
    %extracted_slice = tensor.extract_slice %concat[0, 0, 0] [%dim_0, %dim_1, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
    %outputs, %finals = lstm.layer reverse ins(%arg12, %arg11, %extracted_slice : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) init(%arg13 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg14: tensor<?x4xf32>, %arg15: tensor<?x4xf32>, %arg16: tensor<?x4xf32>, %arg17: tensor<?x4xf32>):
      %14 = lstm.pointwise ins(%arg17, %arg14, %arg15 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg18: f32, %arg19: f32, %arg20: f32):
        %cst_22 = arith.constant 1.000000e+00 : f32
        %16 = arith.addf %arg18, %arg19 : f32
        %17 = math.tanh %arg20 : f32
        %18 = arith.mulf %17, %17 : f32
        %19 = arith.subf %cst_22, %18 : f32
        %20 = arith.mulf %16, %19 : f32
        lstm.pointwise_yield %20 : f32
      }
      %15 = lstm.gate identity(%14 : tensor<?x4xf32>) weights(%transposed : tensor<4x4xf32>) -> tensor<?x4xf32>
      lstm.yield out(%14 : tensor<?x4xf32>) state(%15 : tensor<?x4xf32>)
    }
    %collapsed = tensor.collapse_shape %outputs [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %dim_2 = tensor.dim %collapsed, %c0 : tensor<?x4xf32>
    %1 = tensor.empty(%dim_2) : tensor<?x4xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<?x4xf32>) -> tensor<?x4xf32>
    %3 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed, %arg5 : tensor<?x4xf32>, tensor<4x4xf32>) outs(%2 : tensor<?x4xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %14 = arith.mulf %in, %in_22 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<?x4xf32>
    %dim_3 = tensor.dim %arg9, %c0 : tensor<?x?x4xf32>
    %dim_4 = tensor.dim %arg9, %c1 : tensor<?x?x4xf32>
    %expanded_5 = tensor.expand_shape %3 [[0, 1], [2]] output_shape [%dim_3, %dim_4, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %collapsed_6 = tensor.collapse_shape %arg9 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %4 = linalg.fill ins(%cst : f32) outs(%0 : tensor<4x4xf32>) -> tensor<4x4xf32>
    %5 = linalg.generic {indexing_maps = [#map3, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed, %collapsed_6 : tensor<?x4xf32>, tensor<?x4xf32>) outs(%4 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %14 = arith.mulf %in, %in_22 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<4x4xf32>
    %collapsed_7 = tensor.collapse_shape %extracted_slice [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %6 = linalg.generic {indexing_maps = [#map3, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed, %collapsed_7 : tensor<?x4xf32>, tensor<?x4xf32>) outs(%4 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %14 = arith.mulf %in, %in_22 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<4x4xf32>
    %transposed_8 = linalg.transpose ins(%arg4 : tensor<4x4xf32>) outs(%0 : tensor<4x4xf32>) permutation = [1, 0] 
    %dim_9 = tensor.dim %arg1, %c0 : tensor<?x4xf32>
    %expanded_10 = tensor.expand_shape %arg1 [[0, 1], [2]] output_shape [1, %dim_9, 4] : tensor<?x4xf32> into tensor<1x?x4xf32>
    %concat_11 = tensor.concat dim(0) %expanded_10, %arg9 : (tensor<1x?x4xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
    %extracted_slice_12 = tensor.extract_slice %concat_11[0, 0, 0] [%dim_3, %dim_4, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x4xf32>
    %7 = tensor.empty(%dim_9) : tensor<?x4xf32>
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<?x4xf32>) -> tensor<?x4xf32>
    %outputs_13, %finals_14 = lstm.layer reverse ins(%expanded_5, %arg10, %extracted_slice_12 : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) init(%8 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
    ^bb0(%arg14: tensor<?x4xf32>, %arg15: tensor<?x4xf32>, %arg16: tensor<?x4xf32>, %arg17: tensor<?x4xf32>):
      %14 = lstm.pointwise ins(%arg17, %arg14, %arg15 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
      ^bb0(%arg18: f32, %arg19: f32, %arg20: f32):
        %cst_22 = arith.constant 1.000000e+00 : f32
        %16 = arith.addf %arg18, %arg19 : f32
        %17 = math.tanh %arg20 : f32
        %18 = arith.mulf %17, %17 : f32
        %19 = arith.subf %cst_22, %18 : f32
        %20 = arith.mulf %16, %19 : f32
        lstm.pointwise_yield %20 : f32
      }
      %15 = lstm.gate identity(%14 : tensor<?x4xf32>) weights(%transposed_8 : tensor<4x4xf32>) -> tensor<?x4xf32>
      lstm.yield out(%14 : tensor<?x4xf32>) state(%15 : tensor<?x4xf32>)
    }
    %collapsed_15 = tensor.collapse_shape %outputs_13 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %dim_16 = tensor.dim %collapsed_15, %c0 : tensor<?x4xf32>
    %9 = tensor.empty(%dim_16) : tensor<?x4xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<?x4xf32>) -> tensor<?x4xf32>
    %11 = linalg.generic {indexing_maps = [#map, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed_15, %arg3 : tensor<?x4xf32>, tensor<4x4xf32>) outs(%10 : tensor<?x4xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %14 = arith.mulf %in, %in_22 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<?x4xf32>
    %dim_17 = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
    %dim_18 = tensor.dim %arg0, %c1 : tensor<?x?x4xf32>
    %expanded_19 = tensor.expand_shape %11 [[0, 1], [2]] output_shape [%dim_17, %dim_18, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
    %collapsed_20 = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %12 = linalg.generic {indexing_maps = [#map3, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed_15, %collapsed_20 : tensor<?x4xf32>, tensor<?x4xf32>) outs(%4 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %14 = arith.mulf %in, %in_22 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<4x4xf32>
    %collapsed_21 = tensor.collapse_shape %extracted_slice_12 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
    %13 = linalg.generic {indexing_maps = [#map3, #map1, #map2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%collapsed_15, %collapsed_21 : tensor<?x4xf32>, tensor<?x4xf32>) outs(%4 : tensor<4x4xf32>) {
    ^bb0(%in: f32, %in_22: f32, %out: f32):
      %14 = arith.mulf %in, %in_22 : f32
      %15 = arith.addf %out, %14 : f32
      linalg.yield %15 : f32
    } -> tensor<4x4xf32>
    return %expanded_19, %finals_14, %finals, %12, %13, %5, %6 : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  }
}
