#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A training step (@forward_train, then @forward_backward on what it
saved) of an example's gradient library, timed as plain calls (median of
15), for two builds of it side by side, at T = 50 and several batches.

Here: two libraries of `lstm-compile --gradients` (scripts/gpu-compile-grad.sh
persistent), each with its NAME.sig.json, into DIR_A and DIR_B.
There:
  python3 bench/micro/train_step_ab.py NAME DIR_A DIR_B [--batches 1,16,64]
"""
import argparse
import os
import sys
import time

import numpy as np
import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
sys.path[:0] = [os.path.join(ROOT, 'test', 'GPU'), os.path.join(ROOT, 'test', 'Integration')]
import reference  # noqa: E402
from grad_net import GradNet  # noqa: E402


def step_ms(lib, name, T, B):
    net = GradNet(lib)
    rng = np.random.default_rng(1)
    inputs = reference.make_inputs(name, T, B, rng)
    args = [torch.from_numpy(a).cuda() for a in inputs]
    trained = net.call('forward_train', args)
    results, saved = trained[:net.n_results], trained[net.n_results:]
    cots = [torch.from_numpy(rng.standard_normal(tuple(r.shape)).astype(np.float32)).cuda()
            for r in results]

    def step():
        tr = net.call('forward_train', args, check=False)
        net.call('forward_backward', args + tr[:net.n_results] + tr[net.n_results:] + cots,
                 check=False)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    ts = []
    for _ in range(15):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1e3)
    return sorted(ts)[len(ts) // 2]


def main():
    p = argparse.ArgumentParser()
    p.add_argument('name')
    p.add_argument('dir_a')
    p.add_argument('dir_b')
    p.add_argument('--batches', default='1,16,64,107,128,192,256')
    p.add_argument('--steps', type=int, default=50)
    a = p.parse_args()
    print(f"{'B':>5} {'A (ms)':>9} {'B (ms)':>9}")
    for B in [int(b) for b in a.batches.split(',')]:
        ms = [step_ms(os.path.join(d, a.name + '.so'), a.name, a.steps, B)
              for d in (a.dir_a, a.dir_b)]
        print(f"{B:>5} {ms[0]:9.3f} {ms[1]:9.3f}", flush=True)


if __name__ == '__main__':
    main()
