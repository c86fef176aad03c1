#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Our LSTM on the CPU compiled with several pre-pass pipelines, beside
nn.LSTM, in one process (the rows alternate, so the machine's drift hits
them alike).

  cpu_pre_passes.py CONFIG THREADS PIPELINE [PIPELINE ...]

CONFIG: a configuration of bench/cpu_bench.py (stack3, charrnn, appleyard).
Each pipeline's outputs are compared with the first's before timing. Times:
best of 5 rounds of the median of 15 consecutive calls, ms. E.g.

  cpu_pre_passes.py stack3 1 'lstm-optimize{wavefront=0}' 'lstm-optimize{wavefront=0 hoist=0}'
"""
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
import cpu_bench  # noqa: E402


def main():
    if len(sys.argv) < 4:
        raise SystemExit(__doc__)
    config, threads, pipelines = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    L, H, B, T, I = cfg = cpu_bench.CONFIGS[config]
    torch.set_num_threads(threads)
    x = np.random.default_rng(0).standard_normal((T, B, I)).astype(np.float32)
    calls = {}
    for p in pipelines:
        calls[p] = cpu_bench.ours("lstm", cfg, p, threads)[0]
    outs = {p: np.asarray(calls[p](x)[0]) for p in pipelines}
    for p in pipelines[1:]:
        print(f"largest difference to the first pipeline: {p}: "
              f"{np.abs(outs[p] - outs[pipelines[0]]).max():.1e}")
    reference = torch.nn.LSTM(I, H, L)
    xt = torch.from_numpy(x)
    calls["nn.LSTM"] = lambda _: reference(xt)
    best = {k: float("inf") for k in calls}
    with torch.no_grad():
        for _ in range(5):
            for k, f in calls.items():
                for _ in range(3):
                    f(x)
                times = []
                for _ in range(15):
                    t = time.perf_counter()
                    f(x)
                    times.append(time.perf_counter() - t)
                best[k] = min(best[k], float(np.median(times)))
    print(f"{config}, {threads} thread(s), ms:")
    for k, v in best.items():
        print(f"{v * 1e3:9.2f}  {k}")


if __name__ == "__main__":
    main()
