#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The training benchmark: forward + backward, side by side in one run (GPU machine).

  train_gpu.py [--configs charrnn,...] [--cells lstm,peephole,cho_gru]
               [--precisions fp32,tf32,bf16] [--json OUT.json] [--deadline S]

For each configuration of shared/docs/BENCHMARKS.md (L, H, B, T, I), cell and
precision, one training step's forward and backward over the whole sequence,
on the same random weights and inputs, with cotangents (grad_output) for
every result (y, hT, cT), and gradients for every input, initial state and
weight:

- ours: gpu-build/train/CONFIG_CELL_PREC.so (bench/compile_train.sh:
  lstm-compile --target=cuda --gradients --pre-passes=lstm-optimize
  --compute-type=PREC): (a) @forward_grad, (b) @forward_train then
  @forward_backward, and both captured in a CUDA graph (warm-up on a side
  stream, captured on it, as run_gpu.py does; the replay's gradients are
  checked against a direct call's);
- cuDNN: nn.LSTM for lstm (and as the baseline of peephole, which cuDNN
  lacks), nn.GRU for cho_gru (cuDNN's GRU applies the reset after the
  recurrent GEMM: the closest cuDNN cell, not the same one); forward and
  .backward(), plain and captured in a CUDA graph (grads set to None before
  the capture, so the graph owns them);
- eager PyTorch autograd of the peephole LSTM and Cho's GRU (combined gate
  GEMMs, hoisted input projection, as run_gpu.py's eager baseline), plain and
  captured; torch.compile(mode='reduce-overhead') of them on --compile-configs
  (charrnn) only, compiled in a child process while the rest runs (its
  compile time is reported; the step is timed once the parent is done).

Precisions: fp32, tf32 and bf16 (ours compiled with --compute-type=bf16,
fp32 arguments; cuDNN's module, inputs and cotangents converted to bf16; no
eager rows).

Memory: the bytes of our saved activations (the extra results of
@forward_train) beside cuDNN's reserve space (the 4th result of
torch._cudnn_rnn in training mode), and the activations eager autograd saves.
Correctness: our gradients against cuDNN's (lstm) or eager autograd's in
fp32 (peephole, cho_gru), relative error ||g - ref|| / ||ref||, worst over the
gradients. Times: median of up to --reps steps after warm-up (fewer when a
step is slow: about --budget seconds per figure), wall clock around a
synchronised step. A final table gives each row's ratio to cuDNN captured in
a CUDA graph at the same precision.

