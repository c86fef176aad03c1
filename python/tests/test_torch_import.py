# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""More PyTorch imports (lstmc.interop): the one-step cells nn.LSTMCell,
nn.GRUCell, nn.RNNCell and nn.RNN through from_torch and TorchLike, against
the modules in float64; state_dicts with a prefix (a whole model's
checkpoint) and of a cell; float16 / bfloat16 modules; and the errors of
bad imports, each saying what was expected."""
import numpy as np
import pytest

import lstmc as lc

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="PyTorch is not installed; interop tests skipped")

TOL = 1e-5  # fp32 against float64 (VARIANTS.md)


def rel(a, b):
    a = a.detach().numpy() if hasattr(a, "detach") else np.asarray(a)
    b = b.detach().numpy() if hasattr(b, "detach") else np.asarray(b)
    assert np.isfinite(a).all()
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def double(module):
    """A float64 copy of a module (the reference)."""
    import copy
    return copy.deepcopy(module).double()


CELLS = [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {"nonlinearity": "tanh"}),
         ("RNNCell", {"nonlinearity": "relu"}), ("LSTMCell", {"bias": False})]


@pytest.mark.parametrize("name,opts", CELLS)
def test_cell_one_step(name, opts):
    torch.manual_seed(0)
    cell = getattr(torch.nn, name)(5, 7, **opts)
    net, params = lc.from_torch(cell)
    assert net.num_layers == 1 and net.direction == "forward" and net.dtype == "float32"
    f = lc.TorchLike(cell)
    B = 4
    x = torch.rand(B, 5) * 2 - 1
    hx = tuple(torch.rand(B, 7) - 0.5 for _ in range(2 if name == "LSTMCell" else 1))
    ref = double(cell)
    with torch.no_grad():
        exp = ref(x.double(), tuple(h.double() for h in hx) if len(hx) == 2 else hx[0].double())
        exp0 = ref(x.double())  # hx=None: zeros
    got = f(x, hx if len(hx) == 2 else hx[0])
    got0 = f(x)
    for g, e in [(got, exp), (got0, exp0)]:
        gs, es = (g, e) if name == "LSTMCell" else ((g,), (e,))
        for a, b in zip(gs, es):
            assert tuple(a.shape) == tuple(b.shape) and rel(a, b) < TOL
    # The one-step network itself: x [T=1, B, I], states [B, H].
    compiled = net.compile().bind(params)
    outs = compiled(x.numpy()[None], *[h.numpy() for h in hx])
    y, finals = outs[0], outs[1:]
    assert y.shape == (1, B, 7)
    e = exp if name == "LSTMCell" else (exp,)
    for a, b in zip(finals, e):
        assert rel(a, b) < TOL


def test_cell_unbatched_and_sequence():
    """An unbatched input [I] as the cell takes it, and T steps of the network
    equal T calls of the cell."""
    torch.manual_seed(1)
    cell = torch.nn.GRUCell(3, 6)
    f = lc.TorchLike(cell)
    x = torch.rand(3) - 0.5
    with torch.no_grad():
        e = double(cell)(x.double())
    h = f(x)
    assert tuple(h.shape) == (6,) and rel(h, e) < TOL
    net, params = lc.from_torch(cell)
    xs = np.random.default_rng(2).uniform(-1, 1, (5, 2, 3)).astype(np.float32)
    y, hT = net.compile().bind(params)(xs)
    ref, hd = double(cell), None
    with torch.no_grad():
        for t in range(5):
            hd = ref(torch.from_numpy(xs[t]).double(), hd)
            assert rel(y[t], hd) < TOL
    assert rel(hT, hd) < TOL


@pytest.mark.parametrize("opts", [{}, {"nonlinearity": "relu", "num_layers": 2},
                                  {"bidirectional": True, "batch_first": True, "bias": False}])
def test_rnn_module(opts):
    torch.manual_seed(3)
    m = torch.nn.RNN(4, 8, **opts)
    f = lc.TorchLike(m)
    L = m.num_layers * (2 if m.bidirectional else 1)
    x = torch.rand(2, 6, 4) - 0.5 if m.batch_first else torch.rand(6, 2, 4) - 0.5
    h0 = torch.rand(L, 2, 8) - 0.5
    with torch.no_grad():
        ey, eh = double(m)(x.double(), h0.double())
    y, h = f(x, h0)
    assert rel(y, ey) < TOL and rel(h, eh) < TOL


def test_state_dict_with_prefix():
    """A whole model's checkpoint: the RNN's weights under 'lstm.'."""
    torch.manual_seed(4)

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embedding = torch.nn.Embedding(10, 6)
            self.lstm = torch.nn.LSTM(6, 5, num_layers=2, bidirectional=True)
            self.head = torch.nn.Linear(10, 3)
    model = Model()
    sd = model.state_dict()
    assert "lstm.weight_ih_l0" in sd
    net, params = lc.from_state_dict(sd, "LSTM", prefix="lstm.")
    ref_net, ref_params = lc.from_torch(model.lstm)
    assert net.param_shapes() == ref_net.param_shapes() and sorted(params) == sorted(ref_params)
    for k in params:
        np.testing.assert_array_equal(params[k], ref_params[k])
    x = np.random.default_rng(5).uniform(-1, 1, (4, 3, 6)).astype(np.float32)
    y = net.compile().bind(params)(x)[0]
    with torch.no_grad():
        ey, _ = double(model.lstm)(torch.from_numpy(x).double())
    assert rel(y, ey) < TOL
    # Without the prefix: the error lists the prefixes to use.
    with pytest.raises(ValueError, match=r"expected the keys of an nn.LSTM's state_dict: "
                                         r"weight_ih_l<k>.*pass the RNN's prefix, "
                                         r"prefix='lstm.'"):
        lc.from_state_dict(sd, "LSTM")
    with pytest.raises(ValueError, match=r"no key starts with prefix 'rnn.'; the RNN weights "
                                         r"are under \['lstm.'\]"):
        lc.from_state_dict(sd, "LSTM", prefix="rnn.")


def test_prefix_candidates_of_two_rnns():
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.enc = torch.nn.GRU(3, 4)
            self.dec = torch.nn.Sequential(torch.nn.GRUCell(4, 4))
    sd = Model().state_dict()
    with pytest.raises(ValueError, match=r"prefix='dec.0.' or prefix='enc.'"):
        lc.from_state_dict(sd, "GRU")
    net, _ = lc.from_state_dict(sd, "GRU", prefix="dec.0.")  # a cell's keys
    assert net.num_layers == 1
    with pytest.raises(TypeError, match=r"got Model \(its RNN submodules: \['enc', 'dec.0'\]"):
        lc.from_torch(Model())


@pytest.mark.parametrize("kind", ["LSTM", "LSTMCell"])
def test_cell_state_dict(kind):
    torch.manual_seed(6)
    cell = torch.nn.LSTMCell(3, 5)
    net, params = lc.from_state_dict(cell.state_dict(), kind)
    x = np.random.default_rng(7).uniform(-1, 1, (1, 2, 3)).astype(np.float32)
    _, h, c = net.compile().bind(params)(x)
    with torch.no_grad():
        eh, ec = double(cell)(torch.from_numpy(x[0]).double())
    assert rel(h, eh) < TOL and rel(c, ec) < TOL


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("kind", ["LSTM", "GRUCell"])
def test_half_modules(dtype, kind):
    """float16 / bfloat16 weights become float32 exactly; the network
    computes in float32 and matches the module's half weights run in float64."""
    torch.manual_seed(8)
    m = getattr(torch.nn, kind)(4, 6).to(getattr(torch, dtype))
    net, params = lc.from_torch(m)
    assert net.dtype == "float32"
    for k, v in m.state_dict().items():
        assert v.dtype == getattr(torch, dtype)
    sd32 = {k: v.float().numpy() for k, v in m.state_dict().items()}
    _, ref_params = lc.from_state_dict(sd32, kind)
    for k in params:
        assert params[k].dtype == np.float32
        np.testing.assert_array_equal(params[k], ref_params[k])
    ref = double(m)
    f = lc.TorchLike(m)
    x = (torch.rand(3, 2, 4) - 0.5) if kind == "LSTM" else (torch.rand(2, 4) - 0.5)
    x = x.to(getattr(torch, dtype))  # inputs the module could take
    with torch.no_grad():
        e = ref(x.double())
    got = f(x.float())  # float32 in
    got_h = f(x)        # half in: converted to float32
    first = (lambda r: r[0]) if kind == "LSTM" else (lambda r: r)
    assert rel(first(got), first(e)) < TOL
    assert first(got_h).dtype == torch.float32
    # bfloat16 tensors in a plain state_dict, and float64 on request.
    net64, p64 = lc.from_state_dict(m.state_dict(), kind, dtype="float64")
    assert net64.dtype == "float64" and all(v.dtype == np.float64 for v in p64.values())
    net2, _ = lc.from_torch(m, dtype="float64")
    assert net2.dtype == "float64"


