#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""One char-rnn training iteration's kernels in the order the GPU ran them:
the whole step (forward, loss, backward, Adam) captured in a CUDA graph as
python/examples/charrnn_bench.py times it, replayed under torch.profiler, for
an lstmc network and cuDNN's nn.LSTM. Per kernel: its start from the
replay's first kernel, its duration and the idle time before it (negative
where it overlaps the one before, on another stream), µs; then the
replay's wall time and the idle time in it. Where charrnn_profile.py sums
each kernel's time, this shows what runs one after another.

  # here: the libraries
  python3 python/examples/charrnn_bench.py --prepare gpu-build/DIR --persistent
  # there (PYTHONPATH=python)
  python3 bench/micro/charrnn_timeline.py gpu-build/DIR [--cell lstm]
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'python', 'examples'))
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import charrnn  # noqa: E402
import charrnn_bench as cb  # noqa: E402
import lstmc as lc  # noqa: E402


def replay_kernels(runner, x, y):
    """The CUDA events of one replay of `runner`, by start time."""
    for _ in range(30):
        runner(x, y)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        runner(x, y)
        torch.cuda.synchronize()
    return sorted((e for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA),
                  key=lambda e: e.time_range.start)


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('networks', help='the --prepare directory of charrnn_bench.py')
    p.add_argument('--cell', default='lstm', help='the lstmc cell (charrnn_bench.py names)')
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    text = charrnn.load_shakespeare(os.path.join(a.networks, 'data'), fetch=False)
    data = charrnn.Batches(text, cb.B, cb.T)
    V = data.vocab
    compiled, _ = charrnn.compiled_network(cb.Args(a.cell, a.networks, hidden=cb.H), V, 'cuda')
    rows = [(f'lstmc {a.cell}',
             lambda: cb.Logits(charrnn.CharRNN(lc.torch_module(compiled), cb.H, V))),
            ('cuDNN nn.LSTM',
             lambda: cb.Logits(charrnn.CharRNN(torch.nn.LSTM(V, cb.H, cb.L), cb.H, V)))]
    for name, make in rows:
        torch.manual_seed(0)
        model = make().cuda()
        opt = torch.optim.Adam(model.parameters(), lr=cb.LR, capturable=True)
        x, y = (t.cuda() for t in data.train(0))
        runner = lc.torch_module.GraphedStep(cb.step_fn(model, opt, V), x, y,
                                             zero_grad=opt.zero_grad)
        events = replay_kernels(runner, x, y)
        t0 = events[0].time_range.start
        end, idle = t0, 0.0
        print(f'== {name}: {len(events)} kernels')
        for e in events:
            start, stop = e.time_range.start, e.time_range.end
            idle += max(start - end, 0.0)
            print(f'{start - t0:8.1f} {stop - start:7.1f} idle {start - end:6.1f}  {e.name[:80]}')
            end = max(end, stop)
        print(f'   wall {end - t0:.1f} us, idle {idle:.1f} us')
        del runner, model, opt
        lc.torch_module.release_captured()


if __name__ == '__main__':
    main()