--device cpu runs what it can on the CPU (libraries from
TARGET=cpu bench/compile_train.sh tiny, torch.nn's CPU RNNs, no graphs): a
check of this script where there is no GPU.
"""
import argparse
import json
import math
import os
import queue
import statistics
import subprocess
import sys
import tarfile
import threading
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..')
sys.path.insert(0, os.path.join(ROOT, 'test', 'GPU'))
from grad_net import GradNet  # noqa: E402
from run_gpu import warm_up_on_side_stream  # noqa: E402

CONFIGS = {  # L, H, B, T, I
    'charrnn': (2, 128, 50, 50, 65), 'appleyard': (4, 512, 64, 100, 512),
    'latency': (2, 512, 1, 100, 512), 'deepbench': (1, 1024, 32, 50, 1024),
    'large': (2, 2048, 128, 50, 2048),
    'tiny': (2, 16, 3, 4, 5)}  # for --device cpu
DEFAULT_CONFIGS = 'charrnn,appleyard,latency,deepbench,large'
GATES = {'lstm': 4, 'peephole': 4, 'cho_gru': 3}
CUDNN_MODE = {'lstm': 2, 'gru': 3}  # cudnnRNNMode_t: CUDNN_LSTM, CUDNN_GRU


class Clock:
    """The run's deadline: figures not started in time are skipped."""

    def __init__(self, seconds):
        self.start, self.seconds = time.time(), seconds

    def left(self):
        return self.seconds - (time.time() - self.start)


def sync(dev):
    if dev == 'cuda':
        torch.cuda.synchronize()


def median_ms(fn, dev, reps, budget):
    """Median wall time of fn() in ms, synchronised around each call, after
    a warm-up call and a probe; fewer repetitions when a call is slow (about
    `budget` seconds in all, at least 3)."""
    fn()
    sync(dev)
    t0 = time.perf_counter()
    fn()
    sync(dev)
    one = time.perf_counter() - t0
    if one < budget / 10:
        fn()  # a second warm-up call where it is cheap
    n = max(3, min(reps, int(budget / max(one, 1e-6))))
    ts = []
    for _ in range(n):
        sync(dev)
        t0 = time.perf_counter()
        fn()
        sync(dev)
        ts.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(ts), n


def rel_err(a, b):
    a, b = a.detach().double(), b.detach().double()
    n = float(b.norm())
    return float((a - b).norm()) / (n if n > 0 else 1.0)


def worst_err(gs, refs):
    if len(gs) != len(refs):
        return float('inf')
    return max((rel_err(g, r) if g.shape == r.shape else float('inf')
                for g, r in zip(gs, refs)), default=0.0)


def set_precision(prec):
    tf32 = prec == 'tf32'
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32


# ---------------------------------------------------------------------------
# Networks: data, weights, the eager cells
# ---------------------------------------------------------------------------

def uniform(gen, shape, k, dev):
    return ((torch.rand(shape, generator=gen) * 2 - 1) * k).to(dev)


def make_data(cfg, dev, seed):
    """x, h0, c0 and the cotangents of y, hT, cT (drawn on the CPU: a failed
    graph capture cannot spoil the generator)."""
    L, H, B, T, I = CONFIGS[cfg]
    g = torch.Generator().manual_seed(seed)
    x, h0, c0 = uniform(g, (T, B, I), 1, dev), uniform(g, (L, B, H), 1, dev), \
        uniform(g, (L, B, H), 1, dev)
    cots = [torch.randn(s, generator=g).to(dev) for s in ((T, B, H), (L, B, H), (L, B, H))]
    return x, h0, c0, cots


def make_weights(cfg, cell, dev, seed):
    """Per layer W [G*H, I_l], R [G*H, H], bW, bR [G*H] (, P [3, H]) ~ U(-1/sqrt(H), 1/sqrt(H)):
    bench/make_network.py's argument layout (PyTorch's, gate orders i,f,g,o and r,z,n)."""
    L, H, B, T, I = CONFIGS[cfg]
    G, k = GATES[cell], 1 / math.sqrt(H)
    g = torch.Generator().manual_seed(seed)
    ws = []
    for l in range(L):
        il = I if l == 0 else H
        ws += [uniform(g, (G * H, il), k, dev), uniform(g, (G * H, H), k, dev),
               uniform(g, (G * H,), k, dev), uniform(g, (G * H,), k, dev)]
        if cell == 'peephole':
            ws.append(uniform(g, (3, H), k, dev))
    return ws


def eager_peephole(L, T, B, leaves):
    """Greff's peephole LSTM in eager PyTorch: one input GEMM per layer over all
    steps, one recurrent GEMM per step (gates i, f, g, o; peepholes i, f on
    c_{t-1}, o on c_t)."""
    x, h0, c0 = leaves[:3]
    inp, hs, cs = x, [], []
    for l in range(L):
        W, R, bW, bR, P = leaves[3 + 5 * l:8 + 5 * l]
        xp = torch.addmm(bW + bR, inp.reshape(T * B, -1), W.t()).reshape(T, B, -1)
        Rt = R.t()
        h, c, outs = h0[l], c0[l], []
        for t in range(T):
            i, f, z, o = torch.addmm(xp[t], h, Rt).chunk(4, 1)
            i = torch.sigmoid(i + P[0] * c)
            f = torch.sigmoid(f + P[1] * c)
            c = torch.tanh(z) * i + c * f
            o = torch.sigmoid(o + P[2] * c)
            h = torch.tanh(c) * o
            outs.append(h)
        inp = torch.stack(outs)
        hs.append(h)
        cs.append(c)
    return [inp, torch.stack(hs), torch.stack(cs)]


def eager_cho_gru(L, T, B, leaves):
    """Cho et al.'s GRU in eager PyTorch: the input GEMM hoisted, r and z's
    recurrent GEMMs combined into one per step, then R_n (r * h)."""
    x, h0 = leaves[:2]
    inp, hs = x, []
    for l in range(L):
        W, R, bW, bR = leaves[2 + 4 * l:6 + 4 * l]
        H = R.shape[1]
        xp = torch.addmm(bW, inp.reshape(T * B, -1), W.t()).reshape(T, B, -1)
        Rrz, Rn = R[:2 * H].t(), R[2 * H:].t()
        brz, bn = bR[:2 * H], bR[2 * H:]
        h, outs = h0[l], []
        for t in range(T):
            xrz, xn = xp[t, :, :2 * H], xp[t, :, 2 * H:]
            r, z = torch.sigmoid(xrz + torch.addmm(brz, h, Rrz)).chunk(2, 1)
            n = torch.tanh(xn + torch.addmm(bn, r * h, Rn))
            h = (1 - z) * n + z * h
            outs.append(h)
        inp = torch.stack(outs)
        hs.append(h)
    return [inp, torch.stack(hs)]


EAGER = {'peephole': eager_peephole, 'cho_gru': eager_cho_gru}


def leaves_of(tensors):
    return [t.detach().clone().requires_grad_() for t in tensors]


def grads_of(leaves):
    """Copies of the leaves' gradients (zeros where none flowed)."""
    return [torch.zeros_like(t) if t.grad is None else t.grad.detach().clone() for t in leaves]


def autograd_step(forward, leaves, cots):
    """One training step through autograd: grads set to None, forward, backward."""
    def step():
        for t in leaves:
            t.grad = None
        outs = forward()
        torch.autograd.backward(outs, cots[:len(outs)])
    return step


def saved_bytes_autograd(forward, leaves):
    """Bytes of the distinct storages autograd saves for the backward, other
    than the leaves' (inputs and weights)."""
    seen, own = {}, {t.untyped_storage().data_ptr() for t in leaves}

    def pack(t):
        s = t.untyped_storage()
        if s.data_ptr() not in own:
            seen[s.data_ptr()] = s.nbytes()
        return t
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        outs = forward()
    del outs
    return sum(seen.values())


def cudnn_module(kind, cfg, ws, dev):
    """nn.LSTM / nn.GRU with our weights (same layout)."""
    L, H, B, T, I = CONFIGS[cfg]
    mod = (torch.nn.LSTM if kind == 'lstm' else torch.nn.GRU)(I, H, L).to(dev)
    with torch.no_grad():
        for l in range(L):
            for k, name in enumerate(('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh')):
                getattr(mod, f'{name}_l{l}').copy_(ws[4 * l + k])
    if dev == 'cuda':
        mod.flatten_parameters()
    return mod


def to_bf16(mod, x, h0, c0, cots):
    """cuDNN in bf16: the module, the inputs and the cotangents as bf16 (fp32
    accumulation inside cuDNN), the module's weights flattened again (cuDNN
    would compact scattered weights at every call)."""
    mod = mod.to(torch.bfloat16)
    mod.flatten_parameters()
    x, h0, c0 = (t.to(torch.bfloat16) for t in (x, h0, c0))
    return mod, x, h0, c0, [t.to(torch.bfloat16) for t in cots]


def module_forward(mod, kind, leaves):
    """forward() of nn.LSTM / nn.GRU `mod` on leaves [x, h0(, c0)]: its
    results as a list (y, hT(, cT))."""
    def forward():
        if kind == 'lstm':
            y, (h, c) = mod(leaves[0], (leaves[1], leaves[2]))
            return [y, h, c]
        y, h = mod(leaves[0], leaves[1])
        return [y, h]
    return forward


def cudnn_reserve_bytes(mod, kind, cfg, x, h0, c0):
    """cuDNN's reserve space for the backward: torch._cudnn_rnn in training
    mode returns (output, hy, cy, reserve, weight_buf)."""
    L, H, B, T, I = CONFIGS[cfg]
    with torch.no_grad():
        out = torch._cudnn_rnn(x, mod._flat_weights, 4, None, h0, c0 if kind == 'lstm' else None,
                               CUDNN_MODE[kind], H, 0, L, False, 0.0, True, False, [], None)
    return out[3].numel() * out[3].element_size()


def cudnn_peak_difference(kind, cfg, ws, x, h0, c0):
    """torch.cuda.max_memory_allocated above the start during a forward with
    autograd (kept alive, as before a backward) minus the same without."""
    mod = cudnn_module(kind, cfg, ws, 'cuda')
    leaves = leaves_of([x, h0] + ([c0] if kind == 'lstm' else []))
    state = (leaves[1], leaves[2]) if kind == 'lstm' else leaves[1]

    def peak(train):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        with torch.set_grad_enabled(train):
            outs = mod(leaves[0], state)
        torch.cuda.synchronize()
        used = torch.cuda.max_memory_allocated() - base
        del outs
        return used
    return peak(True) - peak(False)


# ---------------------------------------------------------------------------
# CUDA graphs
# ---------------------------------------------------------------------------

def capture_ours(call):
    """Captures call() (which returns every tensor it made) in a CUDA graph:
    two warm-up runs on a side stream, each run's tensors freed while that
    stream is current (so the runtime caches the buffers on it), then the
    capture on the same stream: the captured run allocates nothing. The
    library must not run on another stream while the graph lives (its cache
    would be flushed, with the graph's scratch buffers)."""
    cur = torch.cuda.current_stream()
    s = torch.cuda.Stream()
    s.wait_stream(cur)
    with torch.cuda.stream(s):
        for _ in range(2):
            outs = call()
            del outs
    cur.wait_stream(s)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        outs = call()
    return graph, outs


def capture_autograd(step, leaves, attempts=2):
    """Captures an autograd training step (PyTorch's whole-network capture):
    warm-up on a side stream, grads set to None, capture; the leaves' .grad
    are then the graph's static outputs. The first eager step captured in a
    process has failed ("operation failed due to a previous error during
    capture", 2026-12-05) where the later ones did not: a failed capture is
    tried once more, warm-up included, before the error is reported."""
    for attempt in range(attempts):
        warm_up_on_side_stream(step)
        torch.cuda.synchronize()
        for t in leaves:
            t.grad = None
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                outs = step.forward()
                torch.autograd.backward(outs, step.cots[:len(outs)])
        except RuntimeError:
            if attempt + 1 == attempts:
                raise
            torch.cuda.synchronize()
            continue
        return graph, [torch.zeros_like(t) if t.grad is None else t.grad for t in leaves]


# ---------------------------------------------------------------------------
# torch.compile in a child process
# ---------------------------------------------------------------------------

def compile_child(cfg, cell, seed, dev='cuda'):
    """Child: compiles the eager cell's training step with
    torch.compile(mode='reduce-overhead'), prints READY and the compile time,
    waits for a line on stdin, then times the step and prints a JSON row.
    fp32: PyTorch's default (no TF32 in matmuls); the TF32 flags are left
    alone (inductor refuses a mix of their legacy and new APIs). dev='cpu'
    checks this function where there is no GPU (no CUDA graphs there)."""
    L, H, B, T, I = CONFIGS[cfg]
    x, h0, c0, cots = make_data(cfg, dev, seed)
    ws = make_weights(cfg, cell, dev, seed + 1)
    leaves = leaves_of([x, h0] + ([c0] if cell != 'cho_gru' else []) + ws)
    fwd = EAGER[cell]
    compiled = torch.compile(lambda: fwd(L, T, B, leaves), mode='reduce-overhead')

    def step():
        torch.compiler.cudagraph_mark_step_begin()
        for t in leaves:
            t.grad = None
        outs = compiled()
        torch.autograd.backward(outs, cots[:len(outs)])
    t0 = time.perf_counter()
    for _ in range(3):  # compile, then the CUDA graphs are recorded
        step()
    sync(dev)
    compile_s = time.perf_counter() - t0
    grads = grads_of(leaves)
    for t in leaves:
        t.grad = None
    eager_outs = fwd(L, T, B, leaves)
    torch.autograd.backward(eager_outs, cots[:len(eager_outs)])
    err = worst_err(grads, grads_of(leaves))
    print('READY', flush=True)
    sys.stdin.readline()
    ms, n = median_ms(step, dev, 20, 1.5)
    print(json.dumps(dict(cfg=cfg, cell=cell, precision='fp32',
                          impl='torch.compile reduce-overhead', ms=ms, reps=n,
                          compile_s=round(compile_s, 1), rel_err=err, ref='eager autograd fp32')),
          flush=True)


def kill_tree(pid):
    """SIGKILLs process `pid` and its descendants (by PID, from /proc)."""
    children = {}
    for d in os.listdir('/proc'):
        if d.isdigit():
            try:
                with open(f'/proc/{d}/stat') as f:
                    ppid = int(f.read().rsplit(')', 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d))
    todo, found = [pid], []
    while todo:
        p = todo.pop()
        found.append(p)
        todo += children.get(p, [])
    for p in reversed(found):
        try:
            os.kill(p, 9)
        except OSError:
            pass


class CompileJob:
    """A compile_child process and a thread reading its output."""

    def __init__(self, cfg, cell, seed, cpus):
        self.cfg, self.cell = cfg, cell
        env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS='4')
        self.proc = subprocess.Popen(
            [sys.executable, os.path.abspath(__file__), '--compile-child', cfg, cell, str(seed)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env=env)
        if cpus:  # before it starts compiling (its workers inherit it)
            try:
                os.sched_setaffinity(self.proc.pid, cpus)
            except OSError:
                pass
        self.lines = queue.Queue()
        self.log = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _next(self, timeout):
        """The next line that is READY or a JSON row (None at the end)."""
        end = time.time() + max(timeout, 0)
        while True:
            try:
                line = self.lines.get(timeout=max(end - time.time(), 0.01))
            except queue.Empty:
                raise TimeoutError from None
            if line is None:
                return None
            if line.startswith('READY') or line.startswith('{'):
                return line
            self.log.append(line.rstrip())

    def result(self, timeout):
        row = dict(cfg=self.cfg, cell=self.cell, precision='fp32',
                   impl='torch.compile reduce-overhead')
        try:
            line = self._next(timeout)
            if line is not None and line.startswith('READY'):
                self.proc.stdin.write('go\n')
                self.proc.stdin.flush()
                line = self._next(60)
            if line is None or not line.startswith('{'):
                row['error'] = 'failed: ' + ' | '.join(self.log[-5:])
            else:
                row = json.loads(line)
        except TimeoutError:
            row['error'] = f'not compiled within the time left ({timeout:.0f} s)'
        finally:
            # The child and inductor's compile workers.
            kill_tree(self.proc.pid)
            self.proc.wait()
        return row


# ---------------------------------------------------------------------------
# The benchmark
# ---------------------------------------------------------------------------

class Bench:
    def __init__(self, a):
        self.a, self.dev = a, a.device
        self.rows = []
        self.clock = Clock(a.deadline)

    def add(self, **row):
        self.rows.append(row)
        ms = f'{row["ms"]:.3f} ms' if 'ms' in row else (
            row.get('error') or row.get('skipped') or row.get('info', ''))
        extra = ''.join(f' {k}={row[k]:.2e}' for k in ('rel_err', 'graph_check') if k in row)
        print(f'  {row["cfg"]:9} {row["cell"]:8} {row["precision"]:4} {row["impl"]:34} {ms}{extra}',
              flush=True)

    def time(self, row, fn):
        """Times fn into row (or marks it skipped past the deadline)."""
        if self.clock.left() <= 0:
            self.add(**row, skipped='deadline')
            return False
        try:
            ms, n = median_ms(fn, self.dev, self.a.reps, self.a.budget)
        except Exception as e:  # noqa: BLE001 - a failing implementation is a row
            self.add(**row, error=f'{type(e).__name__}: {e}'[:300])
            return False
        self.add(**row, ms=ms, reps=n)
        return True

    def graph_rows(self):
        return self.dev == 'cuda' and not self.a.no_graphs

    # -- cuDNN ---------------------------------------------------------------
    def cudnn(self, cfg, prec, kind, cell, ws, data):
        x, h0, c0, cots = data
        name = 'cuDNN nn.LSTM' if kind == 'lstm' else 'cuDNN nn.GRU (reset after GEMM)'
        if self.dev == 'cpu':
            name = name.replace('cuDNN', 'torch.nn (CPU)')
        mod = cudnn_module(kind, cfg, ws, self.dev)
        if prec == 'bf16':
            mod, x, h0, c0, cots = to_bf16(mod, x, h0, c0, cots)
        leaves = leaves_of([x, h0] + ([c0] if kind == 'lstm' else []))
        params = [p for l in range(CONFIGS[cfg][0]) for p in
                  (getattr(mod, f'{n}_l{l}') for n in ('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh'))]

        forward = module_forward(mod, kind, leaves)
        step = autograd_step(forward, leaves + params, cots)
        step.forward, step.cots = forward, cots
        base = dict(cfg=cfg, cell=cell, precision=prec)
        step()
        sync(self.dev)
        grads = grads_of(leaves + params)
        self.time(dict(base, impl=name), step)
        if self.graph_rows() and self.clock.left() > 0:
            try:
                graph, static = capture_autograd(step, leaves + params)
                graph.replay()
                torch.cuda.synchronize()
                check = worst_err(static, grads)
                self.time(dict(base, impl=name + ' (graph)', graph_check=check), graph.replay)
                del graph, static
            except Exception as e:  # noqa: BLE001
                self.add(**base, impl=name + ' (graph)', error=f'capture failed: {e}'[:300])
        return grads

    # -- eager autograd --------------------------------------------------------
    def eager(self, cfg, prec, cell, ws, data, ref):
        L, H, B, T, I = CONFIGS[cfg]
        x, h0, c0, cots = data
        leaves = leaves_of([x, h0] + ([c0] if cell != 'cho_gru' else []) + ws)
        forward = lambda: EAGER[cell](L, T, B, leaves)  # noqa: E731
        step = autograd_step(forward, leaves, cots)
        step.forward, step.cots = forward, cots
        base = dict(cfg=cfg, cell=cell, precision=prec)
        step()
        sync(self.dev)
        grads = grads_of(leaves)
        row = dict(base, impl='eager autograd')
        if ref is not None:
            row['rel_err'], row['ref'] = worst_err(grads, ref), 'eager autograd (first precision)'
        if prec == 'fp32':
            row['saved_bytes'] = saved_bytes_autograd(forward, leaves)
        self.time(row, step)
        if self.graph_rows() and self.clock.left() > 0:
            try:
                graph, static = capture_autograd(step, leaves)
                graph.replay()
                torch.cuda.synchronize()
                check = worst_err(static, grads)
                self.time(dict(base, impl='eager autograd (graph)', graph_check=check),
                          graph.replay)
                del graph, static
            except Exception as e:  # noqa: BLE001
                self.add(**base, impl='eager autograd (graph)', error=f'capture failed: {e}'[:300])
        return grads

    # -- ours ----------------------------------------------------------------
    def ours(self, cfg, prec, cell, ws, data, ref, ref_name):
        x, h0, c0, cots = data
        path = os.path.join(self.a.lib_dir, f'{cfg}_{cell}_{prec}.so')
        base = dict(cfg=cfg, cell=cell, precision=prec)
        if not os.path.exists(path):
            self.add(**base, impl='ours', error=f'no {path} (bench/compile_train.sh)')
            return
        try:
            net = GradNet(path, device=self.dev)
        except Exception as e:  # noqa: BLE001
            self.add(**base, impl='ours', error=f'cannot load {path}: {e}'[:300])
            return
        args = [x, h0] + ([c0] if cell != 'cho_gru' else []) + ws
        cots = cots[:net.n_results]
        check = self.dev == 'cpu'
        try:
            grads = net.call('forward_grad', args + cots)  # checked (synchronised) call
            trained = net.call('forward_train', args)
            results, saved = trained[:net.n_results], trained[net.n_results:]
            again = net.call('forward_backward', args + results + saved + cots)
        except Exception as e:  # noqa: BLE001
            self.add(**base, impl='ours', error=f'{type(e).__name__}: {e}'[:300])
            return
        grads = [g.clone() for g in grads]
        saved_bytes = sum(s.numel() * s.element_size() for s in saved)
        noncontiguous = sum(not t.is_contiguous() for t in trained)
        train_check = worst_err(again, grads)
        bad = [k for k, g in enumerate(grads) if not bool(torch.isfinite(g).all())]
        del trained, results, saved, again
        row = dict(base, impl='ours forward_grad', saved_bytes=saved_bytes)
        if ref is not None:
            row['rel_err'], row['ref'] = worst_err(grads, ref), ref_name
        if bad:
            row['nonfinite_gradients'] = bad
        self.time(row, lambda: net.call('forward_grad', args + cots, check=check))

        def train():
            tr = net.call('forward_train', args, check=check)
            g = net.call('forward_backward', args + tr + cots, check=check)
            return tr + g
        row = dict(base, impl='ours train+backward', train_check=train_check)
        if noncontiguous:
            row['note'] = f'{noncontiguous} results of forward_train not contiguous (copied)'
        self.time(row, train)
        if self.graph_rows():
            for impl, call, n_grads in (
                    ('ours forward_grad (graph)',
                     lambda: net.call('forward_grad', args + cots, check=False), len(grads)),
                    ('ours train+backward (graph)', train, len(grads))):
                if self.clock.left() <= 0:
                    self.add(**base, impl=impl, skipped='deadline')
                    continue
                try:
                    graph, outs = capture_ours(call)
                    graph.replay()
                    torch.cuda.synchronize()
                    check_err = worst_err(outs[-n_grads:], grads)
                    self.time(dict(base, impl=impl, graph_check=check_err), graph.replay)
                    del graph
                    del outs
                except Exception as e:  # noqa: BLE001
                    self.add(**base, impl=impl, error=f'capture failed: {e}'[:300])
            torch.cuda.synchronize()
        # Give the library's cached buffers back before the next one runs.
        if self.dev == 'cuda':
            torch.cuda.synchronize()
            net.release()
            torch.cuda.synchronize()
        del net

    # -- one configuration ---------------------------------------------------
    def config(self, cfg):
        a, dev = self.a, self.dev
        L, H, B, T, I = CONFIGS[cfg]
        print(f'== {cfg}: L={L} H={H} B={B} T={T} I={I}', flush=True)
        data = make_data(cfg, dev, a.seed)
        x, h0, c0, cots = data
        cells = a.cells.split(',')
        ws = {cell: make_weights(cfg, cell, dev, a.seed + 1 + k)
              for k, cell in enumerate(cells)}
        # cuDNN's nn.LSTM serves lstm (same weights) and peephole (the
        # baseline); nn.GRU serves cho_gru.
        kinds = []
        if 'lstm' in cells or 'peephole' in cells:
            kinds.append(('lstm', 'lstm', ws.get('lstm') or make_weights(cfg, 'lstm', dev, a.seed + 1)))
        if 'cho_gru' in cells:
            kinds.append(('gru', 'cho_gru', ws['cho_gru']))
        if dev == 'cuda':
            for kind, cell, w in kinds:
                try:
                    mod = cudnn_module(kind, cfg, w, dev)
                    r = cudnn_reserve_bytes(mod, kind, cfg, x, h0, c0)
                    self.add(cfg=cfg, cell=cell, precision='-', impl=f'cuDNN {kind} reserve space',
                             reserve_bytes=r, info=f'{r / 2**20:.2f} MiB')
                    del mod
                except Exception as e:  # noqa: BLE001
                    self.add(cfg=cfg, cell=cell, precision='-', impl=f'cuDNN {kind} reserve space',
                             error=f'torch._cudnn_rnn failed: {e}'[:300])
                    # The fallback: how much more a forward that keeps what
                    # the backward needs holds at its peak than one without
                    # autograd (the reserve space, plus what autograd saves).
                    try:
                        extra = cudnn_peak_difference(kind, cfg, w, x, h0, c0)
                        self.add(cfg=cfg, cell=cell, precision='-',
                                 impl=f'cuDNN {kind} training-forward peak - inference peak',
                                 peak_difference_bytes=extra, info=f'{extra / 2**20:.2f} MiB')
                    except Exception as e2:  # noqa: BLE001
                        self.add(cfg=cfg, cell=cell, precision='-',
                                 impl=f'cuDNN {kind} training-forward peak - inference peak',
                                 error=f'{e2}'[:300])
        # The reference gradients: cuDNN's (lstm) or eager autograd's
        # (peephole, cho_gru) at the first precision (fp32, no TF32).
        refs = {}
        for prec in a.precisions.split(','):
            if dev == 'cuda':
                set_precision(prec)
            for kind, cell, w in kinds:
                g = self.cudnn(cfg, prec, kind, cell, w, data)
                if kind == 'lstm' and 'lstm' not in refs:
                    refs['lstm'] = (g, f'cuDNN {prec}')
            for cell in cells:
                # Eager autograd in fp32 and TF32 only (bf16: cuDNN and ours).
                if cell in EAGER and prec != 'bf16':
                    ref = refs.get(cell, (None, None))[0]
                    g = self.eager(cfg, prec, cell, ws[cell], data, ref)
                    if cell not in refs:
                        refs[cell] = (g, f'eager autograd {prec}')
            for cell in cells:
                ref, name = refs.get(cell, (None, None))
                self.ours(cfg, prec, cell, ws[cell], data, ref, name)
            if dev == 'cuda':
                torch.cuda.empty_cache()
        if dev == 'cuda':
            set_precision('fp32')
            torch.cuda.empty_cache()


def ratio_base(rows, r):
    """cuDNN captured in a CUDA graph (else plain) at r's precision: nn.GRU for
    cho_gru, nn.LSTM for the others."""
    gru = r['cell'] == 'cho_gru'
    for suffix in (' (graph)', ''):
        for q in rows:
            if (q['cfg'] == r['cfg'] and q['precision'] == r['precision'] and 'ms' in q
                    and q['impl'].startswith(('cuDNN nn.', 'torch.nn (CPU) nn.'))
                    and ('GRU' in q['impl']) == gru and q['impl'].endswith(suffix)
                    and (suffix or '(graph)' not in q['impl'])):
                return q['ms'], q['impl']
    return None, None


def table(rows):
    out = [f'{"config":9} {"cell":8} {"prec":4} {"implementation":36} {"ms":>9} {"x cuDNN graph":>13}'
           f'  {"grad err":>8}  notes']
    for r in rows:
        if 'ms' in r:
            base, _ = ratio_base(rows, r)
            ratio = f'{r["ms"] / base:13.2f}' if base else ' ' * 13
            ms = f'{r["ms"]:9.3f}'
        else:
            ratio, ms = ' ' * 13, ' ' * 9
        err = f'{r["rel_err"]:8.1e}' if 'rel_err' in r else ' ' * 8
        notes = []
        if 'saved_bytes' in r:
            notes.append(f'saved {r["saved_bytes"] / 2**20:.2f} MiB')
        if 'reserve_bytes' in r:
            notes.append(f'reserve {r["reserve_bytes"] / 2**20:.2f} MiB')
        if 'peak_difference_bytes' in r:
            notes.append(f'peak difference {r["peak_difference_bytes"] / 2**20:.2f} MiB (fallback)')
        if 'graph_check' in r:
            notes.append(f'replay vs direct {r["graph_check"]:.1e}')
        if 'train_check' in r:
            notes.append(f'backward vs grad {r["train_check"]:.1e}')
        if 'compile_s' in r:
            notes.append(f'compile {r["compile_s"]} s')
        for k in ('error', 'skipped', 'note'):
            if k in r:
                notes.append(f'{k}: {r[k]}')
        if 'nonfinite_gradients' in r:
            notes.append(f'NaN/Inf in gradients {r["nonfinite_gradients"]}')
        out.append(f'{r["cfg"]:9} {r["cell"]:8} {r["precision"]:4} {r["impl"]:36} {ms} {ratio}'
                   f'  {err}  {"; ".join(notes)}')
    return '\n'.join(out)


def unpack(lib_dir):
    """Unpacks gpu-build/NAME.tar.xz (bench/compile_train.sh) when the
    libraries of gpu-build/NAME are not there."""
    lib_dir = os.path.abspath(lib_dir)
    archive = os.path.join(os.path.dirname(lib_dir), os.path.basename(lib_dir) + '.tar.xz')
    if os.path.isdir(lib_dir) and any(f.endswith('.so') for f in os.listdir(lib_dir)):
        return
    if os.path.exists(archive):
        print(f'unpacking {archive}', flush=True)
        with tarfile.open(archive) as t:
            dest = os.path.dirname(os.path.abspath(lib_dir))
            try:
                t.extractall(dest, filter='data')
            except TypeError:  # Python without extraction filters
                t.extractall(dest)


def main():
    if len(sys.argv) in (5, 6) and sys.argv[1] == '--compile-child':
        compile_child(*sys.argv[2:4], int(sys.argv[4]), *sys.argv[5:])
        return 0
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--configs', default=DEFAULT_CONFIGS)
    p.add_argument('--cells', default='lstm,peephole,cho_gru')
    p.add_argument('--precisions', default='fp32,tf32')
    p.add_argument('--json', default=None, help='write the rows here (after each configuration)')
    p.add_argument('--lib-dir', default=None,
                   help='default: gpu-build/train (gpu-build/train-cpu with --device cpu)')
    p.add_argument('--device', choices=['cuda', 'cpu'], default='cuda')
    p.add_argument('--reps', type=int, default=20, help='most repetitions per figure')
    p.add_argument('--budget', type=float, default=0.6,
                   help='about this many seconds per figure (fewer repetitions when slow)')
    p.add_argument('--deadline', type=float, default=420,
                   help='seconds; figures not started by then are skipped')
    p.add_argument('--compile-configs', default='charrnn',
                   help='configurations on which torch.compile is timed ("" for none)')
    p.add_argument('--compile-cells', default='peephole,cho_gru')
    p.add_argument('--compile-timeout', type=float, default=300,
                   help='seconds from the start for a torch.compile child to have compiled')
    p.add_argument('--no-graphs', action='store_true')
    p.add_argument('--seed', type=int, default=0)
    a = p.parse_args()
    for cfg in a.configs.split(','):
        if cfg not in CONFIGS:
            p.error(f'unknown configuration {cfg} (one of {", ".join(CONFIGS)})')
    for cell in a.cells.split(','):
        if cell not in GATES:
            p.error(f'unknown cell {cell}')
    for prec in a.precisions.split(','):
        if prec not in ('fp32', 'tf32', 'bf16'):
            p.error(f'unknown precision {prec}')
    if a.device == 'cuda' and not torch.cuda.is_available():
        sys.exit('train_gpu.py: no CUDA device visible to PyTorch (--device cpu to check the script)')
    a.lib_dir = a.lib_dir or os.path.join(ROOT, 'gpu-build', 'train' if a.device == 'cuda' else 'train-cpu')
    unpack(a.lib_dir)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    bench = Bench(a)

    configs = a.configs.split(',')
    jobs = []
    compile_cfgs = [c for c in a.compile_configs.split(',') if c in configs]
    if a.device == 'cuda' and compile_cfgs:
        cpus = sorted(os.sched_getaffinity(0))
        child_cpus = set(cpus[len(cpus) // 2:]) if len(cpus) >= 8 else None
        if child_cpus:
            os.sched_setaffinity(0, set(cpus[:len(cpus) // 2]))
        for cfg in compile_cfgs:
            for cell in a.compile_cells.split(','):
                if cell in EAGER and cell in a.cells.split(','):
                    jobs.append(CompileJob(cfg, cell, a.seed, child_cpus))
        # The configurations compiled for go late (before `large`, the
        # longest): their children compile (and run their first steps)
        # while the others are timed.
        configs = ([c for c in configs if c not in compile_cfgs and c != 'large'] + compile_cfgs
                   + [c for c in configs if c == 'large' and c not in compile_cfgs])
        print(f'torch.compile: {len(jobs)} child processes compiling', flush=True)

    try:
        for cfg in configs:
            if bench.clock.left() <= 0:
                print(f'== {cfg}: skipped (deadline)', flush=True)
                bench.rows.append(dict(cfg=cfg, cell='-', precision='-', impl='-',
                                       skipped='deadline'))
                continue
            try:
                bench.config(cfg)
            except torch.cuda.OutOfMemoryError as e:
                bench.rows.append(dict(cfg=cfg, cell='-', precision='-', impl='-',
                                       error=f'out of memory: {e}'[:300]))
            if a.json:
                with open(a.json, 'w') as f:
                    json.dump(bench.rows, f, indent=1)
    except BaseException:
        for job in jobs:  # no orphaned compilers
            kill_tree(job.proc.pid)
        raise
    for job in jobs:
        row = job.result(a.compile_timeout - (time.time() - bench.clock.start))
        bench.add(**row)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(bench.rows, f, indent=1)
    print()
    print(table(bench.rows))
    print('\nx cuDNN graph: against cuDNN captured in a CUDA graph at the same precision, nn.LSTM for\n'
          'lstm and peephole (cuDNN has no peephole cell), nn.GRU for cho_gru (cuDNN\'s GRU applies the\n'
          'reset after the recurrent GEMM: the closest cuDNN cell, not the same one). grad err: the\n'
          'worst relative error of a gradient against cuDNN (lstm) or eager autograd (fp32).')
    print(f'\ntrain_gpu.py: {time.time() - bench.clock.start:.0f} s')
    return 0


if __name__ == '__main__':
    sys.exit(main())
