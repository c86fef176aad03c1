#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The cost of calling a compiled network from Python, on the CPU.

  python_call_overhead.py [--hidden 32] [--input 16] [--batch 1] [--steps 100]
                          [--threads 1] [--repeat 300] [--rounds 3] [--no-module]

A one-layer LSTM (lstmc.cells.lstm, float32) compiled for the CPU, bound to
its parameters, called one step at a time (T=1):

- bare: the library's _mlir_ciface_ function called through ctypes with
  descriptors built beforehand, and its results freed: what the native code
  and the ctypes call cost, the floor of any call from Python;
- lstmc: CompiledNetwork's call, f(x, h, c), on numpy arrays and on torch
  CPU tensors, and f(x) (zero initial states); its overhead is the
  difference to bare;
- torch_module: the same network as lstmc.torch_module under
  torch.no_grad() (skipped with --no-module; it compiles the gradients too);
- a loop of --steps one-step calls carrying (h, c), ours on numpy arrays and
  on tensors against nn.LSTMCell on the same weights (checked to agree
  first), and for scale the whole sequence in one call against nn.LSTM.

Both sides use --threads threads (torch.set_num_threads and the library's
lstmRuntimeCpuSetThreads). Times: each figure is timed in --repeat short
batches (a few ms each) spread over --rounds rounds over the rows; printed
are the best batch (what the call costs when nothing else runs: the CI
machine is a shared 2-core one) and the median.
It uses only CompiledNetwork's public call and the attributes every version
of runtime.py has (fn, lib, _results_struct), so it times older versions too.
"""
import argparse
import ctypes
import time

import numpy as np
import torch

import lstmc as lc
from lstmc import _descriptors


def timed(rows, per_batch, repeat, rounds):
    """{name: (best, median)} seconds per call of each fn() of rows [(name,
    fn)]: `repeat` batches of `per_batch` calls each, spread over `rounds`
    rounds over the rows (so that a burst of load elsewhere on the machine
    does not fall on one row only)."""
    samples = {name: [] for name, _ in rows}
    for _ in range(rounds):
        for name, fn in rows:
            for _ in range(max(3, per_batch // 10)):
                fn()
            for _ in range(max(1, repeat // rounds)):
                t = time.perf_counter()
                for _ in range(per_batch):
                    fn()
                samples[name].append((time.perf_counter() - t) / per_batch)
    return {name: (min(s), float(np.median(s))) for name, s in samples.items()}


def bare_call(compiled, values):
    """A closure calling the library directly on prebuilt descriptors."""
    arrays = [np.ascontiguousarray(values[a.name]) for a in compiled.args]
    descs = [_descriptors._descriptor(v.ctypes.data, v.shape,
                                 [s // v.itemsize for s in v.strides]) for v in arrays]
    refs = [ctypes.byref(d) for d in descs]
    results = compiled._results_struct()
    out = ctypes.byref(results)
    fields = [getattr(results, f"r{k}") for k in range(len(compiled.results))]
    free = ctypes.CDLL(None).free
    free.argtypes = [ctypes.c_void_p]
    fn = compiled.fn

    def call():
        fn(out, *refs)
        for d in fields:
            free(d.allocated)
    call.keep = (arrays, descs)
    return call


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--input", type=int, default=16)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=300)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--no-module", action="store_true")
    args = ap.parse_args()
    H, I, B, T = args.hidden, args.input, args.batch, args.steps
    torch.set_num_threads(args.threads)

    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)
    params = net.init_params(seed=1)
    compiled = net.compile(target="cpu")
    compiled.set_threads(args.threads)
    f = compiled.bind(params)

    rng = np.random.default_rng(0)
    xs = rng.uniform(-1, 1, (T, 1, B, I)).astype(np.float32)  # one [1, B, I] per step
    x, h, c = xs[0], np.zeros((B, H), np.float32), np.zeros((B, H), np.float32)
    xt, ht, ct = (torch.from_numpy(a) for a in (x, h, c))

    cell = torch.nn.LSTMCell(I, H)
    lstm = torch.nn.LSTM(I, H)
    with torch.no_grad():
        for m, sfx in ((cell, ""), (lstm, "_l0")):
            for ours, theirs in (("W", "weight_ih"), ("R", "weight_hh"), ("bW", "bias_ih"),
                                 ("bR", "bias_hh")):
                getattr(m, theirs + sfx).copy_(torch.from_numpy(params[ours]))

    def ours_loop():
        hh, cc = h, c
        for t in range(T):
            _, hh, cc = f(xs[t], hh, cc)
        return hh

    xs_t = torch.from_numpy(xs)

    def ours_loop_torch():
        hh, cc = ht, ct
        for t in range(T):
            _, hh, cc = f(xs_t[t], hh, cc)
        return hh

    def cell_loop():
        hh, cc = ht, ct
        for t in range(T):
            hh, cc = cell(xs_t[t, 0], (hh, cc))
        return hh

    seq = xs[:, 0]
    seq_t = torch.from_numpy(seq)
    # A runtime older than the tensor path refuses CPU tensors: those rows
    # are then left out.
    takes_tensors = True
    with torch.no_grad():
        ref = cell_loop().numpy()
        checks = [("lstmc loop", ours_loop), ("lstmc sequence", lambda: f(seq)[1]),
                  ("lstmc loop (tensors)", lambda: ours_loop_torch().numpy())]
        for name, fn in checks:
            try:
                got = fn()
            except lc.CallError as e:
                print(f"{name}: refused ({e}); left out")
                takes_tensors = False
                continue
            err = float(np.linalg.norm(got - ref) / np.linalg.norm(ref))
            if not err < 1e-5:
                raise SystemExit(f"{name}: final h differs from nn.LSTMCell's by {err:.3g}")
    print(f"LSTM I={I} H={H} B={B}, {args.threads} thread(s); checked against nn.LSTMCell")

    bare = bare_call(compiled, dict(params, x=x, h0=h, c0=c))
    rows = [("bare native call (prebuilt descriptors)", bare),
            ("lstmc f(x, h, c), numpy", lambda: f(x, h, c)),
            ("lstmc f(x), zero states", lambda: f(x))]
    if takes_tensors:
        rows.append(("lstmc f(x, h, c), torch tensors", lambda: f(xt, ht, ct)))
    if not args.no_module:
        m = lc.torch_module(net, params=params, target="cpu")
        rows.append(("torch_module m(x, h0, c0), no_grad", lambda: m(xt, ht, ct)))
    rows.append(("nn.LSTMCell(x, (h, c))", lambda: cell(xt[0], (ht, ct))))
    per = 200
    with torch.no_grad():
        times = timed(rows, per, args.repeat, args.rounds)
    base = times[rows[0][0]][0]
    print(f"\none step (T=1), µs per call: best and median of {args.repeat} batches of {per}")
    print(f"{'':<40} {'best':>8} {'median':>8} {'over bare':>10}")
    for name, _ in rows:
        best, med = times[name]
        over = f"{1e6 * (best - base):10.1f}" if name.startswith(("lstmc", "torch_")) else ""
        print(f"{name:<40} {1e6 * best:8.1f} {1e6 * med:8.1f} {over:>10}")

    loops = [(f"lstmc, {T} one-step calls, numpy", ours_loop)]
    if takes_tensors:
        loops.append((f"lstmc, {T} one-step calls, tensors", ours_loop_torch))
    loops += [(f"nn.LSTMCell, {T} steps in a loop", cell_loop),
              (f"lstmc, one call over T={T}", lambda: f(seq)),
              (f"nn.LSTM, one call over T={T}", lambda: lstm(seq_t))]
    reps = max(args.rounds, args.repeat // 10)
    with torch.no_grad():
        times = timed(loops, 1, reps, args.rounds)
    print(f"\n{T} steps, ms: best and median of {reps}")
    for name, _ in loops:
        best, med = times[name]
        print(f"{name:<40} {1e3 * best:8.3f} {1e3 * med:8.3f}")


if __name__ == "__main__":
    main()
