#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Training libraries of two or more compilers side by side (GPU machine).

Each variant is a directory of bench/compile_train.sh's libraries
(CONFIG_CELL_PREC.so). For every configuration, cell and precision found in
the first, each variant's @forward_grad is captured in a CUDA graph and its
replays timed in rounds that alternate the variants (so that the GPU's
drift over a run falls on all of them alike), beside cuDNN's graph of
nn.LSTM / nn.GRU on the same weights; the gradients of every variant are
compared with the first's.

  python3 bench/micro/train_ab.py base=DIR1 new=DIR2 [...] [--rounds 3]
      [--configs appleyard,...] [--json F]
"""
import argparse
import glob
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from train_gpu import (GradNet, autograd_step, capture_autograd,  # noqa: E402
                       capture_ours, cudnn_module, grads_of, leaves_of,
                       make_data, make_weights, module_forward, set_precision,
                       to_bf16, worst_err, CONFIGS)


def replay_ms(graph, reps):
    """Median ms of `reps` replays, each synchronised."""
    graph.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        graph.replay()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts)


def reps_for(graph):
    t0 = time.perf_counter()
    graph.replay()
    torch.cuda.synchronize()
    one = time.perf_counter() - t0
    return max(5, min(50, int(1.0 / max(one, 1e-6))))


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('variants', nargs='+', help='NAME=DIR')
    p.add_argument('--configs', default='')
    p.add_argument('--rounds', type=int, default=3)
    p.add_argument('--json')
    a = p.parse_args()
    variants = [v.split('=', 1) for v in a.variants]
    first = variants[0][1]
    names = sorted(os.path.basename(f)[:-3] for f in glob.glob(os.path.join(first, '*.so')))
    keep = set(a.configs.split(',')) if a.configs else None
    rows = []
    for name in names:
        cfg_cell, prec = name.rsplit('_', 1)
        cfg, cell = cfg_cell.split('_', 1)
        if cfg not in CONFIGS or (keep and cfg not in keep):
            continue
        set_precision(prec)
        x, h0, c0, cots = make_data(cfg, 'cuda', 0)
        ws = make_weights(cfg, cell, 'cuda', 1)
        args = [x, h0] + ([c0] if cell != 'cho_gru' else []) + ws
        graphs, ref, errs = {}, None, {}
        for vname, d in variants:
            net = GradNet(os.path.join(d, name + '.so'), device='cuda')
            call_args = args + cots[:net.n_results]
            grads = [g.clone() for g in net.call('forward_grad', call_args)]
            if ref is None:
                ref = grads
            errs[vname] = worst_err(grads, ref)
            graph, outs = capture_ours(
                lambda: net.call('forward_grad', call_args, check=False))
            graphs[vname] = (graph, outs, net)
        # cuDNN's own cell beside ours: the LSTM's weights as nn.LSTM
        # takes them; the peephole LSTM and Cho's GRU compare with its
        # LSTM / GRU on weights of the same sizes.
        kind = 'gru' if cell == 'cho_gru' else 'lstm'
        ref_ws = ws if cell != 'peephole' else make_weights(cfg, 'lstm', 'cuda', 1)
        mod = cudnn_module(kind, cfg, ref_ws, 'cuda')
        cx, ch0, cc0, ccots = x, h0, c0, cots
        if prec == 'bf16':
            # cuDNN at the same precision (as train_gpu.py).
            mod, cx, ch0, cc0, ccots = to_bf16(mod, x, h0, c0, cots)
        leaves = leaves_of([cx, ch0] + ([cc0] if kind == 'lstm' else []))
        params = [p for l in range(CONFIGS[cfg][0]) for p in
                  (getattr(mod, f'{n}_l{l}') for n in
                   ('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'))]
        forward = module_forward(mod, kind, leaves)
        step = autograd_step(forward, leaves + params, ccots)
        step.forward, step.cots = forward, ccots
        cudnn_graph, _ = capture_autograd(step, leaves + params)
        all_graphs = [(v, g[0]) for v, g in graphs.items()] + [('cudnn', cudnn_graph)]
        reps = {v: reps_for(g) for v, g in all_graphs}
        times = {v: [] for v, _ in all_graphs}
        for _ in range(a.rounds):
            for v, g in all_graphs:
                times[v].append(replay_ms(g, reps[v]))
        row = dict(cfg=cfg, cell=cell, precision=prec,
                   ms={v: min(ts) for v, ts in times.items()},
                   rounds={v: ts for v, ts in times.items()},
                   grad_vs_first={v: e for v, e in errs.items()})
        rows.append(row)
        cells = '  '.join(f'{v} {row["ms"][v]:8.3f}' for v, _ in all_graphs)
        print(f'{cfg:9} {cell:8} {prec:4}  {cells}  '
              f'err {max(errs.values()):.1e}', flush=True)
        # The graphs and their outputs go before each library gives its
        # cached buffers back.
        nets = [g[2] for g in graphs.values()]
        graphs.clear()
        del all_graphs, cudnn_graph
        torch.cuda.synchronize()
        for net in nets:
            net.release()
        torch.cuda.synchronize()
        if a.json:
            with open(a.json, 'w') as f:
                json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
