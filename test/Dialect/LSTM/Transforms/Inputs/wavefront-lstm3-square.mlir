// wavefront-lstm3-square.mlir: a 3-layer LSTM whose layers all read as many
// features as they have (input = hidden = 16; bench/make_network.py --cell lstm
// --layers 3 --hidden 16 --input 16): a wavefront's diagonal batches every
// layer's input product, none is made before the loop.

func.func @forward(%x: tensor<?x?x16xf32>, %h0: tensor<3x?x16xf32>, %c0: tensor<3x?x16xf32>, %W0: tensor<64x16xf32>, %R0: tensor<64x16xf32>, %bW0: tensor<64xf32>, %bR0: tensor<64xf32>, %W1: tensor<64x16xf32>, %R1: tensor<64x16xf32>, %bW1: tensor<64xf32>, %bR1: tensor<64xf32>, %W2: tensor<64x16xf32>, %R2: tensor<64x16xf32>, %bW2: tensor<64xf32>, %bR2: tensor<64xf32>) -> (tensor<?x?x16xf32>, tensor<3x?x16xf32>, tensor<3x?x16xf32>) {
  %c1 = arith.constant 1 : index
  %B = tensor.dim %h0, %c1 : tensor<3x?x16xf32>
  %h0_0 = tensor.extract_slice %h0[0, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<3x?x16xf32> to tensor<?x16xf32>
  %c0_0 = tensor.extract_slice %c0[0, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<3x?x16xf32> to tensor<?x16xf32>
  %h0_1 = tensor.extract_slice %h0[1, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<3x?x16xf32> to tensor<?x16xf32>
  %c0_1 = tensor.extract_slice %c0[1, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<3x?x16xf32> to tensor<?x16xf32>
  %h0_2 = tensor.extract_slice %h0[2, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<3x?x16xf32> to tensor<?x16xf32>
  %c0_2 = tensor.extract_slice %c0[2, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<3x?x16xf32> to tensor<?x16xf32>
  %Wi0 = tensor.extract_slice %W0[0, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Ri0 = tensor.extract_slice %R0[0, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWi0 = tensor.extract_slice %bW0[0] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRi0 = tensor.extract_slice %bR0[0] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wf0 = tensor.extract_slice %W0[16, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Rf0 = tensor.extract_slice %R0[16, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWf0 = tensor.extract_slice %bW0[16] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRf0 = tensor.extract_slice %bR0[16] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wg0 = tensor.extract_slice %W0[32, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Rg0 = tensor.extract_slice %R0[32, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWg0 = tensor.extract_slice %bW0[32] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRg0 = tensor.extract_slice %bR0[32] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wo0 = tensor.extract_slice %W0[48, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Ro0 = tensor.extract_slice %R0[48, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWo0 = tensor.extract_slice %bW0[48] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRo0 = tensor.extract_slice %bR0[48] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x16xf32>) init(%h0_0, %c0_0 : tensor<?x16xf32>, tensor<?x16xf32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>, %c: tensor<?x16xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wi0, %Ri0 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWi0, %bRi0 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wf0, %Rf0 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWf0, %bRf0 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wg0, %Rg0 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWg0, %bRg0 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %ig = arith.mulf %i, %g : tensor<?x16xf32>
    %fc = arith.mulf %f, %c : tensor<?x16xf32>
    %cn = arith.addf %fc, %ig : tensor<?x16xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wo0, %Ro0 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWo0, %bRo0 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %tc = math.tanh %cn : tensor<?x16xf32>
    %hn = arith.mulf %o, %tc : tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn, %cn : tensor<?x16xf32>, tensor<?x16xf32>)
  }
  %Wi1 = tensor.extract_slice %W1[0, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Ri1 = tensor.extract_slice %R1[0, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWi1 = tensor.extract_slice %bW1[0] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRi1 = tensor.extract_slice %bR1[0] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wf1 = tensor.extract_slice %W1[16, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Rf1 = tensor.extract_slice %R1[16, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWf1 = tensor.extract_slice %bW1[16] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRf1 = tensor.extract_slice %bR1[16] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wg1 = tensor.extract_slice %W1[32, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Rg1 = tensor.extract_slice %R1[32, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWg1 = tensor.extract_slice %bW1[32] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRg1 = tensor.extract_slice %bR1[32] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wo1 = tensor.extract_slice %W1[48, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Ro1 = tensor.extract_slice %R1[48, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWo1 = tensor.extract_slice %bW1[48] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRo1 = tensor.extract_slice %bR1[48] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %y1, %hT1, %cT1 = lstm.layer forward ins(%y0 : tensor<?x?x16xf32>) init(%h0_1, %c0_1 : tensor<?x16xf32>, tensor<?x16xf32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>, %c: tensor<?x16xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wi1, %Ri1 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWi1, %bRi1 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wf1, %Rf1 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWf1, %bRf1 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wg1, %Rg1 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWg1, %bRg1 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %ig = arith.mulf %i, %g : tensor<?x16xf32>
    %fc = arith.mulf %f, %c : tensor<?x16xf32>
    %cn = arith.addf %fc, %ig : tensor<?x16xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wo1, %Ro1 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWo1, %bRo1 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %tc = math.tanh %cn : tensor<?x16xf32>
    %hn = arith.mulf %o, %tc : tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn, %cn : tensor<?x16xf32>, tensor<?x16xf32>)
  }
  %Wi2 = tensor.extract_slice %W2[0, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Ri2 = tensor.extract_slice %R2[0, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWi2 = tensor.extract_slice %bW2[0] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRi2 = tensor.extract_slice %bR2[0] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wf2 = tensor.extract_slice %W2[16, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Rf2 = tensor.extract_slice %R2[16, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWf2 = tensor.extract_slice %bW2[16] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRf2 = tensor.extract_slice %bR2[16] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wg2 = tensor.extract_slice %W2[32, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Rg2 = tensor.extract_slice %R2[32, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWg2 = tensor.extract_slice %bW2[32] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRg2 = tensor.extract_slice %bR2[32] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %Wo2 = tensor.extract_slice %W2[48, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %Ro2 = tensor.extract_slice %R2[48, 0] [16, 16] [1, 1] : tensor<64x16xf32> to tensor<16x16xf32>
  %bWo2 = tensor.extract_slice %bW2[48] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %bRo2 = tensor.extract_slice %bR2[48] [16] [1] : tensor<64xf32> to tensor<16xf32>
  %y2, %hT2, %cT2 = lstm.layer forward ins(%y1 : tensor<?x?x16xf32>) init(%h0_2, %c0_2 : tensor<?x16xf32>, tensor<?x16xf32>) -> (tensor<?x?x16xf32>), (tensor<?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>, %c: tensor<?x16xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wi2, %Ri2 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWi2, %bRi2 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wf2, %Rf2 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWf2, %bRf2 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wg2, %Rg2 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWg2, %bRg2 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %ig = arith.mulf %i, %g : tensor<?x16xf32>
    %fc = arith.mulf %f, %c : tensor<?x16xf32>
    %cn = arith.addf %fc, %ig : tensor<?x16xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>) weights(%Wo2, %Ro2 : tensor<16x16xf32>, tensor<16x16xf32>) bias(%bWo2, %bRo2 : tensor<16xf32>, tensor<16xf32>) -> tensor<?x16xf32>
    %tc = math.tanh %cn : tensor<?x16xf32>
    %hn = arith.mulf %o, %tc : tensor<?x16xf32>
    lstm.yield out(%hn : tensor<?x16xf32>) state(%hn, %cn : tensor<?x16xf32>, tensor<?x16xf32>)
  }
  %hT_empty = tensor.empty(%B) : tensor<3x?x16xf32>
  %hT_acc0 = tensor.insert_slice %hT0 into %hT_empty[0, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<?x16xf32> into tensor<3x?x16xf32>
  %hT_acc1 = tensor.insert_slice %hT1 into %hT_acc0[1, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<?x16xf32> into tensor<3x?x16xf32>
  %hT_acc2 = tensor.insert_slice %hT2 into %hT_acc1[2, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<?x16xf32> into tensor<3x?x16xf32>
  %cT_empty = tensor.empty(%B) : tensor<3x?x16xf32>
  %cT_acc0 = tensor.insert_slice %cT0 into %cT_empty[0, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<?x16xf32> into tensor<3x?x16xf32>
  %cT_acc1 = tensor.insert_slice %cT1 into %cT_acc0[1, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<?x16xf32> into tensor<3x?x16xf32>
  %cT_acc2 = tensor.insert_slice %cT2 into %cT_acc1[2, 0, 0] [1, %B, 16] [1, 1, 1] : tensor<?x16xf32> into tensor<3x?x16xf32>
  return %y2, %hT_acc2, %cT_acc2 : tensor<?x?x16xf32>, tensor<3x?x16xf32>, tensor<3x?x16xf32>
}
