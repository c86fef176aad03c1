#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Times the compiled benchmark networks beside PyTorch in one run (GPU machine).

  run_gpu.py [--configs charrnn,...] [--json OUT.json]

For each configuration of shared/docs/BENCHMARKS.md: this project's networks
(gpu-build/bench/CONFIG_CELL_LEVEL.so, from bench/compile.sh) for the PyTorch
LSTM, the peephole LSTM and Cho's GRU at each optimisation level, PyTorch's
cuDNN nn.LSTM / nn.GRU (fp32, TF32 and bf16, each as a plain call and
captured in a CUDA graph) and an eager PyTorch peephole LSTM (combined GEMMs,
hoisted input projection) as the baseline cuDNN lacks. Ratios compare like
with like: our CUDA-graph replays with cuDNN's, plain calls with plain calls. The
LSTM's outputs are checked against cuDNN's on the same weights. Forward pass
over the whole sequence, median of 20 after warm-up.
"""
import argparse
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test', 'GPU'))
from compiled_net import CompiledNet  # noqa: E402

CONFIGS = {  # L, H, B, T, I
    'charrnn': (2, 128, 50, 50, 65), 'appleyard': (4, 512, 64, 100, 512),
    'latency': (2, 512, 1, 100, 512), 'deepbench': (1, 1024, 32, 50, 1024),
    'large': (2, 2048, 128, 50, 2048)}
LEVELS = [line.split('|')[0].strip() for line in open(
    os.path.join(os.path.dirname(os.path.abspath(__file__)), 'levels.txt'))
    if line.strip() and not line.startswith('#')]


def median_ms(fn, warm=3, reps=20):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter(); fn(); torch.cuda.synchronize()
    if time.perf_counter() - t0 > 0.5:
        reps = 3  # the naive levels of the large shapes take seconds
    ts = []
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter(); fn(); torch.cuda.synchronize()
        ts.append((time.perf_counter() - t0) * 1e3)
    return sorted(ts)[len(ts) // 2]


def with_tf32(fn):
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    try:
        return fn()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False


def warm_up_on_side_stream(fn, times=3):
    """Runs `fn` `times` times on a side stream, as PyTorch asks before a
    CUDA graph capture, the current stream waiting for it."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(times):
            fn()
    torch.cuda.current_stream().wait_stream(s)


def graph_ms(fn):
    """`fn` captured in a CUDA graph (after warm-up on a side stream, as
    PyTorch recommends) and replayed: the baseline our CUDA-graph rows are
    compared with."""
    with torch.no_grad():
        warm_up_on_side_stream(fn)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            fn()
        ms = median_ms(graph.replay)
        del graph
        return ms


def cudnn_rows(rows, cfg, cell, mod, x, state):
    """cuDNN in fp32, TF32 and bf16 (a bf16 copy of `mod`, inputs and
    states), each as a plain call and captured in a CUDA graph."""
    import copy
    mb = copy.deepcopy(mod).to(torch.bfloat16)
    # The copy's weights as one buffer again (cuDNN compacts scattered
    # weights at every call, a copy PyTorch warns about; the bf16 rows of
    # 2026-11-24 to 2026-12-01 timed that copy too).
    mb.flatten_parameters()
    xb = x.to(torch.bfloat16)
    sb = tuple(t.to(torch.bfloat16) for t in state) if isinstance(state, tuple) \
        else state.to(torch.bfloat16)
    runs = {'cudnn': lambda: mod(x, state), 'cudnn-bf16': lambda: mb(xb, sb)}
    with torch.no_grad():
        for impl, fn in runs.items():
            rows.append(dict(cfg=cfg, cell=cell, impl=impl, ms=median_ms(fn)))
            rows.append(dict(cfg=cfg, cell=cell, impl=f'{impl} (CUDA graph)', ms=graph_ms(fn)))
        rows.append(dict(cfg=cfg, cell=cell, impl='cudnn-tf32',
                         ms=with_tf32(lambda: median_ms(runs['cudnn']))))
        rows.append(dict(cfg=cfg, cell=cell, impl='cudnn-tf32 (CUDA graph)',
                         ms=with_tf32(lambda: graph_ms(runs['cudnn']))))


