//===- rnn_module.h - The module the C API tests compile ------------------===//
//
// Part of lstm-compiler, under the Apache License v2.0 with LLVM
// Exceptions. See LICENSE for license information.
// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
//
// h_t = tanh(W x_t + R h_{t-1} + b), I = H = 2: small enough that a test
// knows its result, one module for every C API test that compiles IR.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_TEST_CAPI_RNN_MODULE_H
#define LSTM_TEST_CAPI_RNN_MODULE_H

static const char *kRNN =
    "func.func @forward(%x: tensor<?x?x2xf32>, %h0: tensor<?x2xf32>,\n"
    "    %W: tensor<2x2xf32>, %R: tensor<2x2xf32>, %b: tensor<2xf32>)\n"
    "    -> (tensor<?x?x2xf32>, tensor<?x2xf32>) {\n"
    "  %y, %hT = lstm.layer forward ins(%x : tensor<?x?x2xf32>)\n"
    "      init(%h0 : tensor<?x2xf32>)\n"
    "      -> (tensor<?x?x2xf32>), (tensor<?x2xf32>) {\n"
    "  ^bb0(%xt: tensor<?x2xf32>, %h: tensor<?x2xf32>):\n"
    "    %hn = lstm.gate tanh (%xt, %h : tensor<?x2xf32>, tensor<?x2xf32>)\n"
    "        weights(%W, %R : tensor<2x2xf32>, tensor<2x2xf32>)\n"
    "        bias(%b : tensor<2xf32>) -> tensor<?x2xf32>\n"
    "    lstm.yield out(%hn : tensor<?x2xf32>) state(%hn : tensor<?x2xf32>)\n"
    "  }\n"
    "  return %y, %hT : tensor<?x?x2xf32>, tensor<?x2xf32>\n"
    "}\n";

#endif // LSTM_TEST_CAPI_RNN_MODULE_H
