// wavefront-peephole4.mlir: a 4-layer peephole LSTM (input 12, hidden 16; o peeps at the new c)
//
// Layer k reads layer k-1's output sequence; the results are the last
// layer's outputs, then every layer's final states.

func.func @forward(%x: tensor<?x?x12xf32>,
    %h0_0: tensor<?x16xf32>,
    %h0_1: tensor<?x16xf32>,
    %h0_2: tensor<?x16xf32>,
    %h0_3: tensor<?x16xf32>,
    %c0_0: tensor<?x16xf32>,
    %c0_1: tensor<?x16xf32>,
    %c0_2: tensor<?x16xf32>,
    %c0_3: tensor<?x16xf32>,
    %Wi0: tensor<16x12xf32>,
    %Ri0: tensor<16x16xf32>,
    %bi0: tensor<16xf32>,
    %Wf0: tensor<16x12xf32>,
    %Rf0: tensor<16x16xf32>,
    %bf0: tensor<16xf32>,
    %Wg0: tensor<16x12xf32>,
    %Rg0: tensor<16x16xf32>,
    %bg0: tensor<16xf32>,
    %Wo0: tensor<16x12xf32>,
    %Ro0: tensor<16x16xf32>,
    %bo0: tensor<16xf32>,
    %pi0: tensor<16xf32>,
    %pf0: tensor<16xf32>,
    %po0: tensor<16xf32>,
    %Wi1: tensor<16x16xf32>,
    %Ri1: tensor<16x16xf32>,
    %bi1: tensor<16xf32>,
    %Wf1: tensor<16x16xf32>,
    %Rf1: tensor<16x16xf32>,
    %bf1: tensor<16xf32>,
    %Wg1: tensor<16x16xf32>,
    %Rg1: tensor<16x16xf32>,
    %bg1: tensor<16xf32>,
    %Wo1: tensor<16x16xf32>,
    %Ro1: tensor<16x16xf32>,
    %bo1: tensor<16xf32>,
    %pi1: tensor<16xf32>,
    %pf1: tensor<16xf32>,
    %po1: tensor<16xf32>,
    %Wi2: tensor<16x16xf32>,
    %Ri2: tensor<16x16xf32>,
    %bi2: tensor<16xf32>,
    %Wf2: tensor<16x16xf32>,
    %Rf2: tensor<16x16xf32>,
    %bf2: tensor<16xf32>,
    %Wg2: tensor<16x16xf32>,
    %Rg2: tensor<16x16xf32>,
    %bg2: tensor<16xf32>,
    %Wo2: tensor<16x16xf32>,
    %Ro2: tensor<16x16xf32>,
    %bo2: tensor<16xf32>,
    %pi2: tensor<16xf32>,
    %pf2: tensor<16xf32>,
    %po2: tensor<16xf32>,
    %Wi3: tensor<16x16xf32>,
    %Ri3: tensor<16x16xf32>,
    %bi3: tensor<16xf32>,
    %Wf3: tensor<16x16xf32>,
    %Rf3: tensor<16x16xf32>,
    %bf3: tensor<16xf32>,
    %Wg3: tensor<16x16xf32>,
    %Rg3: tensor<16x16xf32>,
    %bg3: tensor<16xf32>,
    %Wo3: tensor<16x16xf32>,
    %Ro3: tensor<16x16xf32>,
    %bo3: tensor<16xf32>,
    %pi3: tensor<16xf32>,
    %pf3: tensor<16xf32>,
    %po3: tensor<16xf32>)
    -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x12xf32>)
      init(%h0_0, %c0_0 : tensor<?x16xf32>, tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x12xf32>, %h: tensor<?x16xf32>, %c: tensor<?x16xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x12xf32>, tensor<?x16xf32>)
        weights(%Wi0, %Ri0 : tensor<16x12xf32>, tensor<16x16xf32>)
        bias(%bi0 : tensor<16xf32>)
        peephole(%pi0, %c : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x12xf32>, tensor<?x16xf32>)
        weights(%Wf0, %Rf0 : tensor<16x12xf32>, tensor<16x16xf32>)
        bias(%bf0 : tensor<16xf32>)
        peephole(%pf0, %c : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x12xf32>, tensor<?x16xf32>)
        weights(%Wg0, %Rg0 : tensor<16x12xf32>, tensor<16x16xf32>)
        bias(%bg0 : tensor<16xf32>) -> tensor<?x16xf32>
    %ig = arith.mulf %i, %g : tensor<?x16xf32>
    %fc = arith.mulf %f, %c : tensor<?x16xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x16xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x12xf32>, tensor<?x16xf32>)
        weights(%Wo0, %Ro0 : tensor<16x12xf32>, tensor<16x16xf32>)
        bias(%bo0 : tensor<16xf32>)
        peephole(%po0, %c_new : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %tc = math.tanh %c_new : tensor<?x16xf32>
    %h_new = arith.mulf %o, %tc : tensor<?x16xf32>
    lstm.yield out(%h_new : tensor<?x16xf32>) state(%h_new, %c_new : tensor<?x16xf32>, tensor<?x16xf32>)
  }
  %y1, %hT1, %cT1 = lstm.layer forward ins(%y0 : tensor<?x?x16xf32>)
      init(%h0_1, %c0_1 : tensor<?x16xf32>, tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>, %c: tensor<?x16xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wi1, %Ri1 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bi1 : tensor<16xf32>)
        peephole(%pi1, %c : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wf1, %Rf1 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bf1 : tensor<16xf32>)
        peephole(%pf1, %c : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wg1, %Rg1 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bg1 : tensor<16xf32>) -> tensor<?x16xf32>
    %ig = arith.mulf %i, %g : tensor<?x16xf32>
    %fc = arith.mulf %f, %c : tensor<?x16xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x16xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wo1, %Ro1 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bo1 : tensor<16xf32>)
        peephole(%po1, %c_new : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %tc = math.tanh %c_new : tensor<?x16xf32>
    %h_new = arith.mulf %o, %tc : tensor<?x16xf32>
    lstm.yield out(%h_new : tensor<?x16xf32>) state(%h_new, %c_new : tensor<?x16xf32>, tensor<?x16xf32>)
  }
  %y2, %hT2, %cT2 = lstm.layer forward ins(%y1 : tensor<?x?x16xf32>)
      init(%h0_2, %c0_2 : tensor<?x16xf32>, tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>, %c: tensor<?x16xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wi2, %Ri2 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bi2 : tensor<16xf32>)
        peephole(%pi2, %c : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wf2, %Rf2 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bf2 : tensor<16xf32>)
        peephole(%pf2, %c : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wg2, %Rg2 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bg2 : tensor<16xf32>) -> tensor<?x16xf32>
    %ig = arith.mulf %i, %g : tensor<?x16xf32>
    %fc = arith.mulf %f, %c : tensor<?x16xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x16xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wo2, %Ro2 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bo2 : tensor<16xf32>)
        peephole(%po2, %c_new : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %tc = math.tanh %c_new : tensor<?x16xf32>
    %h_new = arith.mulf %o, %tc : tensor<?x16xf32>
    lstm.yield out(%h_new : tensor<?x16xf32>) state(%h_new, %c_new : tensor<?x16xf32>, tensor<?x16xf32>)
  }
  %y3, %hT3, %cT3 = lstm.layer forward ins(%y2 : tensor<?x?x16xf32>)
      init(%h0_3, %c0_3 : tensor<?x16xf32>, tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>, tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>, %c: tensor<?x16xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wi3, %Ri3 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bi3 : tensor<16xf32>)
        peephole(%pi3, %c : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wf3, %Rf3 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bf3 : tensor<16xf32>)
        peephole(%pf3, %c : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wg3, %Rg3 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bg3 : tensor<16xf32>) -> tensor<?x16xf32>
    %ig = arith.mulf %i, %g : tensor<?x16xf32>
    %fc = arith.mulf %f, %c : tensor<?x16xf32>
    %c_new = arith.addf %fc, %ig : tensor<?x16xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wo3, %Ro3 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bo3 : tensor<16xf32>)
        peephole(%po3, %c_new : tensor<16xf32>, tensor<?x16xf32>) -> tensor<?x16xf32>
    %tc = math.tanh %c_new : tensor<?x16xf32>
    %h_new = arith.mulf %o, %tc : tensor<?x16xf32>
    lstm.yield out(%h_new : tensor<?x16xf32>) state(%h_new, %c_new : tensor<?x16xf32>, tensor<?x16xf32>)
  }
  return %y3, %hT0, %hT1, %hT2, %hT3, %cT0, %cT1, %cT2, %cT3 : tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}
