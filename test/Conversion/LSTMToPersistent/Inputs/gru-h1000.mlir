// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// One layer of Cho's GRU of H = 1000 (bench/make_network.py --cell cho_gru --layers 1 --hidden 1000 --input 7).
func.func @forward(%x: tensor<?x?x7xf32>, %h0: tensor<1x?x1000xf32>, %W0: tensor<3000x7xf32>, %R0: tensor<3000x1000xf32>, %bW0: tensor<3000xf32>, %bR0: tensor<3000xf32>) -> (tensor<?x?x1000xf32>, tensor<1x?x1000xf32>) {
  %c1 = arith.constant 1 : index
  %B = tensor.dim %h0, %c1 : tensor<1x?x1000xf32>
  %h0_0 = tensor.extract_slice %h0[0, 0, 0] [1, %B, 1000] [1, 1, 1] : tensor<1x?x1000xf32> to tensor<?x1000xf32>
  %Wr0 = tensor.extract_slice %W0[0, 0] [1000, 7] [1, 1] : tensor<3000x7xf32> to tensor<1000x7xf32>
  %Rr0 = tensor.extract_slice %R0[0, 0] [1000, 1000] [1, 1] : tensor<3000x1000xf32> to tensor<1000x1000xf32>
  %bWr0 = tensor.extract_slice %bW0[0] [1000] [1] : tensor<3000xf32> to tensor<1000xf32>
  %bRr0 = tensor.extract_slice %bR0[0] [1000] [1] : tensor<3000xf32> to tensor<1000xf32>
  %Wz0 = tensor.extract_slice %W0[1000, 0] [1000, 7] [1, 1] : tensor<3000x7xf32> to tensor<1000x7xf32>
  %Rz0 = tensor.extract_slice %R0[1000, 0] [1000, 1000] [1, 1] : tensor<3000x1000xf32> to tensor<1000x1000xf32>
  %bWz0 = tensor.extract_slice %bW0[1000] [1000] [1] : tensor<3000xf32> to tensor<1000xf32>
  %bRz0 = tensor.extract_slice %bR0[1000] [1000] [1] : tensor<3000xf32> to tensor<1000xf32>
  %Wn0 = tensor.extract_slice %W0[2000, 0] [1000, 7] [1, 1] : tensor<3000x7xf32> to tensor<1000x7xf32>
  %Rn0 = tensor.extract_slice %R0[2000, 0] [1000, 1000] [1, 1] : tensor<3000x1000xf32> to tensor<1000x1000xf32>
  %bWn0 = tensor.extract_slice %bW0[2000] [1000] [1] : tensor<3000xf32> to tensor<1000xf32>
  %bRn0 = tensor.extract_slice %bR0[2000] [1000] [1] : tensor<3000xf32> to tensor<1000xf32>
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x7xf32>) init(%h0_0 : tensor<?x1000xf32>) -> (tensor<?x?x1000xf32>), (tensor<?x1000xf32>) {
  ^bb0(%xt: tensor<?x7xf32>, %h: tensor<?x1000xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x7xf32>, tensor<?x1000xf32>) weights(%Wr0, %Rr0 : tensor<1000x7xf32>, tensor<1000x1000xf32>) bias(%bWr0, %bRr0 : tensor<1000xf32>, tensor<1000xf32>) -> tensor<?x1000xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x7xf32>, tensor<?x1000xf32>) weights(%Wz0, %Rz0 : tensor<1000x7xf32>, tensor<1000x1000xf32>) bias(%bWz0, %bRz0 : tensor<1000xf32>, tensor<1000xf32>) -> tensor<?x1000xf32>
    %rh = arith.mulf %r, %h : tensor<?x1000xf32>
    %n = lstm.gate tanh (%xt, %rh : tensor<?x7xf32>, tensor<?x1000xf32>) weights(%Wn0, %Rn0 : tensor<1000x7xf32>, tensor<1000x1000xf32>) bias(%bWn0, %bRn0 : tensor<1000xf32>, tensor<1000xf32>) -> tensor<?x1000xf32>
    %zc = lstm.one_minus %z : tensor<?x1000xf32>
    %a = arith.mulf %zc, %n : tensor<?x1000xf32>
    %b = arith.mulf %z, %h : tensor<?x1000xf32>
    %hn = arith.addf %a, %b : tensor<?x1000xf32>
    lstm.yield out(%hn : tensor<?x1000xf32>) state(%hn : tensor<?x1000xf32>)
  }
  %hT_empty = tensor.empty(%B) : tensor<1x?x1000xf32>
  %hT_acc0 = tensor.insert_slice %hT0 into %hT_empty[0, 0, 0] [1, %B, 1000] [1, 1, 1] : tensor<?x1000xf32> into tensor<1x?x1000xf32>
  return %y0, %hT_acc0 : tensor<?x?x1000xf32>, tensor<1x?x1000xf32>
}
