#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Layers with lengths, LSTMP layers and the layer-normalised LSTM through
the persistent kernels (since 2026-12-02) against the per-step lowering and
cuDNN, all replayed as CUDA graphs, fp32 (no TF32), at char-rnn's step
count and several batches.

  lstmp   examples/lstmp.mlir, nn.LSTM(64, 128, proj_size=64): cuDNN's
          projected LSTM on the same weights
  varlen  examples/varlen.mlir, lengths from 1 to T: cuDNN's nn.LSTM(64,
          128) on the padded batch (a packed sequence's host-side batch
          sizes do not replay in a graph: the padded run bounds its work),
          and the packed run, not timed, for the outputs' agreement
  layernorm_stack2  examples/layernorm_stack2.mlir (two layers, H = 128):
          no cuDNN counterpart; the errors against the float64 reference
          (test/Integration/reference.py)

Here (the compiler's machine), into DIR, for NET in lstmp, varlen and
layernorm_stack2:
  lstm-compile examples/NET.mlir --target=cuda --persistent \\
      '--pre-passes=lstm-optimize{persistent=true}' -o DIR/NET-persistent.so
  lstm-compile examples/NET.mlir --target=cuda --pre-passes=lstm-optimize \\
      -o DIR/NET-perstep.so
There:
  python3 bench/micro/lengths_projections.py DIR [--batches 1,16,50,64]
      [--steps 50] [--json F]
Prints ms per forward and the largest relative error of the outputs
against cuDNN (varlen: its packed run).
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'test', 'GPU'))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'test',
                                'Integration'))
import numpy as np  # noqa: E402
import reference  # noqa: E402
from compiled_net import CompiledNet  # noqa: E402
from run_gpu import capture_compiled, graph_ms, median_ms  # noqa: E402

I, H, P = 64, 128, 64


def compiled_graph_ms(net, args, ranks):
    """`net` replayed as a CUDA graph: (ms, its outputs)."""
    graph, outs = capture_compiled(net, args, ranks)
    ms = median_ms(graph.replay)
    graph.replay()
    torch.cuda.synchronize()
    results = [o.clone() for o in outs]
    del graph, outs
    return ms, results


def rel(a, b):
    return float((a - b).norm() / b.norm())


def main():
    p = argparse.ArgumentParser()
    p.add_argument('dir')
    p.add_argument('--batches', default='1,16,50,64')
    p.add_argument('--steps', type=int, default=50)
    p.add_argument('--json', default=None)
    a = p.parse_args()
    T = a.steps
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    rows = []
    print(f"{'net':>7} {'B':>4} {'cuDNN':>8} {'persistent':>11} {'per-step':>9}   max rel err")
    for name in ('lstmp', 'varlen'):
        mod = torch.nn.LSTM(I, H, proj_size=P if name == 'lstmp' else 0).cuda()
        weights = [getattr(mod, f'{n}_l0').detach() for n in
                   ('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh')]
        if name == 'lstmp':
            weights.append(mod.weight_hr_l0.detach())
        nets = {v: CompiledNet(os.path.join(a.dir, f'{name}-{v}.so'))
                for v in ('persistent', 'perstep')}
        for B in [int(b) for b in a.batches.split(',')]:
            hw = P if name == 'lstmp' else H
            x = torch.rand(T, B, I, device='cuda') * 2 - 1
            h0 = torch.rand(1, B, hw, device='cuda') * 2 - 1
            c0 = torch.rand(1, B, H, device='cuda') * 2 - 1
            args = [x]
            if name == 'varlen':
                lengths = torch.randint(1, T + 1, (B,), dtype=torch.int32)
                lengths[0] = T
                args.append(lengths.cuda())
            args += [h0[0], c0[0]] + weights
            with torch.no_grad():
                if name == 'varlen':
                    packed = torch.nn.utils.rnn.pack_padded_sequence(
                        x, lengths, enforce_sorted=False)
                    y, (hT, cT) = mod(packed, (h0, c0))
                    y = torch.nn.utils.rnn.pad_packed_sequence(y, total_length=T)[0]
                else:
                    y, (hT, cT) = mod(x, (h0, c0))
            expected = [y, hT[0], cT[0]]
            row = dict(net=name, B=B, cudnn=graph_ms(lambda: mod(x, (h0, c0))))
            err = 0.0
            for v, net in nets.items():
                row[v], outs = compiled_graph_ms(net, args, [3, 2, 2])
                err = max([err] + [rel(o, e) for o, e in zip(outs, expected)])
            row['max_rel_err'] = err
            rows.append(row)
            print(f"{name:>7} {B:>4} {row['cudnn']:8.3f} {row['persistent']:11.3f} "
                  f"{row['perstep']:9.3f}   {err:.1e}", flush=True)
    nets = {v: CompiledNet(os.path.join(a.dir, f'layernorm_stack2-{v}.so'))
            for v in ('persistent', 'perstep')}
    for B in [int(b) for b in a.batches.split(',')]:
        inputs = reference.make_inputs('layernorm_stack2', T, B, np.random.default_rng(B))
        expected = reference.expected('layernorm_stack2', inputs)
        args = [torch.from_numpy(x).cuda() for x in inputs]
        row = dict(net='layernorm_stack2', B=B, cudnn=None)
        err = 0.0
        for v, net in nets.items():
            row[v], outs = compiled_graph_ms(net, args, [3, 3, 3])
            err = max([err] + [float(np.linalg.norm(o.cpu().double().numpy() - e) / np.linalg.norm(e))
                               for o, e in zip(outs, expected)])
        row['max_rel_err'] = err
        rows.append(row)
        print(f"{'lnorm2':>7} {B:>4} {'-':>8} {row['persistent']:11.3f} "
              f"{row['perstep']:9.3f}   {err:.1e}", flush=True)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
