// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// bench/make_network.py --cell lstm --layers 4 --hidden 512 --input 512 (the
// appleyard configuration): its layers do not form one persistent kernel.
func.func @forward(%x: tensor<?x?x512xf32>, %h0: tensor<4x?x512xf32>, %c0: tensor<4x?x512xf32>, %W0: tensor<2048x512xf32>, %R0: tensor<2048x512xf32>, %bW0: tensor<2048xf32>, %bR0: tensor<2048xf32>, %W1: tensor<2048x512xf32>, %R1: tensor<2048x512xf32>, %bW1: tensor<2048xf32>, %bR1: tensor<2048xf32>, %W2: tensor<2048x512xf32>, %R2: tensor<2048x512xf32>, %bW2: tensor<2048xf32>, %bR2: tensor<2048xf32>, %W3: tensor<2048x512xf32>, %R3: tensor<2048x512xf32>, %bW3: tensor<2048xf32>, %bR3: tensor<2048xf32>) -> (tensor<?x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>) {
  %c1 = arith.constant 1 : index
  %B = tensor.dim %h0, %c1 : tensor<4x?x512xf32>
  %h0_0 = tensor.extract_slice %h0[0, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<4x?x512xf32> to tensor<?x512xf32>
  %c0_0 = tensor.extract_slice %c0[0, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<4x?x512xf32> to tensor<?x512xf32>
  %h0_1 = tensor.extract_slice %h0[1, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<4x?x512xf32> to tensor<?x512xf32>
  %c0_1 = tensor.extract_slice %c0[1, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<4x?x512xf32> to tensor<?x512xf32>
  %h0_2 = tensor.extract_slice %h0[2, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<4x?x512xf32> to tensor<?x512xf32>
  %c0_2 = tensor.extract_slice %c0[2, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<4x?x512xf32> to tensor<?x512xf32>
  %h0_3 = tensor.extract_slice %h0[3, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<4x?x512xf32> to tensor<?x512xf32>
  %c0_3 = tensor.extract_slice %c0[3, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<4x?x512xf32> to tensor<?x512xf32>
  %Wi0 = tensor.extract_slice %W0[0, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Ri0 = tensor.extract_slice %R0[0, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWi0 = tensor.extract_slice %bW0[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRi0 = tensor.extract_slice %bR0[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wf0 = tensor.extract_slice %W0[512, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Rf0 = tensor.extract_slice %R0[512, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWf0 = tensor.extract_slice %bW0[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRf0 = tensor.extract_slice %bR0[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wg0 = tensor.extract_slice %W0[1024, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Rg0 = tensor.extract_slice %R0[1024, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWg0 = tensor.extract_slice %bW0[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRg0 = tensor.extract_slice %bR0[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wo0 = tensor.extract_slice %W0[1536, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Ro0 = tensor.extract_slice %R0[1536, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWo0 = tensor.extract_slice %bW0[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRo0 = tensor.extract_slice %bR0[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x512xf32>) init(%h0_0, %c0_0 : tensor<?x512xf32>, tensor<?x512xf32>) -> (tensor<?x?x512xf32>), (tensor<?x512xf32>, tensor<?x512xf32>) {
  ^bb0(%xt: tensor<?x512xf32>, %h: tensor<?x512xf32>, %c: tensor<?x512xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wi0, %Ri0 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWi0, %bRi0 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wf0, %Rf0 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWf0, %bRf0 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wg0, %Rg0 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWg0, %bRg0 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %ig = arith.mulf %i, %g : tensor<?x512xf32>
    %fc = arith.mulf %f, %c : tensor<?x512xf32>
    %cn = arith.addf %fc, %ig : tensor<?x512xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wo0, %Ro0 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWo0, %bRo0 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %tc = math.tanh %cn : tensor<?x512xf32>
    %hn = arith.mulf %o, %tc : tensor<?x512xf32>
    lstm.yield out(%hn : tensor<?x512xf32>) state(%hn, %cn : tensor<?x512xf32>, tensor<?x512xf32>)
  }
  %Wi1 = tensor.extract_slice %W1[0, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Ri1 = tensor.extract_slice %R1[0, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWi1 = tensor.extract_slice %bW1[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRi1 = tensor.extract_slice %bR1[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wf1 = tensor.extract_slice %W1[512, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Rf1 = tensor.extract_slice %R1[512, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWf1 = tensor.extract_slice %bW1[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRf1 = tensor.extract_slice %bR1[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wg1 = tensor.extract_slice %W1[1024, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Rg1 = tensor.extract_slice %R1[1024, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWg1 = tensor.extract_slice %bW1[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRg1 = tensor.extract_slice %bR1[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wo1 = tensor.extract_slice %W1[1536, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Ro1 = tensor.extract_slice %R1[1536, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWo1 = tensor.extract_slice %bW1[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRo1 = tensor.extract_slice %bR1[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %y1, %hT1, %cT1 = lstm.layer forward ins(%y0 : tensor<?x?x512xf32>) init(%h0_1, %c0_1 : tensor<?x512xf32>, tensor<?x512xf32>) -> (tensor<?x?x512xf32>), (tensor<?x512xf32>, tensor<?x512xf32>) {
  ^bb0(%xt: tensor<?x512xf32>, %h: tensor<?x512xf32>, %c: tensor<?x512xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wi1, %Ri1 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWi1, %bRi1 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wf1, %Rf1 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWf1, %bRf1 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wg1, %Rg1 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWg1, %bRg1 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %ig = arith.mulf %i, %g : tensor<?x512xf32>
    %fc = arith.mulf %f, %c : tensor<?x512xf32>
    %cn = arith.addf %fc, %ig : tensor<?x512xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wo1, %Ro1 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWo1, %bRo1 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %tc = math.tanh %cn : tensor<?x512xf32>
    %hn = arith.mulf %o, %tc : tensor<?x512xf32>
    lstm.yield out(%hn : tensor<?x512xf32>) state(%hn, %cn : tensor<?x512xf32>, tensor<?x512xf32>)
  }
  %Wi2 = tensor.extract_slice %W2[0, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Ri2 = tensor.extract_slice %R2[0, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWi2 = tensor.extract_slice %bW2[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRi2 = tensor.extract_slice %bR2[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wf2 = tensor.extract_slice %W2[512, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Rf2 = tensor.extract_slice %R2[512, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWf2 = tensor.extract_slice %bW2[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRf2 = tensor.extract_slice %bR2[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wg2 = tensor.extract_slice %W2[1024, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Rg2 = tensor.extract_slice %R2[1024, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWg2 = tensor.extract_slice %bW2[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRg2 = tensor.extract_slice %bR2[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wo2 = tensor.extract_slice %W2[1536, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Ro2 = tensor.extract_slice %R2[1536, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWo2 = tensor.extract_slice %bW2[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRo2 = tensor.extract_slice %bR2[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %y2, %hT2, %cT2 = lstm.layer forward ins(%y1 : tensor<?x?x512xf32>) init(%h0_2, %c0_2 : tensor<?x512xf32>, tensor<?x512xf32>) -> (tensor<?x?x512xf32>), (tensor<?x512xf32>, tensor<?x512xf32>) {
  ^bb0(%xt: tensor<?x512xf32>, %h: tensor<?x512xf32>, %c: tensor<?x512xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wi2, %Ri2 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWi2, %bRi2 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wf2, %Rf2 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWf2, %bRf2 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wg2, %Rg2 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWg2, %bRg2 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %ig = arith.mulf %i, %g : tensor<?x512xf32>
    %fc = arith.mulf %f, %c : tensor<?x512xf32>
    %cn = arith.addf %fc, %ig : tensor<?x512xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wo2, %Ro2 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWo2, %bRo2 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %tc = math.tanh %cn : tensor<?x512xf32>
    %hn = arith.mulf %o, %tc : tensor<?x512xf32>
    lstm.yield out(%hn : tensor<?x512xf32>) state(%hn, %cn : tensor<?x512xf32>, tensor<?x512xf32>)
  }
  %Wi3 = tensor.extract_slice %W3[0, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Ri3 = tensor.extract_slice %R3[0, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWi3 = tensor.extract_slice %bW3[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRi3 = tensor.extract_slice %bR3[0] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wf3 = tensor.extract_slice %W3[512, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Rf3 = tensor.extract_slice %R3[512, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWf3 = tensor.extract_slice %bW3[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRf3 = tensor.extract_slice %bR3[512] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wg3 = tensor.extract_slice %W3[1024, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Rg3 = tensor.extract_slice %R3[1024, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWg3 = tensor.extract_slice %bW3[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRg3 = tensor.extract_slice %bR3[1024] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %Wo3 = tensor.extract_slice %W3[1536, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %Ro3 = tensor.extract_slice %R3[1536, 0] [512, 512] [1, 1] : tensor<2048x512xf32> to tensor<512x512xf32>
  %bWo3 = tensor.extract_slice %bW3[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %bRo3 = tensor.extract_slice %bR3[1536] [512] [1] : tensor<2048xf32> to tensor<512xf32>
  %y3, %hT3, %cT3 = lstm.layer forward ins(%y2 : tensor<?x?x512xf32>) init(%h0_3, %c0_3 : tensor<?x512xf32>, tensor<?x512xf32>) -> (tensor<?x?x512xf32>), (tensor<?x512xf32>, tensor<?x512xf32>) {
  ^bb0(%xt: tensor<?x512xf32>, %h: tensor<?x512xf32>, %c: tensor<?x512xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wi3, %Ri3 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWi3, %bRi3 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wf3, %Rf3 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWf3, %bRf3 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wg3, %Rg3 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWg3, %bRg3 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %ig = arith.mulf %i, %g : tensor<?x512xf32>
    %fc = arith.mulf %f, %c : tensor<?x512xf32>
    %cn = arith.addf %fc, %ig : tensor<?x512xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x512xf32>, tensor<?x512xf32>) weights(%Wo3, %Ro3 : tensor<512x512xf32>, tensor<512x512xf32>) bias(%bWo3, %bRo3 : tensor<512xf32>, tensor<512xf32>) -> tensor<?x512xf32>
    %tc = math.tanh %cn : tensor<?x512xf32>
    %hn = arith.mulf %o, %tc : tensor<?x512xf32>
    lstm.yield out(%hn : tensor<?x512xf32>) state(%hn, %cn : tensor<?x512xf32>, tensor<?x512xf32>)
  }
  %hT_empty = tensor.empty(%B) : tensor<4x?x512xf32>
  %hT_acc0 = tensor.insert_slice %hT0 into %hT_empty[0, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
  %hT_acc1 = tensor.insert_slice %hT1 into %hT_acc0[1, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
  %hT_acc2 = tensor.insert_slice %hT2 into %hT_acc1[2, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
  %hT_acc3 = tensor.insert_slice %hT3 into %hT_acc2[3, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
  %cT_empty = tensor.empty(%B) : tensor<4x?x512xf32>
  %cT_acc0 = tensor.insert_slice %cT0 into %cT_empty[0, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
  %cT_acc1 = tensor.insert_slice %cT1 into %cT_acc0[1, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
  %cT_acc2 = tensor.insert_slice %cT2 into %cT_acc1[2, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
  %cT_acc3 = tensor.insert_slice %cT3 into %cT_acc2[3, 0, 0] [1, %B, 512] [1, 1, 1] : tensor<?x512xf32> into tensor<4x?x512xf32>
  return %y3, %hT_acc3, %cT_acc3 : tensor<?x?x512xf32>, tensor<4x?x512xf32>, tensor<4x?x512xf32>
}