def baselines(rows, cfg, cell, eager, a):
    """Eager PyTorch, the same captured in a CUDA graph, and (for the
    configurations asked for) torch.compile with CUDA graphs."""
    with torch.no_grad():
        rows.append(dict(cfg=cfg, cell=cell, impl='eager', ms=median_ms(eager, 1, 5)))
        warm_up_on_side_stream(eager, times=1)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            eager()
        rows.append(dict(cfg=cfg, cell=cell, impl='cuda-graph eager', ms=median_ms(graph.replay)))
        del graph
        if cfg in a.compile_configs.split(','):
            t0 = time.perf_counter()
            compiled = torch.compile(eager, mode='reduce-overhead')
            compiled()
            compile_s = time.perf_counter() - t0
            rows.append(dict(cfg=cfg, cell=cell, impl='torch.compile (reduce-overhead)',
                             ms=median_ms(compiled), compile_s=round(compile_s, 1)))


def capture_compiled(net, args, ranks):
    """The compiled network captured in a CUDA graph: (graph, its outputs).
    The run is capturable because it only queues work on the caller's
    stream and its buffers come from the runtime's cache, filled by the
    warm-up runs; warm-up and capture share one stream, since the runtime
    caches its buffers per stream (the captured run allocates nothing)."""
    cur = torch.cuda.current_stream()
    s = torch.cuda.Stream()
    s.wait_stream(cur)
    with torch.cuda.stream(s):
        for _ in range(2):
            net(args, ranks, check=False)
    cur.wait_stream(s)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=s):
        outs = net(args, ranks, check=False)
    return graph, outs


def graph_row(rows, cfg, cell, level, net, args, ranks, ref):
    """The compiled network captured in a CUDA graph and replayed: the host
    cost of its launches goes away, as for 'cuda-graph eager'."""
    try:
        graph, outs = capture_compiled(net, args, ranks)
    except RuntimeError as e:
        print(f'{cfg} {cell} {level}: CUDA graph capture failed: {e}', flush=True)
        return
    row = dict(cfg=cfg, cell=cell, impl=f'lstm-compiler/{level} (CUDA graph)',
               ms=median_ms(graph.replay))
    if ref is not None:
        graph.replay()
        torch.cuda.synchronize()
        r = ref[0]
        row['rel_err_vs_cudnn'] = float((outs[0] - r).norm() / r.norm())
    rows.append(row)
    del graph, outs


