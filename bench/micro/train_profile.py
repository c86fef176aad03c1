#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where a training step's GPU time goes, kernel by kernel, for any
configuration of bench/train_gpu.py: our @forward_train + @forward_backward
and cuDNN's forward + .backward(), each captured in a CUDA graph as
train_gpu.py captures it, replayed under torch.profiler (GPU machine).

  train_profile.py LIB.so [LIB.so ...] --config appleyard [--cell lstm]
                   [--precision fp32] [--replays 5] [--top 25]

LIB.so: libraries of bench/compile_train.sh (CONFIG_CELL_PREC.so, with its
.sig.json). Prints per implementation the graph's replay time, its GPU busy
time (the sum of its kernels' times: kernels that overlap count each) and
its kernels, the longest first.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..'))
import torch  # noqa: E402

import train_gpu as tg  # noqa: E402
from profile_gpu import cuda_kernel_times  # noqa: E402


def replay_ms(graph, reps=20):
    graph.replay()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        graph.replay()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3 / reps


def report(name, graph, replays, top):
    ms = replay_ms(graph)
    kernels = cuda_kernel_times(graph.replay, replays, width=80)
    busy = sum(k[1] for k in kernels.values()) / replays / 1e3
    count = sum(k[0] for k in kernels.values()) / replays
    print(f'== {name}: replay {ms:.3f} ms, GPU busy {busy:.3f} ms, {count:.0f} kernels')
    for kname, (calls, us) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f'   {calls / replays:6.1f} x {us / replays / 1e3:8.4f} ms  {kname}')
    sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('libraries', nargs='+')
    p.add_argument('--config', default='appleyard', choices=sorted(tg.CONFIGS))
    p.add_argument('--cell', default='lstm', choices=sorted(tg.GATES))
    p.add_argument('--precision', default='fp32', choices=['fp32', 'tf32'])
    p.add_argument('--replays', type=int, default=5)
    p.add_argument('--top', type=int, default=25)
    p.add_argument('--no-cudnn', action='store_true')
    a = p.parse_args()
    tg.set_precision(a.precision)
    x, h0, c0, cots = tg.make_data(a.config, 'cuda', 0)
    ws = tg.make_weights(a.config, a.cell, 'cuda', 1)
    args = [x, h0] + ([c0] if a.cell != 'cho_gru' else []) + ws
    for path in a.libraries:
        net = tg.GradNet(path, device='cuda')
        cot = cots[:net.n_results]

        def train(net=net, cot=cot):
            tr = net.call('forward_train', args, check=False)
            return tr + net.call('forward_backward', args + tr + cot, check=False)
        graph, outs = tg.capture_ours(train)
        report(f'ours {os.path.basename(path)}', graph, a.replays, a.top)
        del graph, outs
        torch.cuda.synchronize()
        net.release()
        del net
    if not a.no_cudnn:
        kind = 'gru' if a.cell == 'cho_gru' else 'lstm'
        mod = tg.cudnn_module(kind, a.config, tg.make_weights(a.config, 'lstm' if kind == 'lstm'
                                                              else a.cell, 'cuda', 1), 'cuda')
        leaves = tg.leaves_of([x, h0] + ([c0] if kind == 'lstm' else []))
        params = [q for q in mod.parameters()]

        forward = tg.module_forward(mod, kind, leaves)
        step = tg.autograd_step(forward, leaves + params, cots)
        step.forward, step.cots = forward, cots
        graph, _ = tg.capture_autograd(step, leaves + params)
        report(f'cuDNN nn.{kind.upper()}', graph, a.replays, a.top)


if __name__ == '__main__':
    main()
