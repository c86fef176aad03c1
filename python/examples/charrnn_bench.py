#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""char-rnn training speed, side by side in one run (the H100 of issue 13):
one iteration = forward, loss, backward and Adam step of the seeds' model
(one-hot input, 2 layers, H=128, linear output, cross-entropy, Adam 2e-3,
T = B = 50, fp32 without TF32) on the Shakespeare windows of charrnn.py.

Rows (each plain, and replayed from a CUDA graph where noted):
  lstmc lstm / peephole / gru   lstmc.torch_module of cells.lstm, cells.greff
                                (Greff's vanilla peephole LSTM) and cells.gru,
                                compiled for cuda with --pre-passes lstm-optimize
                                and gradients; plain and (graph)
  cuDNN nn.LSTM, cuDNN nn.GRU   plain and (graph)
  eager peephole                the peephole LSTM of shared/bench/charrnn_train.py
                                in eager PyTorch autograd; plain and (graph)
  torch.compile peephole        the same under torch.compile (mode default;
                                --torch-compile, ~140 s of compilation)

The GPU machine has no compiler: compile where the compiler is,

    python3 python/examples/charrnn_bench.py --prepare gpu-build/charrnn

which writes the three libraries (with the compile times measured here) and
the text into that directory, then run there (lstmc from the source tree;
its native compiler module is not needed to load libraries):

    PYTHONPATH=python python3 python/examples/charrnn_bench.py --networks gpu-build/charrnn \\
        --json charrnn-bench.json [--torch-compile] [--measure-epochs 50]

Times: the median of --iters iterations, each synchronised, after the
first (timed on its own: library loading, cuBLAS/cuDNN set-up, capture) and
10 warm-up iterations; the 50 epochs (21,150 iterations, 423 an epoch) are
the median times 21,150, or measured with --measure-epochs for the rows of
--measure-rows. Every row starts from zero states on window 0 and walks the
training windows in order (charrnn.py checks the losses; here they are
printed only as a sanity check, after `iterations_run` iterations).

`--device cpu` runs the same rows on the CPU (no graphs, networks compiled
on the spot; --hidden and --iters small): a check of this script where
there is no GPU. See docs/charrnn.md.
"""
import argparse
import json
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import charrnn  # noqa: E402
from charrnn import lc  # noqa: E402

CELLS = {"lstm": ("lstm", []), "peephole": ("peephole", []), "gru": ("gru", [])}
L, H, B, T, LR = 2, 128, 50, 50, 2e-3
ITERATIONS_50_EPOCHS = 21150


class Args:
    """What charrnn.compiled_network reads."""

    def __init__(self, cell, network_dir, pre_passes="lstm-optimize", hidden=None,
                 persistent=False):
        self.cell, self.cell_option = CELLS[cell]
        self.hidden, self.layers = hidden or H, L
        self.network_dir, self.pre_passes = network_dir, pre_passes
        self.persistent = persistent


class Peephole(nn.Module):
    """shared/bench/charrnn_train.py's peephole LSTM (gates i, f, z, o;
    peepholes i, f on c_{t-1}, o on c_t), with its output layer."""

    def __init__(self, V, hidden=H):
        super().__init__()
        self.V = V
        H = hidden
        self.W = nn.ParameterList([nn.Parameter(torch.randn(4 * H, V if k == 0 else H) * 0.08)
                                   for k in range(L)])
        self.R = nn.ParameterList([nn.Parameter(torch.randn(4 * H, H) * 0.08) for _ in range(L)])
        self.b = nn.ParameterList([nn.Parameter(torch.zeros(4 * H)) for _ in range(L)])
        self.P = nn.ParameterList([nn.Parameter(torch.randn(3, H) * 0.08) for _ in range(L)])
        self.out = nn.Linear(H, V)

    def forward(self, x):
        inp = F.one_hot(x, self.V).float()
        Tn, Bn = inp.shape[:2]
        H = self.out.in_features
        for k in range(L):
            xp = (inp.reshape(Tn * Bn, -1) @ self.W[k].t() + self.b[k]).reshape(Tn, Bn, -1)
            h = torch.zeros(Bn, H, device=inp.device)
            c = torch.zeros(Bn, H, device=inp.device)
            outs = []
            for t in range(Tn):
                i, f, z, o = (xp[t] + h @ self.R[k].t()).chunk(4, 1)
                i = torch.sigmoid(i + self.P[k][0] * c)
                f = torch.sigmoid(f + self.P[k][1] * c)
                c = torch.tanh(z) * i + c * f
                o = torch.sigmoid(o + self.P[k][2] * c)
                h = torch.tanh(c) * o
                outs.append(h)
            inp = torch.stack(outs)
        return self.out(inp)


class Logits(nn.Module):
    """charrnn.CharRNN from zero states, returning the logits only."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x)[0]


