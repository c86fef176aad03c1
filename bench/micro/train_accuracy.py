#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The fp32 LSTM training libraries' errors against float64 (GPU machine).

For each configuration, nn.LSTM in float64 on the GPU with autograd is the
reference; cuDNN's fp32 LSTM and each variant's library (a directory of
bench/compile_train.sh's CONFIG_lstm_fp32.so) run on the same data and
weights (bench/train_gpu.py's). Printed: the largest norm-relative error
of the outputs (`forward`) and of the gradients (`forward_grad`, every
argument's), then each gradient's in the arguments' order.

  python3 bench/micro/train_accuracy.py NAME=DIR [NAME=DIR ...]
      [--configs appleyard,deepbench,large]
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from train_gpu import (CONFIGS, GradNet, cudnn_module, leaves_of,  # noqa: E402
                       make_data, make_weights, module_forward, rel_err,
                       set_precision)


def reference(cfg, dtype, x, h0, c0, ws, cots):
    """nn.LSTM's outputs and gradients (inputs, then each layer's
    weight_ih, weight_hh, bias_ih, bias_hh) in `dtype`."""
    L = CONFIGS[cfg][0]
    mod = cudnn_module('lstm', cfg, ws, 'cuda').to(dtype)
    leaves = leaves_of([t.to(dtype) for t in (x, h0, c0)])
    params = [getattr(mod, f'{n}_l{layer}') for layer in range(L)
              for n in ('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh')]
    outs = module_forward(mod, 'lstm', leaves)()
    torch.autograd.backward(outs, [c.to(dtype) for c in cots])
    return [o.detach() for o in outs], [t.grad for t in leaves + params]


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('variants', nargs='+', help='NAME=DIR')
    p.add_argument('--configs', default='appleyard,deepbench,large')
    a = p.parse_args()
    set_precision('fp32')
    for cfg in a.configs.split(','):
        x, h0, c0, cots = make_data(cfg, 'cuda', 0)
        ws = make_weights(cfg, 'lstm', 'cuda', 1)
        ref_o, ref_g = reference(cfg, torch.float64, x, h0, c0, ws, cots)

        def errors(outs, grads):
            each = [rel_err(g, r) for g, r in zip(grads, ref_g)]
            return max(rel_err(o, r) for o, r in zip(outs, ref_o)), each

        eo, eg = errors(*reference(cfg, torch.float32, x, h0, c0, ws, cots))
        print(f'{cfg:9} {"cudnn":11} out {eo:.2e}  grad {max(eg):.2e}')
        args = [x, h0, c0] + ws
        for variant in a.variants:
            name, d = variant.split('=', 1)
            net = GradNet(os.path.join(d, f'{cfg}_lstm_fp32.so'), device='cuda')
            outs = [t.clone() for t in net.call('forward', args)]
            grads = [t.clone() for t in net.call('forward_grad', args + cots[:3])]
            eo, eg = errors(outs, grads)
            print(f'{cfg:9} {name:11} out {eo:.2e}  grad {max(eg):.2e}  each '
                  + ' '.join(f'{e:.1e}' for e in eg))
            net.release()


if __name__ == '__main__':
    main()
