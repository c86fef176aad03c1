// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lstm-opt --lstm-optimize=persistent=true of the stack of persistent-stack.mlir
// with an index computed between its layers (the sequence length) and
// returned: the versioned stack yields it from both branches.
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @index_between_layers(%arg0: tensor<?x?x4xf32>, %arg1: tensor<?x4xf32>, %arg2: tensor<?x4xf32>, %arg3: tensor<4x4xf32>, %arg4: tensor<4x4xf32>, %arg5: tensor<4x4xf32>, %arg6: tensor<4x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, index) {
    %cst = arith.constant 0.000000e+00 : f32
    %c0 = arith.constant 0 : index
    %c524288 = arith.constant 524288 : index
    %c1 = arith.constant 1 : index
    %dim = tensor.dim %arg0, %c1 : tensor<?x?x4xf32>
    %0 = arith.cmpi ule, %dim, %c524288 : index
    %1:4 = scf.if %0 -> (tensor<?x4xf32>, index, tensor<?x?x4xf32>, tensor<?x4xf32>) {
      %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
      %2 = lstm.gate identity(%collapsed : tensor<?x4xf32>) weights(%arg3 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %dim_0 = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
      %expanded = tensor.expand_shape %2 [[0, 1], [2]] output_shape [%dim_0, %dim, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
      %outputs, %finals = lstm.layer forward ins(%expanded : tensor<?x?x4xf32>) init(%arg1 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
      ^bb0(%arg7: tensor<?x4xf32>, %arg8: tensor<?x4xf32>):
        %4 = lstm.gate identity(%arg8 : tensor<?x4xf32>) weights(%arg4 : tensor<4x4xf32>) -> tensor<?x4xf32>
        %5 = lstm.pointwise ins(%4, %arg7 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
        ^bb0(%arg9: f32, %arg10: f32):
          %6 = arith.addf %arg9, %arg10 : f32
          %7 = math.tanh %6 : f32
          lstm.pointwise_yield %7 : f32
        }
        lstm.yield out(%5 : tensor<?x4xf32>) state(%5 : tensor<?x4xf32>)
      }
      %collapsed_1 = tensor.collapse_shape %outputs [[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
      %3 = lstm.gate identity(%collapsed_1 : tensor<?x4xf32>) weights(%arg5 : tensor<4x4xf32>) -> tensor<?x4xf32>
      %dim_2 = tensor.dim %outputs, %c0 : tensor<?x?x4xf32>
      %dim_3 = tensor.dim %outputs, %c1 : tensor<?x?x4xf32>
      %expanded_4 = tensor.expand_shape %3 [[0, 1], [2]] output_shape [%dim_2, %dim_3, 4] : tensor<?x4xf32> into tensor<?x?x4xf32>
      %outputs_5, %finals_6 = lstm.layer forward ins(%expanded_4 : tensor<?x?x4xf32>) init(%arg2 : tensor<?x4xf32>) -> (tensor<?x?x4xf32>), (tensor<?x4xf32>) {
      ^bb0(%arg7: tensor<?x4xf32>, %arg8: tensor<?x4xf32>):
        %4 = lstm.gate identity(%arg8 : tensor<?x4xf32>) weights(%arg6 : tensor<4x4xf32>) -> tensor<?x4xf32>
        %5 = lstm.pointwise ins(%4, %arg7 : tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
        ^bb0(%arg9: f32, %arg10: f32):
          %6 = arith.addf %arg9, %arg10 : f32
          %7 = math.tanh %6 : f32
          lstm.pointwise_yield %7 : f32
        }
        lstm.yield out(%5 : tensor<?x4xf32>) state(%5 : tensor<?x4xf32>)
      }
      scf.yield %finals, %dim_0, %outputs_5, %finals_6 : tensor<?x4xf32>, index, tensor<?x?x4xf32>, tensor<?x4xf32>
    } else {
      %dim_0 = tensor.dim %arg0, %c0 : tensor<?x?x4xf32>
      %2 = arith.subi %dim_0, %c1 : index
      %3 = tensor.empty() : tensor<2x4x4xf32>
      %inserted_slice = tensor.insert_slice %arg3 into %3[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<4x4xf32> into tensor<2x4x4xf32>
      %inserted_slice_1 = tensor.insert_slice %arg5 into %inserted_slice[1, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<4x4xf32> into tensor<2x4x4xf32>
      %inserted_slice_2 = tensor.insert_slice %arg4 into %3[0, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<4x4xf32> into tensor<2x4x4xf32>
      %inserted_slice_3 = tensor.insert_slice %arg6 into %inserted_slice_2[1, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<4x4xf32> into tensor<2x4x4xf32>
      %dim_4 = tensor.dim %arg1, %c0 : tensor<?x4xf32>
      %4 = arith.cmpi eq, %dim_4, %dim : index
      cf.assert %4, "lstm.layer: initial state #0 has a different batch size than the input (at idx.mlir:5:15)"
      %dim_5 = tensor.dim %arg2, %c0 : tensor<?x4xf32>
      %5 = arith.cmpi eq, %dim_5, %dim : index
      cf.assert %5, "lstm.layer: initial state #0 has a different batch size than the input (at idx.mlir:15:15)"
      %6 = arith.cmpi eq, %dim_5, %dim_4 : index
      cf.assert %6, "lstm-wavefront: initial state #0 of layer #1 differs from layer #0's in dimension 0 (at idx.mlir:5:15)"
      %7 = tensor.empty(%dim_4) : tensor<2x?x4xf32>
      %inserted_slice_6 = tensor.insert_slice %arg1 into %7[0, 0, 0] [1, %dim_4, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<2x?x4xf32>
      %inserted_slice_7 = tensor.insert_slice %arg2 into %inserted_slice_6[1, 0, 0] [1, %dim_4, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<2x?x4xf32>
      %8 = tensor.empty(%dim) : tensor<2x?x4xf32>
      %9 = linalg.fill ins(%cst : f32) outs(%8 : tensor<2x?x4xf32>) -> tensor<2x?x4xf32>
      %10 = tensor.empty(%dim_0, %dim) : tensor<?x?x4xf32>
      %11 = arith.addi %dim_0, %c1 : index
      %12 = arith.cmpi eq, %dim_0, %c0 : index
      %13 = arith.select %12, %c0, %11 : index
      %14:3 = scf.for %arg7 = %c0 to %13 step %c1 iter_args(%arg8 = %inserted_slice_7, %arg9 = %9, %arg10 = %10) -> (tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<?x?x4xf32>) {
        %15 = arith.minsi %arg7, %2 : index
        %dim_10 = tensor.dim %arg9, %c1 : tensor<2x?x4xf32>
        %extracted_slice_11 = tensor.extract_slice %arg9[0, 0, 0] [1, %dim_10, 4] [1, 1, 1] : tensor<2x?x4xf32> to tensor<1x?x4xf32>
        %extracted_slice_12 = tensor.extract_slice %arg0[%15, 0, 0] [1, %dim, 4] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x4xf32>
        %16 = tensor.empty(%dim_10) : tensor<2x?x4xf32>
        %inserted_slice_13 = tensor.insert_slice %extracted_slice_12 into %16[0, 0, 0] [1, %dim_10, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<2x?x4xf32>
        %inserted_slice_14 = tensor.insert_slice %extracted_slice_11 into %inserted_slice_13[1, 0, 0] [1, %dim_10, 4] [1, 1, 1] : tensor<1x?x4xf32> into tensor<2x?x4xf32>
        %17 = lstm.gate identity(%inserted_slice_14, %arg8 : tensor<2x?x4xf32>, tensor<2x?x4xf32>) weights(%inserted_slice_1, %inserted_slice_3 : tensor<2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<2x?x4xf32>
        %18 = math.tanh %17 : tensor<2x?x4xf32>
        %19 = arith.cmpi sge, %arg7, %c1 : index
        %20 = arith.cmpi slt, %arg7, %dim_0 : index
        %21 = arith.andi %19, %20 : i1
        %22 = scf.if %21 -> (tensor<2x?x4xf32>) {
          scf.yield %18 : tensor<2x?x4xf32>
        } else {
          %dim_19 = tensor.dim %18, %c1 : tensor<2x?x4xf32>
          %25 = tensor.empty(%dim_19) : tensor<2x?x4xf32>
          %26 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel", "parallel"]} ins(%18, %arg8 : tensor<2x?x4xf32>, tensor<2x?x4xf32>) outs(%25 : tensor<2x?x4xf32>) {
          ^bb0(%in: f32, %in_20: f32, %out: f32):
            %27 = linalg.index 0 : index
            %28 = arith.subi %arg7, %27 : index
            %29 = arith.cmpi sge, %28, %c0 : index
            %30 = arith.cmpi slt, %28, %dim_0 : index
            %31 = arith.andi %29, %30 : i1
            %32 = arith.select %31, %in, %in_20 : f32
            linalg.yield %32 : f32
          } -> tensor<2x?x4xf32>
          scf.yield %26 : tensor<2x?x4xf32>
        }
        %23 = arith.subi %arg7, %c1 : index
        %24 = arith.maxsi %23, %c0 : index
        %dim_15 = tensor.dim %18, %c1 : tensor<2x?x4xf32>
        %extracted_slice_16 = tensor.extract_slice %18[1, 0, 0] [1, %dim_15, 4] [1, 1, 1] : tensor<2x?x4xf32> to tensor<?x4xf32>
        %dim_17 = tensor.dim %extracted_slice_16, %c0 : tensor<?x4xf32>
        %inserted_slice_18 = tensor.insert_slice %extracted_slice_16 into %arg10[%24, 0, 0] [1, %dim_17, 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
        scf.yield %22, %18, %inserted_slice_18 : tensor<2x?x4xf32>, tensor<2x?x4xf32>, tensor<?x?x4xf32>
      } {lstm.wavefront_direction = "forward", lstm.wavefront_layers = 2 : i64}
      %dim_8 = tensor.dim %14#0, %c1 : tensor<2x?x4xf32>
      %extracted_slice = tensor.extract_slice %14#0[0, 0, 0] [1, %dim_8, 4] [1, 1, 1] : tensor<2x?x4xf32> to tensor<?x4xf32>
      %extracted_slice_9 = tensor.extract_slice %14#0[1, 0, 0] [1, %dim_8, 4] [1, 1, 1] : tensor<2x?x4xf32> to tensor<?x4xf32>
      scf.yield %extracted_slice, %dim_0, %14#2, %extracted_slice_9 : tensor<?x4xf32>, index, tensor<?x?x4xf32>, tensor<?x4xf32>
    } {lstm.persistent_stack}
    return %1#2, %1#0, %1#3, %1#1 : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, index
  }
}

