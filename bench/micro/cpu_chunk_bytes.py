#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Our LSTM on the CPU in the forms of its hoisted input projections: whole,
computed a chunk of steps at a time (lstmc's chunk_bytes, lstm-to-cpu's
chunk-bytes), chosen at run time by the thread count (hoist_min_threads,
lstm-hoist-by-threads) or not hoisted, beside nn.LSTM, in one process; the
rows alternate within each round, so that the machine's drift hits them
alike.

  cpu_chunk_bytes.py CONFIG THREADS [--chunks 0,1048576] [--hoist-min-threads 3]
                     [--rounds 40] [--calls 3]

CONFIG: a configuration of bench/cpu_bench.py (stack3, charrnn, appleyard).
Ours: lstmc, pre-passes lstm-optimize{wavefront=0}; the `chunk_bytes=` rows
always hoisted (hoist_min_threads=1), the `hoist_min_threads=` rows whole
(`not hoisted`: hoist=0), each checked against the first row's outputs.
nn.LSTM under torch.no_grad(), torch.set_num_threads(THREADS). Each round
times CALLS consecutive calls of every row; printed per row: the fastest
call and the 20th percentile of all, ms.
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


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('config', choices=sorted(cpu_bench.CONFIGS))
    p.add_argument('threads', type=int)
    p.add_argument('--chunks', default=f'0,{1 << 20}')
    p.add_argument('--hoist-min-threads', default='',
                   help='comma-separated hoist_min_threads of rows with whole projections')
    p.add_argument('--rounds', type=int, default=40)
    p.add_argument('--calls', type=int, default=3)
    args = p.parse_args()
    L, H, B, T, I = cpu_bench.CONFIGS[args.config]
    torch.set_num_threads(args.threads)
    fn, kw = cpu_bench.CELLS['lstm']
    net = lc.Network(fn, input_size=I, hidden=H, num_layers=L, **kw)
    params = net.init_params(seed=1)
    pre = 'lstm-optimize{wavefront=0}'
    rows = {f'chunk_bytes={c}': (pre, dict(chunk_bytes=int(c), hoist_min_threads=1))
            for c in args.chunks.split(',') if c}
    rows.update({f'hoist_min_threads={n}': (pre, dict(hoist_min_threads=int(n)))
                 for n in args.hoist_min_threads.split(',') if n})
    rows['not hoisted'] = ('lstm-optimize{wavefront=0 hoist=0}', {})
    calls = {}
    for name, (pre, options) in rows.items():
        compiled = net.compile(target='cpu', pre_passes=pre, **options)
        compiled.set_threads(args.threads)
        calls[name] = compiled.bind(params)
    x = np.random.default_rng(0).standard_normal((T, B, I)).astype(np.float32)
    first = np.asarray(next(iter(calls.values()))(x)[0])
    for name, call in calls.items():
        diff = np.abs(np.asarray(call(x)[0]) - first).max() / np.abs(first).max()
        print(f'{name}: largest difference to the first row {diff:.1e}')
    model = cpu_bench.nn_lstm(L, H, I, params)
    xt = torch.from_numpy(x)

    def torch_call(_):
        with torch.no_grad():
            model(xt)
    calls['nn.LSTM'] = torch_call
    samples = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            for _ in range(args.calls):
                start = time.perf_counter()
                call(x)
                samples[name].append(time.perf_counter() - start)
    print(f'{args.config} (L, H, B, T, I = {L}, {H}, {B}, {T}, {I}), {args.threads} thread(s), '
          f'{args.rounds} rounds of {args.calls} calls: fastest, 20th percentile, ms')
    for name, t in samples.items():
        print(f'  {1e3 * min(t):8.2f} {1e3 * float(np.percentile(t, 20)):8.2f}  {name}')


if __name__ == '__main__':
    main()
