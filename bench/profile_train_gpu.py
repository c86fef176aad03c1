#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the time of a compiled training step goes, kernel by kernel (GPU machine).

  profile_train_gpu.py gpu-build/train/appleyard_lstm_fp32.so [...]

Runs @forward_grad of each library (bench/compile_train.sh names it
CONFIG_CELL_PREC.so) on bench/train_gpu.py's inputs under torch.profiler and
prints, per kernel name, the launches per call and the GPU time per call,
beside the wall time of one call (bench/profile_gpu.py does the same for
the forward libraries).
"""
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from profile_gpu import cuda_kernel_times  # noqa: E402
from run_gpu import median_ms  # noqa: E402
from train_gpu import GradNet, make_data, make_weights, set_precision  # noqa: E402


def main():
    top = int(os.environ.get('TOP', '10'))
    for path in sys.argv[1:]:
        cfg, cell, prec = os.path.basename(path)[:-len('.so')].rsplit('_', 2)
        if cell == 'gru':  # cho_gru splits as cho, gru
            cfg, cell = cfg.rsplit('_', 1)[0], 'cho_gru'
        set_precision(prec)
        net = GradNet(path, device='cuda')
        x, h0, c0, cots = make_data(cfg, 'cuda', 0)
        ws = make_weights(cfg, cell, 'cuda', 1)
        args = [x, h0] + ([c0] if cell != 'cho_gru' else []) + ws
        call = args + cots[:net.n_results]
        run = lambda: net.call('forward_grad', call, check=False)  # noqa: E731
        wall = median_ms(run)
        calls = 5
        stats = cuda_kernel_times(run, calls)
        gpu = sum(s[1] for s in stats.values()) / calls / 1e3
        launches = sum(s[0] for s in stats.values()) // calls
        print(f'== {os.path.basename(path)}: wall {wall:.3f} ms/call, '
              f'GPU busy {gpu:.3f} ms/call, {launches} launches/call')
        for name, (n, us) in sorted(stats.items(), key=lambda kv: -kv[1][1])[:top]:
            print(f'   {n // calls:6d} x  {us / calls / 1e3:8.3f} ms  {name}')


if __name__ == '__main__':
    main()
