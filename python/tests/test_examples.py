# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Every cell of VARIANTS.md, written in Python (lstmc.cells): the IR equals
the hand-written examples/*.mlir after canonicalisation, and the compiled
network matches the float64 numpy reference on the CPU."""
import os

import numpy as np
import pytest

import lstmc as lc
import lstmc.compiler
import reference as ref
from cases import EXAMPLES, network
from irnorm import canonical
from conftest import ROOT

NAMES = sorted(EXAMPLES)
TOL = 1e-5  # fp32, VARIANTS.md


def canon(ir):
    return canonical(lc.compiler.canonicalize(ir))


@pytest.mark.parametrize("name", NAMES)
def test_ir_matches_example(name):
    with open(os.path.join(ROOT, "examples", name + ".mlir")) as f:
        expected = canon(f.read())
    assert canon(network(name).ir) == expected


def test_ir_comparison_sees_differences():
    """The comparison is not vacuous: another cell's IR differs."""
    with open(os.path.join(ROOT, "examples", "gru.mlir")) as f:
        gru = canon(f.read())
    assert canon(network("cho_gru").ir) != gru


_compiled = {}


def compiled(name):
    if name not in _compiled:
        _compiled[name] = network(name).compile(target="cpu")
    return _compiled[name]


def rel_error(out, exp):
    assert np.isfinite(out).all()
    return np.linalg.norm(out - exp) / np.linalg.norm(exp)


@pytest.mark.parametrize("T,B", [(1, 1), (1, 4), (6, 1), (5, 3)])
@pytest.mark.parametrize("name", NAMES)
def test_matches_reference(name, T, B):
    rng = np.random.default_rng(abs(hash((name, T, B))) % 2**32)
    inputs = ref.make_inputs(name, T, B, rng)
    outs = compiled(name)(*inputs)
    exps = ref.expected(name, inputs)
    assert len(outs) == len(exps)
    for out, exp in zip(outs, exps):
        assert out.shape == exp.shape
        assert rel_error(out, exp) < TOL


def test_without_pre_passes():
    rng = np.random.default_rng(1)
    inputs = ref.make_inputs("gru", 4, 2, rng)
    f = network("gru").compile(target="cpu", pre_passes="")
    for out, exp in zip(f(*inputs), ref.expected("gru", inputs)):
        assert rel_error(out, exp) < TOL


def test_reverse_direction_and_float64():
    net = lc.Network(lc.cells.rnn, input_size=5, hidden=7, direction="reverse",
                     dtype="float64")
    p = net.init_params(seed=3)
    f = net.compile().bind(p)
    x = np.random.default_rng(2).uniform(-1, 1, (4, 3, 5))
    y, hT = f(x)
    step = ref.rnn(np.tanh)(p["W"], p["R"], p["bW"], p["bR"])
    ey, (eh,) = ref.run_layer(step, x, (np.zeros((3, 7)),), reverse=True)
    assert y.dtype == np.float64
    assert rel_error(y, ey) < 1e-12 and rel_error(hT, eh) < 1e-12


def ln(a, g, s, eps=1e-5):
    m = a.mean(axis=1, keepdims=True)
    v = ((a - m) ** 2).mean(axis=1, keepdims=True)
    return (a - m) / np.sqrt(v + eps) * g + s


def test_layer_norm_lstm():
    """The layer-normalised LSTM of VARIANTS.md against its own numpy
    reference (there is no hand-written example of it)."""
    I, H, T, B = 6, 8, 5, 3
    net = lc.Network(lc.cells.ln_lstm, input_size=I, hidden=H)
    p = net.init_params(seed=4)
    rng = np.random.default_rng(5)
    p["g"] = rng.uniform(0.5, 1.5, 4 * H).astype(np.float32)
    p["g_c"] = rng.uniform(0.5, 1.5, H).astype(np.float32)
    x = rng.uniform(-1, 1, (T, B, I)).astype(np.float32)
    y, hT, cT = net.compile().bind(p)(x)
    q = {k: v.astype(np.float64) for k, v in p.items()}

    def step(xt, s):
        h, c = s
        a = ln(xt @ q["W"].T + h @ q["R"].T + q["b"], q["g"], q["s"])
        i, f, g, o = np.split(a, 4, axis=1)
        c = ref.sigmoid(f) * c + ref.sigmoid(i) * np.tanh(g)
        h = ref.sigmoid(o) * np.tanh(ln(c, q["g_c"], q["s_c"]))
        return h, (h, c)
    ey, (eh, ec) = ref.run_layer(step, x.astype(np.float64), (np.zeros((B, H)),) * 2)
    assert rel_error(y, ey) < TOL and rel_error(hT, eh) < TOL and rel_error(cT, ec) < TOL
