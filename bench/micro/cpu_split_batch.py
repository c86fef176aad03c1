#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Our networks on the CPU with each layer's batch in parts, a thread each
for the whole sequence (lstmc's split_batch, lstm-split-batch: the
default), against the batch whole (split_batch=False: the products and
cells split among the threads at every step), beside nn.LSTM (and nn.GRU
for Cho's GRU, whose reset gate PyTorch applies after the product: the
closest cell, not the same one), in one process; the rows alternate
within each round, so that the machine's drift hits them alike.

  cpu_split_batch.py CONFIG THREADS[,THREADS...] [--cells lstm,peephole,cho_gru]
                     [--rounds 20] [--calls 3] [--also 'lstm-optimize;...']

CONFIG: a configuration of bench/cpu_bench.py (stack3, charrnn, appleyard).
Ours: lstmc, pre-passes lstm-optimize{wavefront=0}, each row checked
against the other form's outputs. PyTorch under torch.no_grad(),
torch.set_num_threads(THREADS). Each round times CALLS consecutive calls
of every row; printed per row: the fastest call and the 20th percentile
of all, ms, and the ratio of the 20th percentiles to PyTorch's. --also:
more rows of ours, split, with other pre-passes (';'-separated; e.g.
lstm-optimize, whose wavefront runs a stack's layers side by side).
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import cpu_bench  # noqa: E402
import lstmc as lc  # noqa: E402


def torch_model(cell, L, H, I, params):
    if cell == 'cho_gru':
        return torch.nn.GRU(I, H, L)
    # The LSTM's weights (the peephole LSTM's nearest PyTorch network is
    # nn.LSTM of the same size).
    return cpu_bench.nn_lstm(L, H, I, params) if cell == 'lstm' else torch.nn.LSTM(I, H, L)


def run(config, threads, cells, rounds, calls_per_round, also=()):
    L, H, B, T, I = cpu_bench.CONFIGS[config]
    torch.set_num_threads(threads)
    x = np.random.default_rng(0).standard_normal((T, B, I)).astype(np.float32)
    xt = torch.from_numpy(x)
    calls = {}
    for cell in cells:
        fn, kw = cpu_bench.CELLS[cell]
        net = lc.Network(fn, input_size=I, hidden=H, num_layers=L, **kw)
        params = net.init_params(seed=1)
        outs = {}
        forms = [(f'{cell} split', 'lstm-optimize{wavefront=0}', True),
                 (f'{cell} whole', 'lstm-optimize{wavefront=0}', False)]
        forms += [(f'{cell} {pre}', pre, True) for pre in also]
        for name, pre, split in forms:
            compiled = net.compile(target='cpu', pre_passes=pre, split_batch=split)
            compiled.set_threads(threads)
            calls[name] = compiled.bind(params)
            outs[name] = np.asarray(calls[name](x)[0])
        first = outs[f'{cell} whole']
        print(f'{cell}: largest difference to the whole form ' + ', '.join(
            f'{np.abs(o - first).max() / np.abs(first).max():.1e}' for o in outs.values()))
        model = torch_model(cell, L, H, I, params)

        def torch_call(_, model=model):
            with torch.no_grad():
                model(xt)
        calls[f'{cell} nn.{type(model).__name__}'] = torch_call
    samples = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            for _ in range(calls_per_round):
                start = time.perf_counter()
                call(x)
                samples[name].append(time.perf_counter() - start)
    print(f'{config} (L, H, B, T, I = {L}, {H}, {B}, {T}, {I}), {threads} thread(s), '
          f'{rounds} rounds of {calls_per_round} calls: fastest, 20th percentile, ms, '
          f'x PyTorch (20th percentiles)')
    p20 = {name: float(np.percentile(t, 20)) for name, t in samples.items()}
    for name, t in samples.items():
        cell = name.split()[0]
        ref = next(v for k, v in p20.items() if k.startswith(cell + ' nn.'))
        print(f'  {1e3 * min(t):8.2f} {1e3 * p20[name]:8.2f} {p20[name] / ref:6.2f}  {name}')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('config', choices=sorted(cpu_bench.CONFIGS))
    p.add_argument('threads', help='comma-separated thread counts')
    p.add_argument('--cells', default='lstm')
    p.add_argument('--rounds', type=int, default=20)
    p.add_argument('--calls', type=int, default=3)
    p.add_argument('--also', default='', help="';'-separated pre-passes of more split rows")
    args = p.parse_args()
    for threads in args.threads.split(','):
        run(args.config, int(threads), args.cells.split(','), args.rounds, args.calls,
            [a for a in args.also.split(';') if a])


if __name__ == '__main__':
    main()
