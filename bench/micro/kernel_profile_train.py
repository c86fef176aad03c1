#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Where a training library's GPU time goes, kernel by kernel (GPU machine).

For each configuration and cell, the library DIR/CONFIG_CELL_PREC.so of
bench/compile_train.sh runs its @forward_grad and its @forward on
bench/train_gpu.py's data under torch.profiler (five plain calls after
three to warm up); printed per function: the GPU time and launches of a
call, the part in cuBLAS's kernels, and the ten kernels that take most.

  python3 bench/micro/kernel_profile_train.py DIR --configs appleyard
      [--cells lstm,cho_gru] [--precision fp32]
"""
import argparse
import collections
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from train_gpu import GradNet, make_data, make_weights, set_precision  # noqa: E402

CUBLAS = ('gemm', 'sm90', 'cutlass', 'xmma', 'splitk')


def profile_calls(net, fn, args, calls=5):
    """{kernel name: [launches, µs]} over `calls` calls of `fn`."""
    for _ in range(3):
        net.call(fn, args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            net.call(fn, args)
        torch.cuda.synchronize()
    kernels = collections.defaultdict(lambda: [0, 0.0])
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            kernels[e.name[:70]][0] += 1
            kernels[e.name[:70]][1] += e.device_time
    return kernels


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('dir')
    p.add_argument('--configs', default='appleyard')
    p.add_argument('--cells', default='lstm,cho_gru')
    p.add_argument('--precision', default='fp32')
    a = p.parse_args()
    calls = 5
    for cfg in a.configs.split(','):
        for cell in a.cells.split(','):
            set_precision(a.precision)
            x, h0, c0, cots = make_data(cfg, 'cuda', 0)
            ws = make_weights(cfg, cell, 'cuda', 1)
            args = [x, h0] + ([c0] if cell != 'cho_gru' else []) + ws
            net = GradNet(os.path.join(a.dir, f'{cfg}_{cell}_{a.precision}.so'), device='cuda')
            for fn, fn_args in (('forward_grad', args + cots[:net.n_results]), ('forward', args)):
                kernels = profile_calls(net, fn, fn_args, calls)
                total = sum(v[1] for v in kernels.values()) / calls
                launches = sum(v[0] for v in kernels.values()) / calls
                gemm = sum(v[1] for k, v in kernels.items()
                           if any(s in k.lower() for s in CUBLAS)) / calls
                print(f'== {cfg} {cell} {fn}: GPU {total / 1000:.3f} ms in {launches:.0f} '
                      f'launches; cuBLAS {gemm / 1000:.3f} ms')
                for name, (n, us) in sorted(kernels.items(), key=lambda kv: -kv[1][1])[:10]:
                    print(f'   {n / calls:6.0f} x {us / n:7.1f} us = {us / calls / 1000:6.3f} ms  {name}')
            net.release()


if __name__ == '__main__':
    main()
