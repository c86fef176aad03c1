// wavefront-gru4-reverse.mlir: a 4-layer reverse PyTorch GRU (input 8, hidden 16; reset after the recurrent GEMM)
//
// Layer k reads layer k-1's output sequence; the results are the last
// layer's outputs, then every layer's final states.

func.func @forward(%x: tensor<?x?x8xf32>,
    %h0_0: tensor<?x16xf32>,
    %h0_1: tensor<?x16xf32>,
    %h0_2: tensor<?x16xf32>,
    %h0_3: tensor<?x16xf32>,
    %Wr0: tensor<16x8xf32>,
    %Rr0: tensor<16x16xf32>,
    %br0: tensor<16xf32>,
    %Wz0: tensor<16x8xf32>,
    %Rz0: tensor<16x16xf32>,
    %bz0: tensor<16xf32>,
    %Wn0: tensor<16x8xf32>,
    %Rn0: tensor<16x16xf32>,
    %bWn0: tensor<16xf32>,
    %bRn0: tensor<16xf32>,
    %Wr1: tensor<16x16xf32>,
    %Rr1: tensor<16x16xf32>,
    %br1: tensor<16xf32>,
    %Wz1: tensor<16x16xf32>,
    %Rz1: tensor<16x16xf32>,
    %bz1: tensor<16xf32>,
    %Wn1: tensor<16x16xf32>,
    %Rn1: tensor<16x16xf32>,
    %bWn1: tensor<16xf32>,
    %bRn1: tensor<16xf32>,
    %Wr2: tensor<16x16xf32>,
    %Rr2: tensor<16x16xf32>,
    %br2: tensor<16xf32>,
    %Wz2: tensor<16x16xf32>,
    %Rz2: tensor<16x16xf32>,
    %bz2: tensor<16xf32>,
    %Wn2: tensor<16x16xf32>,
    %Rn2: tensor<16x16xf32>,
    %bWn2: tensor<16xf32>,
    %bRn2: tensor<16xf32>,
    %Wr3: tensor<16x16xf32>,
    %Rr3: tensor<16x16xf32>,
    %br3: tensor<16xf32>,
    %Wz3: tensor<16x16xf32>,
    %Rz3: tensor<16x16xf32>,
    %bz3: tensor<16xf32>,
    %Wn3: tensor<16x16xf32>,
    %Rn3: tensor<16x16xf32>,
    %bWn3: tensor<16xf32>,
    %bRn3: tensor<16xf32>)
    -> (tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>) {
  %y0, %hT0 = lstm.layer reverse ins(%x : tensor<?x?x8xf32>)
      init(%h0_0 : tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x8xf32>, %h: tensor<?x16xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x16xf32>)
        weights(%Wr0, %Rr0 : tensor<16x8xf32>, tensor<16x16xf32>)
        bias(%br0 : tensor<16xf32>) -> tensor<?x16xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x8xf32>, tensor<?x16xf32>)
        weights(%Wz0, %Rz0 : tensor<16x8xf32>, tensor<16x16xf32>)
        bias(%bz0 : tensor<16xf32>) -> tensor<?x16xf32>
    %xn = lstm.gate identity (%xt : tensor<?x8xf32>) weights(%Wn0 : tensor<16x8xf32>)
        bias(%bWn0 : tensor<16xf32>) -> tensor<?x16xf32>
    %hn = lstm.gate identity (%h : tensor<?x16xf32>) weights(%Rn0 : tensor<16x16xf32>)
        bias(%bRn0 : tensor<16xf32>) -> tensor<?x16xf32>
    %r_hn = arith.mulf %r, %hn : tensor<?x16xf32>
    %n_pre = arith.addf %xn, %r_hn : tensor<?x16xf32>
    %n = math.tanh %n_pre : tensor<?x16xf32>
    %z_c = lstm.one_minus %z : tensor<?x16xf32>
    %zc_n = arith.mulf %z_c, %n : tensor<?x16xf32>
    %z_h = arith.mulf %z, %h : tensor<?x16xf32>
    %h_new = arith.addf %zc_n, %z_h : tensor<?x16xf32>
    lstm.yield out(%h_new : tensor<?x16xf32>) state(%h_new : tensor<?x16xf32>)
  }
  %y1, %hT1 = lstm.layer reverse ins(%y0 : tensor<?x?x16xf32>)
      init(%h0_1 : tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wr1, %Rr1 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%br1 : tensor<16xf32>) -> tensor<?x16xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wz1, %Rz1 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bz1 : tensor<16xf32>) -> tensor<?x16xf32>
    %xn = lstm.gate identity (%xt : tensor<?x16xf32>) weights(%Wn1 : tensor<16x16xf32>)
        bias(%bWn1 : tensor<16xf32>) -> tensor<?x16xf32>
    %hn = lstm.gate identity (%h : tensor<?x16xf32>) weights(%Rn1 : tensor<16x16xf32>)
        bias(%bRn1 : tensor<16xf32>) -> tensor<?x16xf32>
    %r_hn = arith.mulf %r, %hn : tensor<?x16xf32>
    %n_pre = arith.addf %xn, %r_hn : tensor<?x16xf32>
    %n = math.tanh %n_pre : tensor<?x16xf32>
    %z_c = lstm.one_minus %z : tensor<?x16xf32>
    %zc_n = arith.mulf %z_c, %n : tensor<?x16xf32>
    %z_h = arith.mulf %z, %h : tensor<?x16xf32>
    %h_new = arith.addf %zc_n, %z_h : tensor<?x16xf32>
    lstm.yield out(%h_new : tensor<?x16xf32>) state(%h_new : tensor<?x16xf32>)
  }
  %y2, %hT2 = lstm.layer reverse ins(%y1 : tensor<?x?x16xf32>)
      init(%h0_2 : tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wr2, %Rr2 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%br2 : tensor<16xf32>) -> tensor<?x16xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wz2, %Rz2 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bz2 : tensor<16xf32>) -> tensor<?x16xf32>
    %xn = lstm.gate identity (%xt : tensor<?x16xf32>) weights(%Wn2 : tensor<16x16xf32>)
        bias(%bWn2 : tensor<16xf32>) -> tensor<?x16xf32>
    %hn = lstm.gate identity (%h : tensor<?x16xf32>) weights(%Rn2 : tensor<16x16xf32>)
        bias(%bRn2 : tensor<16xf32>) -> tensor<?x16xf32>
    %r_hn = arith.mulf %r, %hn : tensor<?x16xf32>
    %n_pre = arith.addf %xn, %r_hn : tensor<?x16xf32>
    %n = math.tanh %n_pre : tensor<?x16xf32>
    %z_c = lstm.one_minus %z : tensor<?x16xf32>
    %zc_n = arith.mulf %z_c, %n : tensor<?x16xf32>
    %z_h = arith.mulf %z, %h : tensor<?x16xf32>
    %h_new = arith.addf %zc_n, %z_h : tensor<?x16xf32>
    lstm.yield out(%h_new : tensor<?x16xf32>) state(%h_new : tensor<?x16xf32>)
  }
  %y3, %hT3 = lstm.layer reverse ins(%y2 : tensor<?x?x16xf32>)
      init(%h0_3 : tensor<?x16xf32>)
      -> (tensor<?x?x16xf32>), (tensor<?x16xf32>) {
  ^bb0(%xt: tensor<?x16xf32>, %h: tensor<?x16xf32>):
    %r = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wr3, %Rr3 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%br3 : tensor<16xf32>) -> tensor<?x16xf32>
    %z = lstm.gate sigmoid (%xt, %h : tensor<?x16xf32>, tensor<?x16xf32>)
        weights(%Wz3, %Rz3 : tensor<16x16xf32>, tensor<16x16xf32>)
        bias(%bz3 : tensor<16xf32>) -> tensor<?x16xf32>
    %xn = lstm.gate identity (%xt : tensor<?x16xf32>) weights(%Wn3 : tensor<16x16xf32>)
        bias(%bWn3 : tensor<16xf32>) -> tensor<?x16xf32>
    %hn = lstm.gate identity (%h : tensor<?x16xf32>) weights(%Rn3 : tensor<16x16xf32>)
        bias(%bRn3 : tensor<16xf32>) -> tensor<?x16xf32>
    %r_hn = arith.mulf %r, %hn : tensor<?x16xf32>
    %n_pre = arith.addf %xn, %r_hn : tensor<?x16xf32>
    %n = math.tanh %n_pre : tensor<?x16xf32>
    %z_c = lstm.one_minus %z : tensor<?x16xf32>
    %zc_n = arith.mulf %z_c, %n : tensor<?x16xf32>
    %z_h = arith.mulf %z, %h : tensor<?x16xf32>
    %h_new = arith.addf %zc_n, %z_h : tensor<?x16xf32>
    lstm.yield out(%h_new : tensor<?x16xf32>) state(%h_new : tensor<?x16xf32>)
  }
  return %y3, %hT0, %hT1, %hT2, %hT3 : tensor<?x?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>, tensor<?x16xf32>
}
