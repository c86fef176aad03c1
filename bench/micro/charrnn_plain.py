#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""char-rnn's training iteration called plainly (no CUDA graph), an lstmc
network and cuDNN's nn.LSTM alternating: per row the time of ROUNDS x 300
iterations after a warm-up, ms an iteration, and how much of it the host
took to enqueue the work (equal to the whole where the host is the bound).

  # there (PYTHONPATH=python), on the libraries of charrnn_bench.py --prepare
  python3 bench/micro/charrnn_plain.py gpu-build/DIR [--cell lstm] [--rounds 2]
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, '..', '..', 'python', 'examples'))
import torch  # noqa: E402

import charrnn  # noqa: E402
import charrnn_bench as cb  # noqa: E402
import lstmc as lc  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('networks', help='the --prepare directory of charrnn_bench.py')
    p.add_argument('--cell', default='lstm')
    p.add_argument('--rounds', type=int, default=2)
    p.add_argument('--iters', type=int, default=300)
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
    x, y = (t.cuda() for t in data.train(0))
    for _ in range(a.rounds):
        for name, make in rows:
            torch.manual_seed(0)
            model = make().cuda()
            opt = torch.optim.Adam(model.parameters(), lr=cb.LR)
            step = cb.step_fn(model, opt, V)
            for _ in range(20):
                step(x, y)
            torch.cuda.synchronize()
            t = time.perf_counter()
            for _ in range(a.iters):
                step(x, y)
            enqueued = time.perf_counter() - t
            torch.cuda.synchronize()
            total = time.perf_counter() - t
            print(f'{name}: {total / a.iters * 1e3:.3f} ms/iteration, '
                  f'host enqueue {enqueued / a.iters * 1e3:.3f}')


if __name__ == '__main__':
    main()
