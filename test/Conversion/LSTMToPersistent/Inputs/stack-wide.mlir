// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// lstm-opt --lstm-optimize=wavefront=false of bench/make_network.py --cell lstm
// --layers 2 --hidden 512 --input 512 (the latency configuration): layer 1's
// unit multiplies 2 x 512 inputs by 4 gate rows, 128 floats a lane.
module {
  func.func @forward(%arg0: tensor<?x?x512xf32>, %arg1: tensor<2x?x512xf32>, %arg2: tensor<2x?x512xf32>, %arg3: tensor<2048x512xf32>, %arg4: tensor<2048x512xf32>, %arg5: tensor<2048xf32>, %arg6: tensor<2048xf32>, %arg7: tensor<2048x512xf32>, %arg8: tensor<2048x512xf32>, %arg9: tensor<2048xf32>, %arg10: tensor<2048xf32>) -> (tensor<?x?x512xf32>, tensor<2x?x512xf32>, tensor<2x?x512xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %dim = tensor.dim %arg1, %c1 : tensor<2x?x512xf32>
    %extracted_slice = tensor.extract_slice %arg1[0, 0, 0] [1, %dim, 512] [1, 1, 1] : tensor<2x?x512xf32> to tensor<?x512xf32>
    %extracted_slice_0 = tensor.extract_slice %arg2[0, 0, 0] [1, %dim, 512] [1, 1, 1] : tensor<2x?x512xf32> to tensor<?x512xf32>
    %extracted_slice_1 = tensor.extract_slice %arg1[1, 0, 0] [1, %dim, 512] [1, 1, 1] : tensor<2x?x512xf32> to tensor<?x512xf32>
    %extracted_slice_2 = tensor.extract_slice %arg2[1, 0, 0] [1, %dim, 512] [1, 1, 1] : tensor<2x?x512xf32> to tensor<?x512xf32>
    %extracted_slice_3 = tensor.extract_slice %arg5[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_4 = tensor.extract_slice %arg6[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_5 = tensor.extract_slice %arg5[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_6 = tensor.extract_slice %arg6[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_7 = tensor.extract_slice %arg5[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_8 = tensor.extract_slice %arg6[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_9 = tensor.extract_slice %arg5[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_10 = tensor.extract_slice %arg6[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %collapsed = tensor.collapse_shape %arg0 [[0, 1], [2]] : tensor<?x?x512xf32> into tensor<?x512xf32>
    %0 = lstm.gate identity(%collapsed : tensor<?x512xf32>) weights(%arg3 : tensor<2048x512xf32>) -> tensor<?x2048xf32>
    %dim_11 = tensor.dim %arg0, %c0 : tensor<?x?x512xf32>
    %dim_12 = tensor.dim %arg0, %c1 : tensor<?x?x512xf32>
    %expanded = tensor.expand_shape %0 [[0, 1], [2]] output_shape [%dim_11, %dim_12, 2048] : tensor<?x2048xf32> into tensor<?x?x2048xf32>
    %outputs, %finals:2 = lstm.layer forward ins(%expanded : tensor<?x?x2048xf32>) init(%extracted_slice, %extracted_slice_0 : tensor<?x512xf32>, tensor<?x512xf32>) -> (tensor<?x?x512xf32>), (tensor<?x512xf32>, tensor<?x512xf32>) {
    ^bb0(%arg11: tensor<?x2048xf32>, %arg12: tensor<?x512xf32>, %arg13: tensor<?x512xf32>):
      %dim_30 = tensor.dim %arg11, %c0 : tensor<?x2048xf32>
      %extracted_slice_31 = tensor.extract_slice %arg11[0, 0] [%dim_30, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_32 = tensor.extract_slice %arg11[0, 512] [%dim_30, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_33 = tensor.extract_slice %arg11[0, 1024] [%dim_30, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_34 = tensor.extract_slice %arg11[0, 1536] [%dim_30, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %3 = lstm.gate identity(%arg12 : tensor<?x512xf32>) weights(%arg4 : tensor<2048x512xf32>) -> tensor<?x2048xf32>
      %dim_35 = tensor.dim %3, %c0 : tensor<?x2048xf32>
      %extracted_slice_36 = tensor.extract_slice %3[0, 0] [%dim_35, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_37 = tensor.extract_slice %3[0, 512] [%dim_35, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_38 = tensor.extract_slice %3[0, 1024] [%dim_35, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_39 = tensor.extract_slice %3[0, 1536] [%dim_35, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %4:2 = lstm.pointwise ins(%extracted_slice_31, %extracted_slice_36, %extracted_slice_3, %extracted_slice_4, %extracted_slice_32, %extracted_slice_37, %extracted_slice_5, %extracted_slice_6, %extracted_slice_33, %extracted_slice_38, %extracted_slice_7, %extracted_slice_8, %arg13, %extracted_slice_34, %extracted_slice_39, %extracted_slice_9, %extracted_slice_10 : tensor<?x512xf32>, tensor<?x512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<?x512xf32>, tensor<?x512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<?x512xf32>, tensor<?x512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<?x512xf32>, tensor<?x512xf32>, tensor<?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>, tensor<?x512xf32> {
      ^bb0(%arg14: f32, %arg15: f32, %arg16: f32, %arg17: f32, %arg18: f32, %arg19: f32, %arg20: f32, %arg21: f32, %arg22: f32, %arg23: f32, %arg24: f32, %arg25: f32, %arg26: f32, %arg27: f32, %arg28: f32, %arg29: f32, %arg30: f32):
        %cst = arith.constant 1.000000e+00 : f32
        %5 = arith.addf %arg14, %arg15 : f32
        %6 = arith.addf %5, %arg16 : f32
        %7 = arith.addf %6, %arg17 : f32
        %8 = arith.negf %7 : f32
        %9 = math.exp %8 : f32
        %10 = arith.addf %9, %cst : f32
        %11 = arith.divf %cst, %10 : f32
        %12 = arith.addf %arg18, %arg19 : f32
        %13 = arith.addf %12, %arg20 : f32
        %14 = arith.addf %13, %arg21 : f32
        %15 = arith.negf %14 : f32
        %16 = math.exp %15 : f32
        %17 = arith.addf %16, %cst : f32
        %18 = arith.divf %cst, %17 : f32
        %19 = arith.addf %arg22, %arg23 : f32
        %20 = arith.addf %19, %arg24 : f32
        %21 = arith.addf %20, %arg25 : f32
        %22 = math.tanh %21 : f32
        %23 = arith.mulf %11, %22 : f32
        %24 = arith.mulf %18, %arg26 : f32
        %25 = arith.addf %24, %23 : f32
        %26 = arith.addf %arg27, %arg28 : f32
        %27 = arith.addf %26, %arg29 : f32
        %28 = arith.addf %27, %arg30 : f32
        %29 = arith.negf %28 : f32
        %30 = math.exp %29 : f32
        %31 = arith.addf %30, %cst : f32
        %32 = arith.divf %cst, %31 : f32
        %33 = math.tanh %25 : f32
        %34 = arith.mulf %32, %33 : f32
        lstm.pointwise_yield %25, %34 : f32, f32
      }
      lstm.yield out(%4#1 : tensor<?x512xf32>) state(%4#1, %4#0 : tensor<?x512xf32>, tensor<?x512xf32>)
    }
    %extracted_slice_13 = tensor.extract_slice %arg9[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_14 = tensor.extract_slice %arg10[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_15 = tensor.extract_slice %arg9[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_16 = tensor.extract_slice %arg10[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_17 = tensor.extract_slice %arg9[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_18 = tensor.extract_slice %arg10[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_19 = tensor.extract_slice %arg9[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %extracted_slice_20 = tensor.extract_slice %arg10[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
    %collapsed_21 = tensor.collapse_shape %outputs [[0, 1], [2]] : tensor<?x?x512xf32> into tensor<?x512xf32>
    %1 = lstm.gate identity(%collapsed_21 : tensor<?x512xf32>) weights(%arg7 : tensor<2048x512xf32>) -> tensor<?x2048xf32>
    %dim_22 = tensor.dim %outputs, %c0 : tensor<?x?x512xf32>
    %dim_23 = tensor.dim %outputs, %c1 : tensor<?x?x512xf32>
    %expanded_24 = tensor.expand_shape %1 [[0, 1], [2]] output_shape [%dim_22, %dim_23, 2048] : tensor<?x2048xf32> into tensor<?x?x2048xf32>
    %outputs_25, %finals_26:2 = lstm.layer forward ins(%expanded_24 : tensor<?x?x2048xf32>) init(%extracted_slice_1, %extracted_slice_2 : tensor<?x512xf32>, tensor<?x512xf32>) -> (tensor<?x?x512xf32>), (tensor<?x512xf32>, tensor<?x512xf32>) {
    ^bb0(%arg11: tensor<?x2048xf32>, %arg12: tensor<?x512xf32>, %arg13: tensor<?x512xf32>):
      %dim_30 = tensor.dim %arg11, %c0 : tensor<?x2048xf32>
      %extracted_slice_31 = tensor.extract_slice %arg11[0, 0] [%dim_30, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_32 = tensor.extract_slice %arg11[0, 512] [%dim_30, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_33 = tensor.extract_slice %arg11[0, 1024] [%dim_30, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_34 = tensor.extract_slice %arg11[0, 1536] [%dim_30, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %3 = lstm.gate identity(%arg12 : tensor<?x512xf32>) weights(%arg8 : tensor<2048x512xf32>) -> tensor<?x2048xf32>
      %dim_35 = tensor.dim %3, %c0 : tensor<?x2048xf32>
      %extracted_slice_36 = tensor.extract_slice %3[0, 0] [%dim_35, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_37 = tensor.extract_slice %3[0, 512] [%dim_35, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_38 = tensor.extract_slice %3[0, 1024] [%dim_35, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %extracted_slice_39 = tensor.extract_slice %3[0, 1536] [%dim_35, 512] [1, 1] : tensor<?x2048xf32> to tensor<?x512xf32>
      %4:2 = lstm.pointwise ins(%extracted_slice_31, %extracted_slice_36, %extracted_slice_13, %extracted_slice_14, %extracted_slice_32, %extracted_slice_37, %extracted_slice_15, %extracted_slice_16, %extracted_slice_33, %extracted_slice_38, %extracted_slice_17, %extracted_slice_18, %arg13, %extracted_slice_34, %extracted_slice_39, %extracted_slice_19, %extracted_slice_20 : tensor<?x512xf32>, tensor<?x512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<?x512xf32>, tensor<?x512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<?x512xf32>, tensor<?x512xf32>, tensor<512xf32>, tensor<512xf32>, tensor<?x512xf32>, tensor<?x512xf32>, tensor<?x512xf32>, tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>, tensor<?x512xf32> {
      ^bb0(%arg14: f32, %arg15: f32, %arg16: f32, %arg17: f32, %arg18: f32, %arg19: f32, %arg20: f32, %arg21: f32, %arg22: f32, %arg23: f32, %arg24: f32, %arg25: f32, %arg26: f32, %arg27: f32, %arg28: f32, %arg29: f32, %arg30: f32):
        %cst = arith.constant 1.000000e+00 : f32
        %5 = arith.addf %arg14, %arg15 : f32
        %6 = arith.addf %5, %arg16 : f32
        %7 = arith.addf %6, %arg17 : f32
        %8 = arith.negf %7 : f32
        %9 = math.exp %8 : f32
        %10 = arith.addf %9, %cst : f32
        %11 = arith.divf %cst, %10 : f32
        %12 = arith.addf %arg18, %arg19 : f32
        %13 = arith.addf %12, %arg20 : f32
        %14 = arith.addf %13, %arg21 : f32
        %15 = arith.negf %14 : f32
        %16 = math.exp %15 : f32
        %17 = arith.addf %16, %cst : f32
        %18 = arith.divf %cst, %17 : f32
        %19 = arith.addf %arg22, %arg23 : f32
        %20 = arith.addf %19, %arg24 : f32
        %21 = arith.addf %20, %arg25 : f32
        %22 = math.tanh %21 : f32
        %23 = arith.mulf %11, %22 : f32
        %24 = arith.mulf %18, %arg26 : f32
        %25 = arith.addf %24, %23 : f32
        %26 = arith.addf %arg27, %arg28 : f32
        %27 = arith.addf %26, %arg29 : f32
        %28 = arith.addf %27, %arg30 : f32
        %29 = arith.negf %28 : f32
        %30 = math.exp %29 : f32
        %31 = arith.addf %30, %cst : f32
        %32 = arith.divf %cst, %31 : f32
        %33 = math.tanh %25 : f32
        %34 = arith.mulf %32, %33 : f32
        lstm.pointwise_yield %25, %34 : f32, f32
      }
      lstm.yield out(%4#1 : tensor<?x512xf32>) state(%4#1, %4#0 : tensor<?x512xf32>, tensor<?x512xf32>)
    }
    %2 = tensor.empty(%dim) : tensor<2x?x512xf32>
    %inserted_slice = tensor.insert_slice %finals#0 into %2[0, 0, 0] [1, %dim, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<2x?x512xf32>
    %inserted_slice_27 = tensor.insert_slice %finals_26#0 into %inserted_slice[1, 0, 0] [1, %dim, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<2x?x512xf32>
    %inserted_slice_28 = tensor.insert_slice %finals#1 into %2[0, 0, 0] [1, %dim, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<2x?x512xf32>
    %inserted_slice_29 = tensor.insert_slice %finals_26#1 into %inserted_slice_28[1, 0, 0] [1, %dim, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<2x?x512xf32>
    return %outputs_25, %inserted_slice_27, %inserted_slice_29 : tensor<?x?x512xf32>, tensor<2x?x512xf32>, tensor<2x?x512xf32>
  }
}

