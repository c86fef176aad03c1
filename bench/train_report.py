#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Turns the JSON of bench/train_gpu.py into the markdown tables of docs/training-gpu.md.

  train_report.py RUN.json [RUN.json ...] --markdown OUT.md

A later run's row of a baseline (cuDNN, eager autograd, torch.compile)
replaces an earlier one of the same configuration, cell, precision and
implementation; our rows of several runs are all kept, each named after its
file (`ours forward_grad (graph) [train-persistent]`, the path where two
files share a name: runs of different libraries, such as
bench/compile_train.sh's and its PERSISTENT=1 ones, time the same
functions), so that the summary takes the fastest. Two tables: every row
(ms, ratio to cuDNN captured in a CUDA graph at the same precision,
gradient error, memory), and
one line per configuration, cell and precision: our fastest training step
beside cuDNN's, eager autograd's and torch.compile's.
"""
import argparse
import json
import os

ORDER = ['charrnn', 'appleyard', 'latency', 'deepbench', 'large', 'tiny']


def cudnn_graph(rows, r):
    """cuDNN captured in a CUDA graph (else plain) at r's precision: nn.GRU for
    cho_gru, nn.LSTM otherwise."""
    gru = r['cell'] == 'cho_gru'
    for graph in (True, False):
        for q in rows:
            if (q['cfg'], q['precision']) == (r['cfg'], r['precision']) and 'ms' in q \
                    and ' nn.' in q['impl'] and ('GRU' in q['impl']) == gru \
                    and ('(graph)' in q['impl']) == graph:
                return q
    return None


def mib(b):
    return f'{b / 2**20:.2f}'


def full_table(rows):
    out = ['| config | cell | precision | implementation | ms | × cuDNN graph | grad rel. err | memory | notes |',
           '| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |']
    for r in rows:
        base = cudnn_graph(rows, r) if 'ms' in r else None
        ratio = f'{r["ms"] / base["ms"]:.2f}' if base else ''
        mem = []
        if 'saved_bytes' in r:
            mem.append(f'saved {mib(r["saved_bytes"])} MiB')
        if 'reserve_bytes' in r:
            mem.append(f'reserve {mib(r["reserve_bytes"])} MiB')
        if 'peak_difference_bytes' in r:
            mem.append(f'training-forward peak above inference {mib(r["peak_difference_bytes"])} MiB')
        notes = []
        if 'compile_s' in r:
            notes.append(f'compile {r["compile_s"]} s')
        if 'graph_check' in r:
            notes.append(f'replay vs direct {r["graph_check"]:.1e}')
        if 'train_check' in r:
            notes.append(f'backward vs grad {r["train_check"]:.1e}')
        for k in ('error', 'skipped', 'note'):
            if k in r:
                notes.append(f'{k}: {r[k]}')
        err = f'{r["rel_err"]:.1e}' if 'rel_err' in r else ''
        ms = f'{r["ms"]:.3f}' if 'ms' in r else ''
        out.append(f'| {r["cfg"]} | {r["cell"]} | {r["precision"]} | {r["impl"]} | {ms} | {ratio} | '
                   f'{err} | {"; ".join(mem)} | {"; ".join(notes).replace("|", "/")} |')
    return '\n'.join(out) + '\n'


def summary_table(rows):
    out = ['| config | cell | precision | ours: fastest step | ms | cuDNN graph ms | × cuDNN graph | '
           'eager graph ms | torch.compile ms | our saved MiB | cuDNN reserve MiB | grad rel. err |',
           '| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |']
    keys = list(dict.fromkeys((r['cfg'], r['cell'], r['precision']) for r in rows
                              if r['impl'].startswith('ours') and 'ms' in r))
    for cfg, cell, prec in keys:
        mine = [r for r in rows if (r['cfg'], r['cell'], r['precision']) == (cfg, cell, prec)]
        ours = [r for r in mine if r['impl'].startswith('ours') and 'ms' in r]
        best = min(ours, key=lambda r: r['ms'])
        base = cudnn_graph(rows, best)

        def ms_of(impl):
            q = next((q for q in mine if q['impl'] == impl and 'ms' in q), None)
            return f'{q["ms"]:.3f}' if q else ''
        saved = next((r['saved_bytes'] for r in ours if 'saved_bytes' in r), None)
        kind = 'gru' if cell == 'cho_gru' else 'lstm'
        reserve = next((r['reserve_bytes'] for r in rows if r['cfg'] == cfg
                        and r['impl'] == f'cuDNN {kind} reserve space' and 'reserve_bytes' in r), None)
        err = next((r['rel_err'] for r in ours if 'rel_err' in r), None)
        cells = [cfg, cell, prec, best['impl'][len('ours '):], f'{best["ms"]:.3f}',
                 f'{base["ms"]:.3f}' if base else '',
                 f'{best["ms"] / base["ms"]:.2f}' if base else '',
                 ms_of('eager autograd (graph)'), ms_of('torch.compile reduce-overhead'),
                 mib(saved) if saved is not None else '',
                 mib(reserve) if reserve is not None else '',
                 f'{err:.1e}' if err is not None else '']
        out.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(out) + '\n'


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('runs', nargs='+')
    p.add_argument('--markdown', required=True)
    a = p.parse_args()
    rows = {}
    stems = [os.path.splitext(os.path.basename(path))[0] for path in a.runs]
    if len(set(stems)) < len(stems):
        stems = list(a.runs)
    for path, stem in zip(a.runs, stems):
        try:
            with open(path) as f:
                run = json.load(f)
        except (OSError, ValueError) as e:
            raise SystemExit(f'train_report.py: cannot read {path}: {e}') from None
        for r in run:
            if r['impl'].startswith('ours') and len(a.runs) > 1:
                r = dict(r, impl=f"{r['impl']} [{stem}]")
            rows[(r['cfg'], r['cell'], r['precision'], r['impl'])] = r
    rows = sorted(rows.values(), key=lambda r: ORDER.index(r['cfg']) if r['cfg'] in ORDER else 99)
    with open(a.markdown, 'w') as f:
        f.write('### Summary (training step: forward + backward)\n\n')
        f.write(summary_table(rows))
        f.write('\n### Every figure\n\n')
        f.write(full_table(rows))


if __name__ == '__main__':
    main()
