#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the persistent kernels pay, by batch size (the H100 of issue 14).

An LSTM (by default char-rnn's: 2 layers, H = 128, I = 65, T = 50)
compiled several ways, each replayed as a CUDA graph at several batch
sizes beside cuDNN's graph; for char-rnn's:

  stack      lstm-to-persistent{always=true}: the two layers in one kernel
  layers     lstm-to-persistent{always=true stacks=false}: a kernel a layer
  perstep    lstm-optimize{wavefront=false}, no persistent kernel
  wavefront  lstm-optimize

Here (the compiler's machine), into DIR:
  python3 bench/make_network.py --cell lstm --layers 2 --hidden 128 --input 65 -o DIR/charrnn_lstm.mlir
  lstm-compile DIR/charrnn_lstm.mlir --target=cuda --pre-passes=PASSES -o DIR/NAME.so   (each NAME above)
There:
  python3 bench/micro/stack_batch.py DIR [--batches 16,32,50,64,96,128,192] [--json F]
      [--layers L --hidden H --input I --steps T] [--variants stack,layers,...]
      [--tf32 | --precision fp32|tf32|bf16]

With --cell peephole or cho_gru (bench/make_network.py's cells), the
libraries take that cell's arguments (a peephole LSTM's PyTorch weights
and random peepholes, a GRU's nn.GRU weights); the cuDNN column times
nn.LSTM (peephole) or nn.GRU (cho_gru) of the same sizes, and the error
column compares each library with the first.

With --precision bf16, cuDNN runs a bf16 copy of the module on bf16 inputs
(its weights flattened again) and ours the libraries as given (compiled
with --compute-type=bf16: fp32 arguments, bf16 products); the error column
is then against cuDNN's fp32 output.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'test', 'GPU'))
from compiled_net import CompiledNet  # noqa: E402
from run_gpu import capture_compiled, graph_ms, median_ms  # noqa: E402



def compiled_graph_ms(net, args, ranks):
    """`net` replayed as a CUDA graph: (ms, its first output)."""
    graph, outs = capture_compiled(net, args, ranks)
    ms = median_ms(graph.replay)
    graph.replay()
    torch.cuda.synchronize()
    first = outs[0].clone()
    del graph, outs
    return ms, first


def main():
    p = argparse.ArgumentParser()
    p.add_argument('dir')
    p.add_argument('--batches', default='16,32,50,64,96,128,192')
    p.add_argument('--json', default=None)
    p.add_argument('--layers', type=int, default=2)
    p.add_argument('--hidden', type=int, default=128)
    p.add_argument('--input', type=int, default=65)
    p.add_argument('--steps', type=int, default=50)
    p.add_argument('--variants', default='stack,layers,perstep,wavefront',
                   help='the libraries DIR/VARIANT.so to time')
    p.add_argument('--cell', choices=('lstm', 'peephole', 'cho_gru'), default='lstm',
                   help="the libraries' cell (bench/make_network.py)")
    p.add_argument('--tf32', action='store_true',
                   help="cuDNN's LSTM (the reference and the time beside ours) in TF32")
    p.add_argument('--precision', choices=('fp32', 'tf32', 'bf16'), default=None,
                   help="cuDNN's precision (the time beside ours); --tf32 is --precision tf32")
    a = p.parse_args()
    precision = a.precision or ('tf32' if a.tf32 else 'fp32')
    L, H, I, T = a.layers, a.hidden, a.input, a.steps
    variants = a.variants.split(',')
    torch.backends.cuda.matmul.allow_tf32 = precision == 'tf32'
    torch.backends.cudnn.allow_tf32 = precision == 'tf32'
    torch.manual_seed(0)
    gru = a.cell == 'cho_gru'
    mod = (torch.nn.GRU if gru else torch.nn.LSTM)(I, H, L).cuda()
    timed = mod
    if precision == 'bf16':
        import copy
        timed = copy.deepcopy(mod).to(torch.bfloat16)
        timed.flatten_parameters()
    params = []
    for layer in range(L):
        params += [getattr(mod, f'{n}_l{layer}').detach() for n in
                   ('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh')]
        if a.cell == 'peephole':
            params.append((torch.rand(3, H, device='cuda') * 2 - 1) * 0.1)
    states = 1 if gru else 2
    nets = {v: CompiledNet(os.path.join(a.dir, f'{v}.so')) for v in variants}
    rows = []
    print(f"{'B':>5} {'cuDNN':>8} " + ' '.join(f'{v:>10}' for v in variants) + '   max rel err')
    for B in [int(b) for b in a.batches.split(',')]:
        x = torch.rand(T, B, I, device='cuda') * 2 - 1
        h0 = torch.rand(L, B, H, device='cuda') * 2 - 1
        c0 = torch.rand(L, B, H, device='cuda') * 2 - 1
        init = h0 if gru else (h0, c0)
        with torch.no_grad():
            ref = mod(x, init)[0] if a.cell == 'lstm' else None
        if precision == 'bf16':
            xb, hb, cb = (v.to(torch.bfloat16) for v in (x, h0, c0))
            row = dict(B=B, cudnn=graph_ms(lambda: timed(xb, hb if gru else (hb, cb))))
        else:
            row = dict(B=B, cudnn=graph_ms(lambda: mod(x, init)))
        err = 0.0
        for v, net in nets.items():
            row[v], out = compiled_graph_ms(net, [x, h0, c0][:1 + states] + params,
                                            [3] * (1 + states))
            if ref is None:
                ref = out
            err = max(err, float((out - ref).norm() / ref.norm()))
        row['max_rel_err'] = err
        rows.append(row)
        print(f"{B:>5} {row['cudnn']:8.3f} " + ' '.join(f'{row[v]:10.3f}' for v in variants)
              + f'   {err:.1e}', flush=True)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
