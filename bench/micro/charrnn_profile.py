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

Prints per implementation the GPU busy time per iteration (the sum of its
kernels' times: kernels that overlap count each) and its kernels, the
longest first. docs/charrnn.md, "Where an iteration's time goes".
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'python', 'examples'))
sys.path.insert(0, os.path.join(HERE, '..'))
import torch  # noqa: E402

import charrnn  # noqa: E402
import charrnn_bench as cb  # noqa: E402
import lstmc as lc  # noqa: E402
from profile_gpu import cuda_kernel_times  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('networks', help='the --prepare directory of charrnn_bench.py')
    p.add_argument('--cells', default='lstm', help='lstmc cells (charrnn_bench.py names)')
    p.add_argument('--replays', type=int, default=10)
    p.add_argument('--top', type=int, default=30)
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
    for name, make in rows:
        torch.manual_seed(0)
        model = make().cuda()
        opt = torch.optim.Adam(model.parameters(), lr=cb.LR, capturable=True)
        step = cb.step_fn(model, opt, V)
        x, y = (t.cuda() for t in data.train(0))
        runner = lc.torch_module.GraphedStep(step, x, y, zero_grad=opt.zero_grad)
        for _ in range(20):
            runner(x, y)
        torch.cuda.synchronize()
        kernels = cuda_kernel_times(lambda: runner(x, y), a.replays, width=80)
        n = a.replays
        busy = sum(k[1] for k in kernels.values()) / n / 1e3
        count = sum(k[0] for k in kernels.values()) / n
        print(f'== {name}: GPU busy {busy:.3f} ms/iteration, {count:.0f} kernels')
        for kname, (calls, us) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:a.top]:
            print(f'   {calls / n:5.1f} x {us / n / 1e3:8.4f} ms  {kname}')
        del runner, model, opt
        lc.torch_module.release_captured()


if __name__ == '__main__':
    main()
