#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where a stack's one kernel pays, by batch size (the H100 of issue 14).

The char-rnn LSTM (2 layers, H = 128, I = 65, T = 50) compiled four ways,
each replayed as a CUDA graph at several batch sizes beside cuDNN's graph:

  stack      lstm-to-persistent{always=true}: the two layers in one kernel
  layers     lstm-to-persistent{always=true stacks=false}: a kernel a layer
  perstep    lstm-optimize{wavefront=false}, no persistent kernel
  wavefront  lstm-optimize

Here (the compiler's machine), into DIR:
  python3 bench/make_network.py --cell lstm --layers 2 --hidden 128 --input 65 -o DIR/charrnn_lstm.mlir
  lstm-compile DIR/charrnn_lstm.mlir --target=cuda --pre-passes=PASSES -o DIR/NAME.so   (each NAME above)
There:
  python3 bench/micro/stack_batch.py DIR [--batches 16,32,50,64,96,128,192] [--json F]
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

L, H, T, I = 2, 128, 50, 65
VARIANTS = ['stack', 'layers', 'perstep', 'wavefront']


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
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    mod = torch.nn.LSTM(I, H, L).cuda()
    params = []
    for layer in range(L):
        params += [getattr(mod, f'{n}_l{layer}').detach() for n in
                   ('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh')]
    nets = {v: CompiledNet(os.path.join(a.dir, f'{v}.so')) for v in VARIANTS}
    rows = []
    print(f"{'B':>5} {'cuDNN':>8} " + ' '.join(f'{v:>10}' for v in VARIANTS) + '   max rel err')
    for B in [int(b) for b in a.batches.split(',')]:
        x = torch.rand(T, B, I, device='cuda') * 2 - 1
        h0 = torch.rand(L, B, H, device='cuda') * 2 - 1
        c0 = torch.rand(L, B, H, device='cuda') * 2 - 1
        with torch.no_grad():
            ref = mod(x, (h0, c0))[0]
        row = dict(B=B, cudnn=graph_ms(lambda: mod(x, (h0, c0))))
        err = 0.0
        for v, net in nets.items():
            row[v], out = compiled_graph_ms(net, [x, h0, c0] + params, [3, 3, 3])
            err = max(err, float((out - ref).norm() / ref.norm()))
        row['max_rel_err'] = err
        rows.append(row)
        print(f"{B:>5} {row['cudnn']:8.3f} " + ' '.join(f'{row[v]:10.3f}' for v in VARIANTS)
              + f'   {err:.1e}', flush=True)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
