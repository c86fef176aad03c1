// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// wavefront-gru3-square.mlir: a 3-layer Cho GRU whose layers all read as many
// features as they have (input = hidden = 8; bench/make_network.py --cell
// cho_gru --layers 3 --hidden 8 --input 8). Its backward cell assembles its
// gates' gradients dG from pieces of two pointwise parts (the reset gate's
// after the dependent product R_n·(r ⊙ h)).

func.func @forward(%x: tensor<?x?x8xf32>, %h0: tensor<3x?x8xf32>, %W0: tensor<24x8xf32>, %R0: tensor<24x8xf32>, %bW0: tensor<24xf32>, %bR0: tensor<24xf32>, %W1: tensor<24x8xf32>, %R1: tensor<24x8xf32>, %bW1: tensor<24xf32>, %bR1: tensor<24xf32>, %W2: tensor<24x8xf32>, %R2: tensor<24x8xf32>, %bW2: tensor<24xf32>, %bR2: tensor<24xf32>) -> (tensor<?x?x8xf32>, tensor<3x?x8xf32>) {
  %c1 = arith.constant 1 : index
  %B = tensor.dim %h0, %c1 : tensor<3x?x8xf32>
  %h0_0 = tensor.extract_slice %h0[0, 0, 0] [1, %B, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<?x8xf32>
  %h0_1 = tensor.extract_slice %h0[1, 0, 0] [1, %B, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<?x8xf32>
  %h0_2 = tensor.extract_slice %h0[2, 0, 0] [1, %B, 8] [1, 1, 1] : tensor<3x?x8xf32> to tensor<?x8xf32>
  %Wr0 = tensor.extract_slice %W0[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rr0 = tensor.extract_slice %R0[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWr0 = tensor.extract_slice %bW0[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRr0 = tensor.extract_slice %bR0[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %Wz0 = tensor.extract_slice %W0[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rz0 = tensor.extract_slice %R0[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWz0 = tensor.extract_slice %bW0[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRz0 = tensor.extract_slice %bR0[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %Wn0 = tensor.extract_slice %W0[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rn0 = tensor.extract_slice %R0[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWn0 = tensor.extract_slice %bW0[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRn0 = tensor.extract_slice %bR0[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %y0, %hT0 = lstm.layer forward ins(%x : tensor<?x?x8xf32>) init(%h0_0 : tensor<?x8xf32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wr0, %Rr0 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWr0, %bRr0 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wz0, %Rz0 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWz0, %bRz0 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %rh = arith.mulf %r, %h : tensor<?x8xf32>
    %n = lstm.gate tanh (%xt, %rh : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wn0, %Rn0 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWn0, %bRn0 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %zc = lstm.one_minus %z : tensor<?x8xf32>
    %a = arith.mulf %zc, %n : tensor<?x8xf32>
    %b = arith.mulf %z, %h : tensor<?x8xf32>
    %hn = arith.addf %a, %b : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %Wr1 = tensor.extract_slice %W1[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rr1 = tensor.extract_slice %R1[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWr1 = tensor.extract_slice %bW1[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRr1 = tensor.extract_slice %bR1[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %Wz1 = tensor.extract_slice %W1[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rz1 = tensor.extract_slice %R1[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWz1 = tensor.extract_slice %bW1[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRz1 = tensor.extract_slice %bR1[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %Wn1 = tensor.extract_slice %W1[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rn1 = tensor.extract_slice %R1[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWn1 = tensor.extract_slice %bW1[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRn1 = tensor.extract_slice %bR1[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %y1, %hT1 = lstm.layer forward ins(%y0 : tensor<?x?x8xf32>) init(%h0_1 : tensor<?x8xf32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wr1, %Rr1 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWr1, %bRr1 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wz1, %Rz1 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWz1, %bRz1 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %rh = arith.mulf %r, %h : tensor<?x8xf32>
    %n = lstm.gate tanh (%xt, %rh : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wn1, %Rn1 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWn1, %bRn1 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %zc = lstm.one_minus %z : tensor<?x8xf32>
    %a = arith.mulf %zc, %n : tensor<?x8xf32>
    %b = arith.mulf %z, %h : tensor<?x8xf32>
    %hn = arith.addf %a, %b : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %Wr2 = tensor.extract_slice %W2[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rr2 = tensor.extract_slice %R2[0, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWr2 = tensor.extract_slice %bW2[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRr2 = tensor.extract_slice %bR2[0] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %Wz2 = tensor.extract_slice %W2[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rz2 = tensor.extract_slice %R2[8, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWz2 = tensor.extract_slice %bW2[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRz2 = tensor.extract_slice %bR2[8] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %Wn2 = tensor.extract_slice %W2[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %Rn2 = tensor.extract_slice %R2[16, 0] [8, 8] [1, 1] : tensor<24x8xf32> to tensor<8x8xf32>
  %bWn2 = tensor.extract_slice %bW2[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %bRn2 = tensor.extract_slice %bR2[16] [8] [1] : tensor<24xf32> to tensor<8xf32>
  %y2, %hT2 = lstm.layer forward ins(%y1 : tensor<?x?x8xf32>) init(%h0_2 : tensor<?x8xf32>) -> (tensor<?x?x8xf32>), (tensor<?x8xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x8xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wr2, %Rr2 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWr2, %bRr2 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wz2, %Rz2 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWz2, %bRz2 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %rh = arith.mulf %r, %h : tensor<?x8xf32>
    %n = lstm.gate tanh (%xt, %rh : tensor<?x8xf32>, tensor<?x8xf32>) weights(%Wn2, %Rn2 : tensor<8x8xf32>, tensor<8x8xf32>) bias(%bWn2, %bRn2 : tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    %zc = lstm.one_minus %z : tensor<?x8xf32>
    %a = arith.mulf %zc, %n : tensor<?x8xf32>
    %b = arith.mulf %z, %h : tensor<?x8xf32>
    %hn = arith.addf %a, %b : tensor<?x8xf32>
    lstm.yield out(%hn : tensor<?x8xf32>) state(%hn : tensor<?x8xf32>)
  }
  %hT_empty = tensor.empty(%B) : tensor<3x?x8xf32>
  %hT_acc0 = tensor.insert_slice %hT0 into %hT_empty[0, 0, 0] [1, %B, 8] [1, 1, 1] : tensor<?x8xf32> into tensor<3x?x8xf32>
  %hT_acc1 = tensor.insert_slice %hT1 into %hT_acc0[1, 0, 0] [1, %B, 8] [1, 1, 1] : tensor<?x8xf32> into tensor<3x?x8xf32>
  %hT_acc2 = tensor.insert_slice %hT2 into %hT_acc1[2, 0, 0] [1, %B, 8] [1, 1, 1] : tensor<?x8xf32> into tensor<3x?x8xf32>
  return %y2, %hT_acc2 : tensor<?x?x8xf32>, tensor<3x?x8xf32>
}
