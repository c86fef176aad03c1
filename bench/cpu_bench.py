#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The CPU benchmark: our compiled networks beside PyTorch on the CPU, one run.

  cpu_bench.py [--configs stack3,charrnn,appleyard] [--cells lstm,peephole,cho_gru]
               [--threads N] [--reps R] [--rounds K] [--json OUT.json]

Forward over the whole sequence (inference: no gradients), float32, the same
number of threads for both (--threads, default: one per core; PyTorch's
torch.set_num_threads, ours CompiledNetwork.set_threads: oneDNN's and OpenBLAS's).
Configurations: examples/stack3.mlir's network (L=3, H=128, B=32, T=50, I=64)
and the charrnn and appleyard rows of shared/docs/BENCHMARKS.md.

- ours: lstmc.Network(cell, ...).compile(target="cpu", pre_passes=PRE) for the
  LSTM (nn.LSTM's layout), the peephole LSTM (Greff's vanilla) and Cho's GRU;
  PRE is --pre-passes (default lstm-optimize without the wavefront, which
  only pays where the GPU runs a diagonal's layers side by side);
- PyTorch: nn.LSTM (the LSTM's baseline), nn.GRU (the baseline of Cho's GRU,
  which applies the reset after the recurrent GEMM: the closest cell
  PyTorch has), and eager PyTorch of the peephole LSTM and Cho's GRU
  (input GEMM hoisted, one recurrent GEMM per step: bench/train_gpu.py's).

Each row is checked before it is timed: our outputs against the PyTorch
implementation of the same cell on the same weights (nn.LSTM and the eager
variants; float32, relative error of the output sequence). Times: median of
--reps consecutive calls after warm-up, best of --rounds rounds over the rows.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from train_gpu import eager_cho_gru, eager_peephole  # noqa: E402

import lstmc as lc  # noqa: E402

CONFIGS = {"stack3": (3, 128, 32, 50, 64), "charrnn": (2, 128, 50, 50, 65),
           "appleyard": (4, 512, 64, 100, 512)}
CELLS = {"lstm": (lc.cells.lstm, {}), "peephole": (lc.cells.greff, {}),
         "cho_gru": (lc.cells.cho_gru, {})}


def ours(cell, cfg, pre, threads):
    L, H, B, T, I = cfg
    fn, kw = CELLS[cell]
    net = lc.Network(fn, input_size=I, hidden=H, num_layers=L, **kw)
    params = net.init_params(seed=1)
    compiled = net.compile(target="cpu", pre_passes=pre)
    compiled.set_threads(threads)
    return compiled.bind(params), params


def torch_leaves(cell, L, params):
    keys = {"lstm": "W R bW bR", "peephole": "W R bW bR P", "cho_gru": "W R bW bR"}[cell]
    leaves = []
    for l in range(L):
        leaves += [torch.from_numpy(params[f"{k}{l}"]) for k in keys.split()]
    return leaves


def nn_lstm(L, H, I, params):
    m = torch.nn.LSTM(I, H, L)
    with torch.no_grad():
        for l in range(L):
            for ours_name, theirs in (("W", "weight_ih"), ("R", "weight_hh"),
                                      ("bW", "bias_ih"), ("bR", "bias_hh")):
                getattr(m, f"{theirs}_l{l}").copy_(torch.from_numpy(params[f"{ours_name}{l}"]))
    return m


def median_ms(samples):
    return 1e3 * float(np.median(samples))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", default="stack3,charrnn,appleyard")
    ap.add_argument("--cells", default="lstm,peephole,cho_gru")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--pre-passes", default="lstm-optimize{wavefront=0}")
    ap.add_argument("--json")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    rows = []
    for name in args.configs.split(","):
        cfg = CONFIGS[name]
        L, H, B, T, I = cfg
        rng = np.random.default_rng(0)
        x = rng.uniform(-1, 1, (T, B, I)).astype(np.float32)
        xt = torch.from_numpy(x)
        h0 = torch.zeros(L, B, H)
        runs = {}
        for cell in args.cells.split(","):
            f, params = ours(cell, cfg, args.pre_passes, args.threads)
            leaves = torch_leaves(cell, L, params)
            if cell == "lstm":
                m = nn_lstm(L, H, I, params)
                ref_fn = lambda m=m: m(xt)[0]  # noqa: E731
                base = ("nn.LSTM", ref_fn)
            elif cell == "peephole":
                ref_fn = lambda lv=leaves: eager_peephole(L, T, B, [xt, h0, h0] + lv)[0]  # noqa: E731
                base = ("eager peephole", ref_fn)
            else:
                ref_fn = lambda lv=leaves: eager_cho_gru(L, T, B, [xt, h0] + lv)[0]  # noqa: E731
                g = torch.nn.GRU(I, H, L)
                base = ("eager Cho GRU", ref_fn)
                runs[f"{name}/nn.GRU"] = lambda g=g: g(xt)
            with torch.no_grad():
                ref = ref_fn().numpy()
            y = f(x)[0]
            err = float(np.linalg.norm(y - ref) / np.linalg.norm(ref))
            if not err < 1e-4:
                sys.exit(f"{name} {cell}: our output differs from {base[0]}'s by {err:.3g}")
            runs[f"{name}/ours {cell}"] = lambda f=f: f(x)
            runs[f"{name}/{base[0]}"] = base[1]
            print(f"{name} {cell}: checked against {base[0]} (relative error {err:.2g})",
                  flush=True)
        # Each row's calls run back to back (PyTorch's OpenMP workers and
        # OpenBLAS's threads spin for a while after their last call: calls
        # of the two interleaved slow both down), in --rounds rounds over the
        # rows; a row's figure is its best round's median.
        best = {}
        with torch.no_grad():
            for _ in range(args.rounds):
                for k, fn in runs.items():
                    for _ in range(2):
                        fn()
                    samples = []
                    for _ in range(args.reps):
                        t = time.perf_counter()
                        fn()
                        samples.append(time.perf_counter() - t)
                    best[k] = min(best.get(k, float("inf")), median_ms(samples))
        for k in runs:
            rows.append({"config": name, "what": k.split("/", 1)[1], "ms": best[k]})
            print(f"  {k}: {rows[-1]['ms']:.2f} ms", flush=True)
    print(f"\nCPU forward, float32, {args.threads} thread(s), best of {args.rounds} "
          f"medians of {args.reps} (ms)")
    print(f"{'config':<10} {'what':<20} {'ms':>9} {'vs PyTorch':>11}")
    baseline_of = {"ours lstm": "nn.LSTM", "ours peephole": "nn.LSTM",
                   "ours cho_gru": "nn.GRU"}
    by = {(r["config"], r["what"]): r["ms"] for r in rows}
    for r in rows:
        base = baseline_of.get(r["what"])
        ratio = (f"{r['ms'] / by[(r['config'], base)]:.2f}x"
                 if base and (r["config"], base) in by else "")
        print(f"{r['config']:<10} {r['what']:<20} {r['ms']:>9.2f} {ratio:>11}")
    if args.json:
        with open(args.json, "w") as fjson:
            json.dump({"threads": args.threads, "reps": args.reps, "rows": rows}, fjson, indent=1)


if __name__ == "__main__":
    main()
