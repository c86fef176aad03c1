#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Turns the JSON of bench/run_gpu.py (one or more runs, later ones replacing
the rows they repeat) into the markdown
table of docs/benchmarks.md and a plot of the optimisation ladder.

  report.py RUN.json [RUN.json ...] --markdown OUT.md [--summary OUT.md] [--plot OUT.png]
"""
import argparse
import json


GRAPH = ' (CUDA graph)'


def cudnn_ms(rows, cfg, cell, precision, graph):
    """cuDNN's time for `cfg` (its LSTM, or its GRU for a GRU cell) at
    `precision` (None for fp32), captured in a CUDA graph or not."""
    impl = (f'cudnn-{precision}' if precision else 'cudnn') + (GRAPH if graph else '')
    gru = 'gru' in cell
    return next((q['ms'] for q in rows if q['cfg'] == cfg and q['impl'] == impl
                 and ('gru' in q['cell']) == gru), None)


def precision_of(impl):
    """'tf32' or 'bf16' for an implementation at that precision (its name
    says so: all-tf32, cudnn-bf16, ...), None for fp32."""
    return next((p for p in ('tf32', 'bf16') if f'-{p}' in impl), None)


def cudnn_base(rows, r):
    """cuDNN at `r`'s precision, called the way `r` was: a CUDA-graph replay
    is compared with cuDNN's replay, a plain call with cuDNN's plain call."""
    return cudnn_ms(rows, r['cfg'], r['cell'], precision_of(r['impl']),
                    r['impl'].endswith(GRAPH))


def markdown(rows):
    out = ['| config | cell | implementation | ms | TFLOP/s | × cuDNN (same precision, called alike) |',
           '| --- | --- | --- | ---: | ---: | ---: |']
    for r in rows:
        base = cudnn_base(rows, r)
        ratio = f'{r["ms"] / base:.2f}' if base else ''
        extra = f' (compile {r["compile_s"]} s)' if 'compile_s' in r else ''
        out.append(f'| {r["cfg"]} | {r["cell"]} | {r["impl"]}{extra} | {r["ms"]:.3f} | '
                   f'{r.get("tflops", 0):.2f} | {ratio} |')
    return '\n'.join(out) + '\n'


def summary(rows):
    """One line per configuration and cell: this project's fastest fp32
    level (and its fastest at any precision) against the baselines; every
    ratio is against cuDNN called alike (graph replay or plain call)."""
    out = ['| config | cell | fastest fp32 level | ms | × cuDNN fp32 | fastest level (any precision) | ms | '
           '× cuDNN at that precision | CUDA-graph eager ms | torch.compile ms |',
           '| --- | --- | --- | ---: | ---: | --- | ---: | ---: | ---: | ---: |']
    keys = list(dict.fromkeys((r['cfg'], r['cell']) for r in rows
                              if r['impl'].startswith('lstm-compiler/')))
    for cfg, cell in keys:
        ours = [r for r in rows if (r['cfg'], r['cell']) == (cfg, cell)
                and r['impl'].startswith('lstm-compiler/')]
        fp32 = [r for r in ours if 'tf32' not in r['impl'] and 'bf16' not in r['impl']]
        best32, best = min(fp32, key=lambda r: r['ms']), min(ours, key=lambda r: r['ms'])

        def other(impl):
            q = next((q for q in rows if (q['cfg'], q['cell'], q['impl'].split(' (')[0])
                      == (cfg, cell, impl)), None)
            return f'{q["ms"]:.3f}' if q else ''

        def ratio(r, precision=None):
            # cuDNN at `precision`, called the way `r` was (graph or plain).
            ref = cudnn_ms(rows, cfg, cell, precision, r['impl'].endswith(GRAPH))
            return f'{r["ms"] / ref:.2f}' if ref else ''

        out.append(f'| {cfg} | {cell} | {best32["impl"].split("/", 1)[1]} | {best32["ms"]:.3f} | '
                   f'{ratio(best32)} | {best["impl"].split("/", 1)[1]} | {best["ms"]:.3f} | '
                   f'{ratio(best, precision_of(best["impl"]))} | {other("cuda-graph eager")} | {other("torch.compile")} |')
    return '\n'.join(out) + '\n'


def plot(rows, path):
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    cfgs = list(dict.fromkeys(r['cfg'] for r in rows))
    cells = ['lstm', 'peephole', 'cho_gru']
    fig, axes = plt.subplots(1, len(cfgs), figsize=(4 * len(cfgs), 4), squeeze=False)
    for ax, cfg in zip(axes[0], cfgs):
        for cell in cells:
            ours = [r for r in rows if r['cfg'] == cfg and r['cell'] == cell
                    and r['impl'].startswith('lstm-compiler/')]
            if not ours:
                continue
            ax.plot([r['impl'].split('/', 1)[1] for r in ours], [r['ms'] for r in ours],
                    marker='o', label=cell)
        for q in rows:
            if q['cfg'] == cfg and q['impl'] in ('cudnn', 'cudnn' + GRAPH):
                graph = q['impl'] != 'cudnn'
                ax.axhline(q['ms'], linestyle=':' if graph else '--',
                           color='gray' if 'gru' in q['cell'] else 'black',
                           label=f'cuDNN {"GRU" if "gru" in q["cell"] else "LSTM"} fp32'
                                 + (' (graph)' if graph else ''))
        ax.set_yscale('log')
        ax.set_title(cfg)
        ax.set_ylabel('ms (forward)')
        ax.tick_params(axis='x', rotation=60)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    p = argparse.ArgumentParser()
    p.add_argument('runs', nargs='+')
    p.add_argument('--markdown', required=True)
    p.add_argument('--plot')
    p.add_argument('--summary', help='also write the one-line-per-network summary table here')
    a = p.parse_args()
    # A later run's row replaces an earlier one of the same configuration,
    # cell and implementation (a re-run of some levels).
    rows = {}
    for path in a.runs:
        with open(path) as f:
            for r in json.load(f):
                rows[(r['cfg'], r['cell'], r['impl'])] = r
    order = ['charrnn', 'appleyard', 'latency', 'deepbench', 'large']
    rows = sorted(rows.values(), key=lambda r: order.index(r['cfg']) if r['cfg'] in order else 99)
    with open(a.markdown, 'w') as f:
        f.write(markdown(rows))
    if a.summary:
        with open(a.summary, 'w') as f:
            f.write(summary(rows))
    if a.plot:
        plot(rows, a.plot)


if __name__ == '__main__':
    main()
