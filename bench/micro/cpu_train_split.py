#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A training step on the CPU (forward and backward through
lstmc.torch_module, the compiled gradient functions) with each layer's
batch in parts, a thread each (split_batch, the default), against the
batch whole, for the pre-passes given, beside nn.LSTM's forward and
backward at the same thread count; the rows alternate within each round.

  cpu_train_split.py CONFIG THREADS[,THREADS...] [--pre-passes 'P;Q'] [--rounds 10]

CONFIG: a configuration of bench/cpu_bench.py. The LSTM cell, the same
weights on both sides; a step is the loss sum(y · g) for a fixed random g,
its backward, and zeroing the gradients. Printed per row: the fastest step
and the 20th percentile, ms, and its ratio to nn.LSTM's.
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


def run(config, threads, pre_passes, rounds):
    L, H, B, T, I = cpu_bench.CONFIGS[config]
    torch.set_num_threads(threads)
    fn, kw = cpu_bench.CELLS['lstm']
    net = lc.Network(fn, input_size=I, hidden=H, num_layers=L, **kw)
    params = net.init_params(seed=1)
    rng = np.random.default_rng(0)
    x = torch.from_numpy(rng.standard_normal((T, B, I)).astype(np.float32))
    g = torch.from_numpy(rng.standard_normal((T, B, H)).astype(np.float32))
    steps = {}
    grads = {}
    for pre in pre_passes:
        for split in (True, False):
            module = lc.torch_module(net, params, target='cpu', pre_passes=pre,
                                     split_batch=split)
            module.compiled.set_threads(threads)

            def step(module=module):
                y = module(x)[0]
                (y * g).sum().backward()
                out = [p.grad.clone() for p in module.parameters()]
                module.zero_grad()
                return out
            name = f"{pre} {'split' if split else 'whole'}"
            steps[name] = step
            grads[name] = step()
    first = next(iter(grads.values()))
    for name, gs in grads.items():
        d = max(float((a - b).abs().max() / b.abs().max()) for a, b in zip(gs, first))
        print(f'{name}: largest gradient difference to the first row {d:.1e}')
    model = cpu_bench.nn_lstm(L, H, I, params)

    def torch_step():
        y = model(x)[0]
        (y * g).sum().backward()
        model.zero_grad()
    steps['nn.LSTM'] = torch_step
    samples = {name: [] for name in steps}
    for _ in range(rounds):
        for name, step in steps.items():
            for _ in range(3):
                start = time.perf_counter()
                step()
                samples[name].append(time.perf_counter() - start)
    ref = float(np.percentile(samples['nn.LSTM'], 20))
    print(f'{config} training step (L, H, B, T, I = {L}, {H}, {B}, {T}, {I}), {threads} '
          f'thread(s), {rounds} rounds of 3 steps: fastest, 20th percentile, ms, x nn.LSTM')
    for name, t in samples.items():
        p20 = float(np.percentile(t, 20))
        print(f'  {1e3 * min(t):8.2f} {1e3 * p20:8.2f} {p20 / ref:6.2f}  {name}')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('config', choices=sorted(cpu_bench.CONFIGS))
    p.add_argument('threads', help='comma-separated thread counts')
    p.add_argument('--pre-passes', default='lstm-optimize;lstm-optimize{wavefront=0}')
    p.add_argument('--rounds', type=int, default=10)
    args = p.parse_args()
    for threads in args.threads.split(','):
        run(args.config, int(threads), args.pre_passes.split(';'), args.rounds)


if __name__ == '__main__':
    main()