def test_float64_module_stays_float64():
    m = torch.nn.GRU(3, 4).double()
    net, params = lc.from_torch(m)
    assert net.dtype == "float64"
    x = np.random.default_rng(9).uniform(-1, 1, (5, 2, 3))
    y, h = net.compile().bind(params)(x)
    with torch.no_grad():
        ey, eh = m(torch.from_numpy(x))
    assert rel(y, ey) < 1e-10 and rel(h, eh[0]) < 1e-10


def test_bad_imports_say_what_was_expected():
    lstm_sd = torch.nn.LSTM(4, 6, num_layers=2).state_dict()
    cases = [
        (lambda: lc.from_state_dict({}, "LSTM"), ValueError,
         r"no weights of an nn.LSTM: expected the keys .*; the state_dict is empty"),
        (lambda: lc.from_state_dict(torch.nn.GRU(4, 6).state_dict(), "LSTM"), ValueError,
         r"weight_ih of layer 0 has shape \[18, 4\]; expected \[4·hidden_size, input_size\] .*"
         r"pass kind='GRU'"),
        (lambda: lc.from_state_dict(torch.nn.LSTM(4, 6).state_dict(), "RNN"), ValueError,
         r"weight_hh_l0 has shape \[24, 6\], expected \[24, 24\] .* pass kind='LSTM'"),
        (lambda: lc.from_state_dict({k: v for k, v in lstm_sd.items() if k != "weight_hh_l1"}),
         ValueError, r"layer 1: missing \['weight_hh_l1'\]"),
        (lambda: lc.from_state_dict({k: v for k, v in lstm_sd.items() if k != "bias_ih_l1"}),
         ValueError, r"layer 1: missing \['bias_ih_l1'\]"),
        (lambda: lc.from_state_dict(dict(lstm_sd, extra=lstm_sd["bias_ih_l0"])), ValueError,
         r"unexpected keys \['extra'\]; expected the keys of an nn.LSTM's state_dict"),
        (lambda: lc.from_state_dict({k.replace("_l1", "_l2"): v for k, v in lstm_sd.items()}),
         ValueError, r"no weights for layer 1 \(expected weight_ih_l1"),
        (lambda: lc.from_state_dict(lstm_sd, "Transformer"), ValueError,
         r"kind 'Transformer': expected one of"),
        (lambda: lc.from_state_dict(torch.nn.LSTM(4, 6), "LSTM"), TypeError,
         r"expected a state_dict .*; for a module use lstmc.from_torch"),
        (lambda: lc.from_state_dict({k: v.int() for k, v in lstm_sd.items()}), ValueError,
         r"dtype int32, expected floating-point weights"),
        (lambda: lc.from_state_dict(lstm_sd, "RNN", nonlinearity="gelu"), ValueError,
         r"nonlinearity 'gelu': expected 'tanh' or 'relu'"),
        (lambda: lc.from_torch(torch.nn.Linear(2, 2)), TypeError,
         r"expected nn.LSTM or nn.GRU or nn.RNN \(or their one-step cells nn.LSTMCell, "
         r"nn.GRUCell, nn.RNNCell\), got Linear"),
        (lambda: lc.from_torch(torch.nn.LSTM(2, 2), dtype="float16"), ValueError,
         r"dtype 'float16': expected 'float32' or 'float64'"),
    ]
    for call, exc, match in cases:
        with pytest.raises(exc, match=match):
            call()