# ---------------------------------------------------------------------------

def prepare(directory, data_dir, persistent=False):
    os.makedirs(directory, exist_ok=True)
    text = charrnn.load_shakespeare(data_dir)
    vocab = len(set(text))
    os.makedirs(os.path.join(directory, "data"), exist_ok=True)
    with open(os.path.join(directory, "data", "shakespeare.txt"), "w") as f:
        f.write(text)
    for cell in CELLS:
        _, seconds = charrnn.compiled_network(Args(cell, directory, persistent=persistent),
                                              vocab, "cuda", prepare=True)
        print(f"== {cell}: compiled for cuda in {seconds:.1f} s")
    size = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(directory) for f in fs)
    print(f"== {directory}: {size / 2**20:.1f} MiB; carry it to the GPU machine")


def step_fn(model, opt, V):
    def step(x, y):
        loss = F.cross_entropy(model(x).reshape(-1, V), y.reshape(-1))
        loss.backward()
        opt.step()
        return loss.detach()
    return step


def sync():
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def timed(fn):
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    return time.perf_counter() - t0, out


def run_row(name, make, data, args, graph=False, setup_s=None):
    """Times make()'s model on data's windows; returns the row."""
    dev = torch.device(args.device)
    torch.manual_seed(0)
    t0 = time.perf_counter()
    model = make().to(dev)
    build_s = time.perf_counter() - t0
    opt = torch.optim.Adam(model.parameters(), lr=LR, capturable=graph)
    step = step_fn(model, opt, data.vocab)
    batches = [tuple(t.to(dev) for t in data.train(k)) for k in range(data.n_train)]
    if graph:
        runner = lc.torch_module.GraphedStep(step, *batches[0], zero_grad=opt.zero_grad)
        call = runner
    else:
        def call(x, y):
            opt.zero_grad(set_to_none=True)
            return step(x, y)
    k = 0

    def one():
        nonlocal k
        out = call(*batches[k % data.n_train])
        k += 1
        return out
    first, _ = timed(one)
    warm = 10 if graph else 5 if args.device == "cuda" else 1
    for _ in range(warm):
        one()
    sync()
    n = args.iters
    probe, _ = timed(one)
    if probe * n > args.row_budget:  # slow rows (eager): fewer iterations
        n = max(10, int(args.row_budget / probe))
    ts = []
    loss = None
    for _ in range(n):
        dt, loss = timed(one)
        ts.append(dt)
    ms = statistics.median(ts) * 1e3
    row = {"impl": name, "ms_per_iteration": round(ms, 3),
           "epochs50_s": round(ms * ITERATIONS_50_EPOCHS / 1e3, 1),
           "first_iteration_s": round(first, 3), "build_s": round(build_s, 3),
           "iterations_timed": n, "loss_after": round(float(loss), 4), "iterations_run": k}
    if setup_s is not None:
        row["compile_s"] = round(setup_s, 2)
    if args.measure_epochs and name in args.measure_rows:
        total = int(round(args.measure_epochs * data.n_train))
        estimate = ms * total / 1e3
        if estimate > args.measure_budget:
            row["measured_epochs_skipped"] = (f"{args.measure_epochs:g} epochs would take about "
                                              f"{estimate:.0f} s > --measure-budget "
                                              f"{args.measure_budget:g}")
        else:
            sync()
            t0 = time.perf_counter()
            for _ in range(total):
                one()
            sync()
            row[f"measured_{args.measure_epochs:g}_epochs_s"] = round(time.perf_counter() - t0,
                                                                      1)
            row["loss_after_epochs"] = round(float(one()), 4)
    print(json.dumps(row), flush=True)
    del model, opt, call, one
    if graph:
        del runner
        sync()
        lc.torch_module.release_captured()  # the graph is gone: its buffers too
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prepare", metavar="DIR", help="compile the libraries into DIR (here)")
    p.add_argument("--data-dir", default=None, help="charrnn.py's data cache (for --prepare)")
    p.add_argument("--networks", metavar="DIR", help="the --prepare directory (there)")
    p.add_argument("--persistent", action="store_true",
                   help="with --prepare: compile with persistent=True (docs/charrnn.md)")
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--row-budget", type=float, default=6.0,
                   help="seconds of timed iterations of a row at most (at least 10 iterations)")
    p.add_argument("--rows", default="all",
                   help="comma-separated substrings of the rows to run (default all)")
    p.add_argument("--no-graphs", action="store_true")
    p.add_argument("--torch-compile", action="store_true",
                   help="add the torch.compile peephole row (about 140 s of compilation)")
    p.add_argument("--measure-epochs", type=float, default=0,
                   help="also run this many epochs for the rows of --measure-rows")
    p.add_argument("--measure-rows", default="lstmc peephole (graph)",
                   help="comma-separated row names")
    p.add_argument("--measure-budget", type=float, default=150,
                   help="skip a measured run estimated to take longer (seconds)")
    p.add_argument("--json", default=None)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                   help="cpu: a check of the script (networks compiled here, no graphs)")
    p.add_argument("--hidden", type=int, default=H, help="(for --device cpu checks)")
    args = p.parse_args(argv)
    args.measure_rows = args.measure_rows.split(",")
    if args.prepare:
        prepare(args.prepare, args.data_dir, args.persistent)
        return 0
    if not args.networks:
        p.error("--networks DIR (from --prepare) is needed")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no CUDA GPU usable from PyTorch")
    if args.device == "cpu":
        args.no_graphs = True
    hidden = args.hidden
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    t_start = time.time()
    text = charrnn.load_shakespeare(args.data_dir or os.path.join(args.networks, "data"),
                                    fetch=args.device == "cpu")
    data = charrnn.Batches(text, B, T)
    V = data.vocab

    def ours(cell):
        a = Args(cell, args.networks, hidden=hidden)
        t0 = time.perf_counter()
        compiled, compile_s = charrnn.compiled_network(a, V, args.device)
        load_s = time.perf_counter() - t0

        def make():
            m = lc.torch_module(compiled)
            return Logits(charrnn.CharRNN(m, hidden, V))
        return make, compile_s, load_s

    def cudnn(kind):
        def make():
            rnn = (nn.LSTM if kind == "lstm" else nn.GRU)(V, hidden, L)
            return Logits(charrnn.CharRNN(rnn, hidden, V))
        return make

    def compiled_peephole():
        return torch.compile(Peephole(V, hidden))

    rows_wanted = None if args.rows == "all" else args.rows.split(",")
    plan = []
    for cell in CELLS:
        make, compile_s, load_s = ours(cell)
        plan.append((f"lstmc {cell}", make, False, compile_s))
        plan.append((f"lstmc {cell} (graph)", make, True, compile_s))
    plan += [("cuDNN nn.LSTM", cudnn("lstm"), False, None),
             ("cuDNN nn.LSTM (graph)", cudnn("lstm"), True, None),
             ("cuDNN nn.GRU", cudnn("gru"), False, None),
             ("cuDNN nn.GRU (graph)", cudnn("gru"), True, None),
             ("eager peephole", lambda: Peephole(V, hidden), False, None),
             ("eager peephole (graph)", lambda: Peephole(V, hidden), True, None)]
    if args.torch_compile:
        plan.append(("torch.compile peephole", compiled_peephole, False, None))
    rows = []
    for name, make, graph, compile_s in plan:
        if graph and args.no_graphs:
            continue
        if rows_wanted and not any(w in name for w in rows_wanted):
            continue
        try:
            rows.append(run_row(name, make, data, args, graph=graph, setup_s=compile_s))
        except Exception as e:  # a row that fails is reported, the others run
            rows.append({"impl": name, "error": f"{type(e).__name__}: {e}"[:400]})
            print(json.dumps(rows[-1]), flush=True)
        if args.device == "cuda":
            torch.cuda.empty_cache()

    ref = {r["impl"]: r.get("ms_per_iteration") for r in rows}
    print(f"\n| implementation | ms / iteration | vs cuDNN LSTM | vs cuDNN LSTM (graph) | "
          f"50 epochs (s) | first iteration (s) | compile (s) |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        if "error" in r:
            print(f"| {r['impl']} | failed: {r['error'][:80]} | | | | | |")
            continue
        ms = r["ms_per_iteration"]
        a, b = ref.get("cuDNN nn.LSTM"), ref.get("cuDNN nn.LSTM (graph)")
        epochs = r.get(f"measured_{args.measure_epochs:g}_epochs_s")
        print(f"| {r['impl']} | {ms:.3f} |" + (f" {ms / a:.2f} |" if a else " |"), end="")
        print(f" {ms / b:.2f} |" if b else " |", end="")
        print(f" {r['epochs50_s']}" + (f" (measured {epochs})" if epochs else "") +
              f" | {r['first_iteration_s']} | {r.get('compile_s', '')} |")
    out = {"gpu": torch.cuda.get_device_name() if args.device == "cuda" else "cpu",
           "torch": torch.__version__,
           "config": {"L": L, "H": H, "B": B, "T": T, "V": V, "lr": LR,
                      "batches_per_epoch": data.n_train},
           "rows": rows, "wall_s": round(time.time() - t_start, 1)}
    print(f"\n(total {out['wall_s']} s on {out['gpu']})")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
