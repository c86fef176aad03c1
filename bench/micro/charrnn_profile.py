#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where one char-rnn training iteration's GPU time goes, kernel by kernel:
the whole step (forward, loss, backward, Adam) captured in a CUDA graph as
python/examples/charrnn_bench.py times it, replayed under torch.profiler, for
an lstmc network and cuDNN's nn.LSTM side by side.

  # here: the libraries
  python3 python/examples/charrnn_bench.py --prepare gpu-build/DIR --persistent
  # there (PYTHONPATH=python)
  python3 bench/micro/charrnn_profile.py gpu-build/DIR [--cells lstm,peephole] [--top 30]
  python3 bench/micro/charrnn_profile.py gpu-build/DIR --timeline
  python3 bench/micro/charrnn_profile.py gpu-build/DIR --plain 2
  python3 bench/micro/charrnn_profile.py gpu-build/DIR --host-profile 25

Prints per implementation the GPU busy time per iteration (the sum of its
kernels' times: kernels that overlap count each) and its kernels, the
longest first. docs/charrnn.md, "Where an iteration's time goes".
--timeline: one replay's kernels in the order the GPU ran them, each with
its start, its duration and the idle time before it (negative where it
overlaps the one before, on another stream), µs, then the replay's wall
and idle time: what runs one after another. --plain ROUNDS: the step
called plainly instead (no graph, no profiler), the rows alternating
ROUNDS times, ms an iteration over 300 and how much of it the host took to
enqueue the work (the whole of it where the host is the bound).
--host-profile TOP: the plain step under cProfile, the TOP functions by
their own host time (a library's calls, PyTorch's operators and the Python
around them), µs an iteration: where a host-bound step's time goes.
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'python', 'examples'))
sys.path.insert(0, os.path.join(HERE, '..'))
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import charrnn  # noqa: E402
import charrnn_bench as cb  # noqa: E402
import lstmc as lc  # noqa: E402
from profile_gpu import cuda_kernel_times  # noqa: E402


def kernel_summary(name, runner, a):
    kernels = cuda_kernel_times(runner, a.replays, width=80)
    n = a.replays
    busy = sum(k[1] for k in kernels.values()) / n / 1e3
    count = sum(k[0] for k in kernels.values()) / n
    print(f'== {name}: GPU busy {busy:.3f} ms/iteration, {count:.0f} kernels')
    for kname, (calls, us) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:a.top]:
        print(f'   {calls / n:5.1f} x {us / n / 1e3:8.4f} ms  {kname}')


def timeline(name, runner):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        runner()
        torch.cuda.synchronize()
    events = sorted((e for e in prof.events()
                     if e.device_type == torch.autograd.DeviceType.CUDA),
                    key=lambda e: e.time_range.start)
    t0 = events[0].time_range.start
    end, idle = t0, 0.0
    print(f'== {name}: {len(events)} kernels')
    for e in events:
        start, stop = e.time_range.start, e.time_range.end
        idle += max(start - end, 0.0)
        print(f'{start - t0:8.1f} {stop - start:7.1f} idle {start - end:6.1f}  {e.name[:80]}')
        end = max(end, stop)
    print(f'   wall {end - t0:.1f} us, idle {idle:.1f} us')


def plain(name, step, iters=300):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(iters):
        step()
    enqueued = time.perf_counter() - t
    torch.cuda.synchronize()
    total = time.perf_counter() - t
    print(f'{name}: {total / iters * 1e3:.3f} ms/iteration, '
          f'host enqueue {enqueued / iters * 1e3:.3f}')


def host_profile(name, step, top, iters=200):
    import cProfile
    import pstats
    torch.cuda.synchronize()
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(iters):
        step()
    prof.disable()
    torch.cuda.synchronize()
    stats = pstats.Stats(prof)
    total = stats.total_tt / iters * 1e6
    print(f'== {name}: {total:.0f} us an iteration under the profiler (own time of each; '
          'cumulative)')
    rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])[:top]
    for (file, line, fn), (_, calls, tt, ct, _) in rows:
        where = f'{os.path.basename(file)}:{line}' if line else ''
        print(f'  {tt / iters * 1e6:8.1f} {ct / iters * 1e6:8.1f} {calls / iters:6.1f}x '
              f'{fn[:60]} {where}')


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('networks', help='the --prepare directory of charrnn_bench.py')
    p.add_argument('--cells', default='lstm', help='lstmc cells (charrnn_bench.py names)')
    p.add_argument('--replays', type=int, default=10)
    p.add_argument('--top', type=int, default=30)
    p.add_argument('--timeline', action='store_true')
    p.add_argument('--plain', type=int, default=0, metavar='ROUNDS')
    p.add_argument('--host-profile', type=int, default=0, metavar='TOP')
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    text = charrnn.load_shakespeare(os.path.join(a.networks, 'data'), fetch=False)
    data = charrnn.Batches(text, cb.B, cb.T)
    V = data.vocab

    def ours(cell):
        compiled, _ = charrnn.compiled_network(cb.Args(cell, a.networks, hidden=cb.H), V, 'cuda')
        return lambda: cb.Logits(charrnn.CharRNN(lc.torch_module(compiled), cb.H, V))

    def cudnn():
        return lambda: cb.Logits(charrnn.CharRNN(torch.nn.LSTM(V, cb.H, cb.L), cb.H, V))

    rows = [(f'lstmc {c}', ours(c)) for c in a.cells.split(',')] + [('cuDNN nn.LSTM', cudnn())]
    x, y = (t.cuda() for t in data.train(0))
    plainly = a.plain or a.host_profile
    for name, make in rows * max(a.plain, 1):
        torch.manual_seed(0)
        model = make().cuda()
        opt = torch.optim.Adam(model.parameters(), lr=cb.LR, capturable=not plainly)
        step = cb.step_fn(model, opt, V)
        if plainly:
            for _ in range(20):
                step(x, y)
            if a.host_profile:
                host_profile(name, lambda: step(x, y), a.host_profile)
            else:
                plain(name, lambda: step(x, y))
            continue
        runner = lc.torch_module.GraphedStep(step, x, y, zero_grad=opt.zero_grad)
        for _ in range(20):
            runner(x, y)
        torch.cuda.synchronize()
        if a.timeline:
            timeline(name, lambda: runner(x, y))
        else:
            kernel_summary(name, lambda: runner(x, y), a)
        del runner, model, opt
        lc.torch_module.release_captured()


if __name__ == '__main__':
    main()
