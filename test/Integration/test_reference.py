#!/usr/bin/env python3
"""Checks the numpy reference against torch.nn (float64, CPU) where PyTorch has the
same cell: lstm, varlen, lstmp, stack3, bidirectional, gru, rnn_tanh, rnn_relu, and
layernorm_stack2's layer norm against torch's.
Skips cleanly (exit 0) when torch is not importable."""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference as ref  # noqa: E402

try:
    import torch
except ImportError:
    print('SKIPPED: torch is not importable')
    sys.exit(0)

H, I = ref.H, ref.I
T, B = 7, 4


def t64(a):
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float64))


OURS = {'weight_ih': 'W', 'weight_hh': 'R', 'bias_ih': 'bW', 'bias_hh': 'bR', 'weight_hr': 'Whr'}


def load(module, a, name):
    """Copies our arguments into every parameter of a torch module, e.g.
    weight_ih_l1 <- W1 (stack3), weight_hh_l0_reverse <- R_rev, bias_ih_l0 <- bW."""
    for pname, p in module.named_parameters():
        kind, layer = pname.rsplit('_l', 1)
        key = OURS[kind] + (layer[0] if name == 'stack3' else
                            '_rev' if layer.endswith('_reverse') else '')
        p.data.copy_(t64(a[key]))


def run_torch(name, a):
    x, h0 = t64(a['x']), t64(a['h0'])
    with torch.no_grad():
        if name in ('lstm', 'varlen', 'lstmp', 'stack3', 'bidirectional'):
            m = torch.nn.LSTM(I, H, num_layers=3 if name == 'stack3' else 1,
                              bidirectional=name == 'bidirectional',
                              proj_size=ref.P if name == 'lstmp' else 0).double()
            load(m, a, name)
            c0 = t64(a['c0'])
            if h0.dim() == 2:
                h0, c0 = h0[None], c0[None]
            if name == 'varlen':
                packed = torch.nn.utils.rnn.pack_padded_sequence(
                    x, torch.from_numpy(a['lengths'].astype(np.int64)), enforce_sorted=False)
                y, (h, c) = m(packed, (h0, c0))
                y = torch.nn.utils.rnn.pad_packed_sequence(y, total_length=x.shape[0])[0]
            else:
                y, (h, c) = m(x, (h0, c0))
            if name not in ('stack3', 'bidirectional'):
                h, c = h[0], c[0]
            return [y, h, c]
        if name == 'gru':
            m = torch.nn.GRU(I, H).double()
        else:
            m = torch.nn.RNN(I, H, nonlinearity=name[4:]).double()
        load(m, a, name)
        y, h = m(x, h0[None])
        return [y, h[0]]


def main():
    rng = np.random.default_rng(0)
    failed = False
    for name in ('lstm', 'varlen', 'lstmp', 'stack3', 'bidirectional', 'gru', 'rnn_tanh',
                 'rnn_relu'):
        inputs = ref.make_inputs(name, T, B, rng)
        a = {n: v for (n, _, _), v in zip(ref.EXAMPLES[name][0], inputs)}
        ours = ref.expected(name, inputs)
        theirs = [v.numpy() for v in run_torch(name, a)]
        errs = [np.abs(o - t).max() if o.shape == t.shape else np.inf
                for o, t in zip(ours, theirs)]
        ok = len(ours) == len(theirs) and max(errs) < 1e-12
        failed |= not ok
        print(f'{name}: max abs diff vs torch.nn {max(errs):.1e} {"OK" if ok else "FAIL"}')
    # layernorm_stack2's normalisation against torch's layer_norm (gain 1 + g).
    v, g, b = rng.standard_normal((B, 4 * H)), rng.uniform(-1, 1, 4 * H), rng.uniform(-1, 1, 4 * H)
    theirs = torch.nn.functional.layer_norm(t64(v), (4 * H,), t64(1 + g), t64(b), eps=1e-5)
    err = np.abs(ref.layer_norm(v, g, b) - theirs.numpy()).max()
    failed |= not err < 1e-12
    print(f'layer_norm: max abs diff vs torch layer_norm {err:.1e} {"OK" if err < 1e-12 else "FAIL"}')
    print('FAILED' if failed else 'PASSED')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