def lstm_flops(L, H, B, T, I, G=4):
    return sum(2 * B * ((I if l == 0 else H) + H) * G * H * T for l in range(L))


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--configs', default=','.join(CONFIGS))
    p.add_argument('--json', default=None)
    p.add_argument('--levels', default=None,
                   help='comma-separated levels of bench/levels.txt to time (default: all)')
    p.add_argument('--compile-configs', default='charrnn,deepbench',
                   help='configurations on which torch.compile is timed (it takes ~30 s each)')
    p.add_argument('--graph-levels', default='all,all-tf32,all-bf16',
                   help='levels also timed as a captured CUDA graph')
    a = p.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    rows, graph_jobs = [], []
    for cfg in a.configs.split(','):
        L, H, B, T, I = CONFIGS[cfg]
        x = torch.rand(T, B, I, device='cuda') * 2 - 1
        h0 = torch.zeros(L, B, H, device='cuda').uniform_(-1, 1)
        c0 = torch.zeros(L, B, H, device='cuda').uniform_(-1, 1)
        for cell in ['lstm', 'peephole', 'cho_gru']:
            G = 3 if cell == 'cho_gru' else 4
            flops = lstm_flops(L, H, B, T, I, G)
            ref = None
            if cell == 'lstm':
                mod = torch.nn.LSTM(I, H, L).cuda()
                params = []
                for l in range(L):
                    params += [getattr(mod, f'{n}_l{l}').detach() for n in
                               ('weight_ih', 'weight_hh', 'bias_ih', 'bias_hh')]
                with torch.no_grad():
                    ref = mod(x, (h0, c0))
                cudnn_rows(rows, cfg, cell, mod, x, (h0, c0))
                args = [x, h0, c0] + params
            elif cell == 'cho_gru':
                mod = torch.nn.GRU(I, H, L).cuda()
                cudnn_rows(rows, cfg, 'gru (cuDNN formula)', mod, x, h0)
                k = 1 / math.sqrt(H)
                params = []
                for l in range(L):
                    il = I if l == 0 else H
                    params += [(torch.rand(3 * H, il, device='cuda') * 2 - 1) * k,
                               (torch.rand(3 * H, H, device='cuda') * 2 - 1) * k,
                               (torch.rand(3 * H, device='cuda') * 2 - 1) * k,
                               (torch.rand(3 * H, device='cuda') * 2 - 1) * k]
                args = [x, h0] + params
                ws = [params[4 * l:4 * l + 4] for l in range(L)]

                def eager():
                    inp = x
                    for l, (W, R, bW, bR) in enumerate(ws):
                        xp = (inp.reshape(T * B, -1) @ W.t() + bW).reshape(T, B, -1)
                        Rr, Rz, Rn = R.chunk(3, 0)
                        br, bz, bn = bR.chunk(3)
                        h, outs = h0[l], []
                        for t in range(T):
                            xr, xz, xn = xp[t].chunk(3, 1)
                            r = torch.sigmoid(xr + h @ Rr.t() + br)
                            z = torch.sigmoid(xz + h @ Rz.t() + bz)
                            n = torch.tanh(xn + (r * h) @ Rn.t() + bn)
                            h = (1 - z) * n + z * h
                            outs.append(h)
                        inp = torch.stack(outs)
                    return inp
                baselines(rows, cfg, cell, eager, a)
            else:
                k = 1 / math.sqrt(H)
                params, ws = [], []
                for l in range(L):
                    il = I if l == 0 else H
                    w = [(torch.rand(4 * H, il, device='cuda') * 2 - 1) * k,
                         (torch.rand(4 * H, H, device='cuda') * 2 - 1) * k,
                         (torch.rand(4 * H, device='cuda') * 2 - 1) * k,
                         (torch.rand(4 * H, device='cuda') * 2 - 1) * k,
                         (torch.rand(3, H, device='cuda') * 2 - 1) * k]
                    params += w
                    ws.append(w)

                def eager():
                    inp = x
                    for l, (W, R, bW, bR, P) in enumerate(ws):
                        xp = (inp.reshape(T * B, -1) @ W.t() + bW + bR).reshape(T, B, -1)
                        h, c, outs = h0[l], c0[l], []
                        for t in range(T):
                            g = xp[t] + h @ R.t()
                            i, f, z, o = g.chunk(4, 1)
                            i = torch.sigmoid(i + P[0] * c)
                            f = torch.sigmoid(f + P[1] * c)
                            c = torch.tanh(z) * i + c * f
                            o = torch.sigmoid(o + P[2] * c)
                            h = torch.tanh(c) * o
                            outs.append(h)
                        inp = torch.stack(outs)
                    return inp
                baselines(rows, cfg, cell, eager, a)
                args = [x, h0, c0] + params
            ranks = [3, 3] + ([3] if cell != 'cho_gru' else [])
            for level in (a.levels.split(',') if a.levels else LEVELS):
                path = f'gpu-build/bench/{cfg}_{cell}_{level}.so'
                if not os.path.exists(path):
                    continue
                torch.cuda.empty_cache()
                net = CompiledNet(path)
                ms = median_ms(lambda: net(args, ranks))
                row = dict(cfg=cfg, cell=cell, impl=f'lstm-compiler/{level}', ms=ms)
                if ref is not None:
                    out = net(args, ranks)
                    r = ref[0]
                    row['rel_err_vs_cudnn'] = float((out[0] - r).norm() / r.norm())
                rows.append(row)
                if level in a.graph_levels.split(','):
                    graph_jobs.append((cfg, cell, level, net, args, ranks, ref))
    # Captures last: a failed capture leaves PyTorch's random generator
    # unusable for the rest of the process.
    for job in graph_jobs:
        graph_row(rows, *job)
    for cfg in a.configs.split(','):
        L, H, B, T, I = CONFIGS[cfg]
        for r in rows:
            if r['cfg'] == cfg and 'tflops' not in r:
                G = 3 if 'gru' in r['cell'] else 4
                r['tflops'] = round(lstm_flops(L, H, B, T, I, G) / r['ms'] / 1e9, 3)
                print(json.dumps(r), flush=True)
    print()
    # Like with like: a CUDA-graph row against cuDNN captured the same way, a
    # plain call against cuDNN's plain call, each at its own precision (an
    # -tf32 or -bf16 level against cuDNN at that precision).
    print(f'{"config":10} {"cell":20} {"implementation":34} {"ms":>10} {"TFLOP/s":>8} {"x cuDNN":>8}')
    for r in rows:
        precision = next((p for p in ('-tf32', '-bf16') if p in r['impl']), '')
        impl = 'cudnn' + precision + (' (CUDA graph)' if r['impl'].endswith('(CUDA graph)') else '')
        base = next((q['ms'] for q in rows if q['cfg'] == r['cfg'] and q['impl'] == impl
                     and (('gru' in q['cell']) == ('gru' in r['cell']))), None)
        ratio = f'{r["ms"] / base:8.2f}' if base else ''
        print(f'{r["cfg"]:10} {r["cell"]:20} {r["impl"]:34} {r["ms"]:10.3f} {r["tflops"]:8.2f} {ratio}')
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


if __name__ == '__main__':
    main()
