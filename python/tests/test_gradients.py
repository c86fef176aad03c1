# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Gradients from Python: networks compiled with gradients=True expose
grad, train and backward (lstm-differentiate), checked against central finite
differences of the compiled forward in float64, for cells of lstmc.cells and
a cell written here."""
import numpy as np
import pytest

import lstmc as lc
from lstmc import cells


def janet(c, x, hidden=6):
    """A cell nobody on the team wrote: JANET's forget-gate-only LSTM,
    c = f * c + (1 - sigmoid(s + shift)) * tanh(...), with the shift learned."""
    cs = c.state("c", hidden)
    Wf, Rf, bf = c.param("Wf", hidden, x.size), c.param("Rf", hidden, hidden), c.param("bf", hidden)
    Wc, Rc, bc = c.param("Wc", hidden, x.size), c.param("Rc", hidden, hidden), c.param("bc", hidden)
    h = lc.tanh(cs)
    f = lc.sigmoid(x @ Wf + h @ Rf + bf)
    keep = lc.one_minus(lc.sigmoid(x @ Wf + h @ Rf + bf + c.param("shift", hidden)))
    c_new = f * cs + keep * lc.tanh(x @ Wc + h @ Rc + bc)
    return lc.tanh(c_new), {"c": c_new}


CASES = [
    ("lstm", cells.lstm, {}),
    ("gru", cells.gru, {}),
    ("cho_gru", cells.cho_gru, {}),
    ("mgu", cells.mgu, {}),
    ("peephole", cells.greff, {}),
    ("ln_lstm", cells.ln_lstm, {}),
    ("lstm_2_layers", cells.lstm, {"num_layers": 2}),
    ("gru_bidirectional", cells.gru, {"direction": "bidirectional"}),
    ("lstm_lengths", cells.lstm, {"lengths": True}),
    ("janet", janet, {}),
]


def _inputs(net, T, B, rng):
    values = {}
    for a in net.args:
        shape = tuple(T if d == "T" else B if d == "B" else d for d in a.shape)
        if a.kind == "lengths":
            values[a.name] = rng.integers(1, T + 1, size=shape).astype(np.int32)
        else:
            values[a.name] = rng.uniform(-0.5, 0.5, size=shape)
    return values


@pytest.mark.parametrize("name,cell,options", CASES, ids=[c[0] for c in CASES])
def test_gradients_match_finite_differences(name, cell, options):
    net = lc.Network(cell, input_size=5, hidden=6, dtype="float64", **options)
    f = net.compile(target="cpu", gradients=True)
    rng = np.random.default_rng(7)
    args = _inputs(net, 4, 3, rng)
    outs = f(**args)
    cots = {f"d{r.name}": rng.standard_normal(o.shape) for r, o in zip(net.results, outs)}
    grads = dict(zip((r.name for r in f.grad.results), f.grad(**args, **cots)))
    assert set(grads) == {"d" + a.name for a in net.args if a.kind != "lengths"}

    def loss(values):
        return sum(float(np.sum(o * cots["d" + r.name]))
                   for r, o in zip(net.results, f(**values)))

    step = 1e-6
    for a in net.args:
        if a.kind == "lengths":
            continue
        v = rng.standard_normal(args[a.name].shape)
        plus = dict(args, **{a.name: args[a.name] + step * v})
        minus = dict(args, **{a.name: args[a.name] - step * v})
        fd = (loss(plus) - loss(minus)) / (2 * step)
        g = grads["d" + a.name]
        assert g.shape == args[a.name].shape
        assert abs(fd - np.sum(g * v)) <= 1e-6 * np.linalg.norm(g) * np.linalg.norm(v) + 1e-7, a.name

    # The training forward returns the forward's results first; the backward
    # on what it returned gives the same gradients, without a second forward.
    trained = dict(zip((r.name for r in f.train.results), f.train(**args)))
    for r, o in zip(net.results, outs):
        np.testing.assert_array_equal(trained[r.name], o)
    again = f.backward(**args, **trained, **cots)
    for (k, g), h in zip(grads.items(), again):
        np.testing.assert_allclose(h, g, rtol=1e-12, atol=1e-12, err_msg=k)


def test_cotangents_default_to_zeros():
    net = lc.Network(cells.rnn, input_size=3, hidden=4, dtype="float64")
    f = net.compile(target="cpu", gradients=True).bind(net.init_params())
    x = np.random.default_rng(1).uniform(-1, 1, (3, 2, 3))
    y, hT = f(x)
    # Only dhT: the gradient of sum(hT) alone.
    dx, dh0, *_ = f.grad(x, dhT=np.ones_like(hT))
    dx2, dh02, *_ = f.grad(x, dy=np.zeros_like(y), dhT=np.ones_like(hT))
    np.testing.assert_array_equal(dx, dx2)
    np.testing.assert_array_equal(dh0, dh02)
    assert np.abs(dx).sum() > 0


def test_train_only_gradients():
    """gradients="train": the training forward and the backward only (what
    lstmc.torch_module calls), neither `grad` nor its exported symbol, and
    the same gradients as the library with all three; other values are
    rejected."""
    net = lc.Network(cells.lstm, input_size=3, hidden=4, dtype="float64")
    full = net.compile(target="cpu", gradients=True)
    train = net.compile(target="cpu", gradients="train")
    assert not hasattr(train, "grad") and hasattr(train, "train") and hasattr(train, "backward")
    assert not hasattr(train.lib, "_mlir_ciface_forward_grad")
    rng = np.random.default_rng(3)
    args = _inputs(net, 5, 2, rng)
    outs = full(**args)
    cots = {f"d{r.name}": rng.standard_normal(o.shape) for r, o in zip(net.results, outs)}
    expected = full.grad(**args, **cots)
    trained = dict(zip((r.name for r in train.train.results), train.train(**args)))
    got = train.backward(**args, **trained, **cots)
    for e, g in zip(expected, got):
        np.testing.assert_allclose(g, e, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="gradients='all'"):
        net.compile(target="cpu", gradients="all")
