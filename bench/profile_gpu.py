#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where the time of a compiled network goes, kernel by kernel (GPU machine).

  profile_gpu.py gpu-build/bench/deepbench_lstm_all.so [...]

Runs each library (bench/compile.sh names it CONFIG_CELL_LEVEL.so, CELL
lstm, peephole or cho_gru) on random inputs of its configuration under
torch.profiler and prints, per kernel name, the launches per call and the
GPU time per call, beside the wall time of one call. The kernels of the
generated code, cuBLAS's and any copies all show, since the profiler sees
every kernel of the process.
"""
import collections
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'GPU'))
from compiled_net import CompiledNet  # noqa: E402
from run_gpu import CONFIGS, median_ms  # noqa: E402


def network_args(cfg, cell):
    """Random inputs of bench/make_network.py's network of `cell` (lstm,
    peephole or cho_gru) at configuration `cfg`: x, h0 (, c0), then per
    layer W, R, bW, bR (and the peephole LSTM's [3, H] peepholes)."""
    L, H, B, T, I = CONFIGS[cfg]
    gates, states = (3, 1) if cell == 'cho_gru' else (4, 2)
    k = 1 / H ** 0.5
    args = [torch.rand(T, B, I, device='cuda') * 2 - 1]
    args += [torch.rand(L, B, H, device='cuda') * 2 - 1 for _ in range(states)]
    for l in range(L):
        il = I if l == 0 else H
        args += [(torch.rand(*s, device='cuda') * 2 - 1) * k
                 for s in ((gates * H, il), (gates * H, H), (gates * H,), (gates * H,))]
        if cell == 'peephole':
            args.append((torch.rand(3, H, device='cuda') * 2 - 1) * 0.1)
    return args, [3] * (1 + states)


def cuda_kernel_times(run, calls, width=60):
    """{kernel name (its first `width` characters): [launches, µs]} of the
    CUDA kernels (and copies) of `calls` calls of run(), under torch.profiler."""
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            run()
        torch.cuda.synchronize()
    stats = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            s = stats[e.name[:width]]
            s[0] += 1
            s[1] += e.device_time_total
    return stats


def main():
    torch.backends.cuda.matmul.allow_tf32 = False
    for path in sys.argv[1:]:
        name = os.path.basename(path)
        cfg = name.split('_')[0]
        cell = next((c for c in ('cho_gru', 'peephole', 'lstm')
                     if name.startswith(f'{cfg}_{c}_')), None)
        if cfg not in CONFIGS or cell is None:
            sys.exit(f'{path}: expected CONFIG_CELL_LEVEL.so (bench/compile.sh) with a cell '
                     'of lstm, peephole, cho_gru')
        net = CompiledNet(path)
        args, ranks = network_args(cfg, cell)
        run = lambda: net(args, ranks, check=False)  # noqa: E731
        wall = median_ms(run)
        calls = 5
        stats = cuda_kernel_times(run, calls)
        gpu = sum(s[1] for s in stats.values()) / calls / 1e3
        print(f'== {os.path.basename(path)}: wall {wall:.3f} ms/call, '
              f'GPU busy {gpu:.3f} ms/call')
        for name, (n, us) in sorted(stats.items(), key=lambda kv: -kv[1][1])[:8]:
            print(f'   {n // calls:6d} x  {us / calls / 1e3:8.3f} ms  {name}')


if __name__ == '__main__':
    main()
