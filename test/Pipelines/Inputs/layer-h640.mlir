// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// bench/make_network.py --cell lstm --layers 1 --hidden 640 --input 1024: 4H =
// 2560 gate rows, deeper than lstm-split-tf32-gemms's max-depth.
func.func @forward(%x: tensor<?x?x1024xf32>, %h0: tensor<1x?x640xf32>, %c0: tensor<1x?x640xf32>, %W0: tensor<2560x1024xf32>, %R0: tensor<2560x640xf32>, %bW0: tensor<2560xf32>, %bR0: tensor<2560xf32>) -> (tensor<?x?x640xf32>, tensor<1x?x640xf32>, tensor<1x?x640xf32>) {
  %c1 = arith.constant 1 : index
  %B = tensor.dim %h0, %c1 : tensor<1x?x640xf32>
  %h0_0 = tensor.extract_slice %h0[0, 0, 0] [1, %B, 640] [1, 1, 1] : tensor<1x?x640xf32> to tensor<?x640xf32>
  %c0_0 = tensor.extract_slice %c0[0, 0, 0] [1, %B, 640] [1, 1, 1] : tensor<1x?x640xf32> to tensor<?x640xf32>
  %Wi0 = tensor.extract_slice %W0[0, 0] [640, 1024] [1, 1] : tensor<2560x1024xf32> to tensor<640x1024xf32>
  %Ri0 = tensor.extract_slice %R0[0, 0] [640, 640] [1, 1] : tensor<2560x640xf32> to tensor<640x640xf32>
  %bWi0 = tensor.extract_slice %bW0[0] [640] [1] : tensor<2560xf32> to tensor<640xf32>
  %bRi0 = tensor.extract_slice %bR0[0] [640] [1] : tensor<2560xf32> to tensor<640xf32>
  %Wf0 = tensor.extract_slice %W0[640, 0] [640, 1024] [1, 1] : tensor<2560x1024xf32> to tensor<640x1024xf32>
  %Rf0 = tensor.extract_slice %R0[640, 0] [640, 640] [1, 1] : tensor<2560x640xf32> to tensor<640x640xf32>
  %bWf0 = tensor.extract_slice %bW0[640] [640] [1] : tensor<2560xf32> to tensor<640xf32>
  %bRf0 = tensor.extract_slice %bR0[640] [640] [1] : tensor<2560xf32> to tensor<640xf32>
  %Wg0 = tensor.extract_slice %W0[1280, 0] [640, 1024] [1, 1] : tensor<2560x1024xf32> to tensor<640x1024xf32>
  %Rg0 = tensor.extract_slice %R0[1280, 0] [640, 640] [1, 1] : tensor<2560x640xf32> to tensor<640x640xf32>
  %bWg0 = tensor.extract_slice %bW0[1280] [640] [1] : tensor<2560xf32> to tensor<640xf32>
  %bRg0 = tensor.extract_slice %bR0[1280] [640] [1] : tensor<2560xf32> to tensor<640xf32>
  %Wo0 = tensor.extract_slice %W0[1920, 0] [640, 1024] [1, 1] : tensor<2560x1024xf32> to tensor<640x1024xf32>
  %Ro0 = tensor.extract_slice %R0[1920, 0] [640, 640] [1, 1] : tensor<2560x640xf32> to tensor<640x640xf32>
  %bWo0 = tensor.extract_slice %bW0[1920] [640] [1] : tensor<2560xf32> to tensor<640xf32>
  %bRo0 = tensor.extract_slice %bR0[1920] [640] [1] : tensor<2560xf32> to tensor<640xf32>
  %y0, %hT0, %cT0 = lstm.layer forward ins(%x : tensor<?x?x1024xf32>) init(%h0_0, %c0_0 : tensor<?x640xf32>, tensor<?x640xf32>) -> (tensor<?x?x640xf32>), (tensor<?x640xf32>, tensor<?x640xf32>) {
  ^bb0(%xt: tensor<?x1024xf32>, %h: tensor<?x640xf32>, %c: tensor<?x640xf32>):
    %i = lstm.gate sigmoid (%xt, %h : tensor<?x1024xf32>, tensor<?x640xf32>) weights(%Wi0, %Ri0 : tensor<640x1024xf32>, tensor<640x640xf32>) bias(%bWi0, %bRi0 : tensor<640xf32>, tensor<640xf32>) -> tensor<?x640xf32>
    %f = lstm.gate sigmoid (%xt, %h : tensor<?x1024xf32>, tensor<?x640xf32>) weights(%Wf0, %Rf0 : tensor<640x1024xf32>, tensor<640x640xf32>) bias(%bWf0, %bRf0 : tensor<640xf32>, tensor<640xf32>) -> tensor<?x640xf32>
    %g = lstm.gate tanh (%xt, %h : tensor<?x1024xf32>, tensor<?x640xf32>) weights(%Wg0, %Rg0 : tensor<640x1024xf32>, tensor<640x640xf32>) bias(%bWg0, %bRg0 : tensor<640xf32>, tensor<640xf32>) -> tensor<?x640xf32>
    %ig = arith.mulf %i, %g : tensor<?x640xf32>
    %fc = arith.mulf %f, %c : tensor<?x640xf32>
    %cn = arith.addf %fc, %ig : tensor<?x640xf32>
    %o = lstm.gate sigmoid (%xt, %h : tensor<?x1024xf32>, tensor<?x640xf32>) weights(%Wo0, %Ro0 : tensor<640x1024xf32>, tensor<640x640xf32>) bias(%bWo0, %bRo0 : tensor<640xf32>, tensor<640xf32>) -> tensor<?x640xf32>
    %tc = math.tanh %cn : tensor<?x640xf32>
    %hn = arith.mulf %o, %tc : tensor<?x640xf32>
    lstm.yield out(%hn : tensor<?x640xf32>) state(%hn, %cn : tensor<?x640xf32>, tensor<?x640xf32>)
  }
  %hT_empty = tensor.empty(%B) : tensor<1x?x640xf32>
  %hT_acc0 = tensor.insert_slice %hT0 into %hT_empty[0, 0, 0] [1, %B, 640] [1, 1, 1] : tensor<?x640xf32> into tensor<1x?x640xf32>
  %cT_empty = tensor.empty(%B) : tensor<1x?x640xf32>
  %cT_acc0 = tensor.insert_slice %cT0 into %cT_empty[0, 0, 0] [1, %B, 640] [1, 1, 1] : tensor<?x640xf32> into tensor<1x?x640xf32>
  return %y0, %hT_acc0, %cT_acc0 : tensor<?x?x640xf32>, tensor<1x?x640xf32>, tensor<1x?x640xf32>
}
