# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The call path of CPU networks (runtime._Plan): argument checks and
descriptors worked out once per signature and reused by every call, so calls
of other shapes, dtypes and kinds of arrays back to back through one
compiled network must each get their own right answer (float64 reference of
test/Integration/reference.py, fp32 tolerance of VARIANTS.md). Also torch
CPU tensors in and out, and TorchLike on them. Speed is not tested here:
bench/python_call_overhead.py measures it."""
import ctypes
import struct

import numpy as np
import pytest

import lstmc as lc
import reference as ref
from lstmc import _descriptors, runtime

TOL32, TOL64 = 1e-5, 1e-12
I, H = 5, 7


def rel(out, exp):
    out = np.asarray(out)
    assert out.shape == exp.shape
    assert np.isfinite(out).all()
    return np.linalg.norm(out - exp) / np.linalg.norm(exp)


def lstm_reference(x, h0, c0, p):
    w = {k: np.asarray(v, np.float64) for k, v in p.items()}
    step = ref.torch_lstm(w["W"], w["R"], w["bW"], w["bR"])
    y, (h, c) = ref.run_layer(step, np.asarray(x, np.float64),
                              (np.asarray(h0, np.float64), np.asarray(c0, np.float64)))
    return y, h, c


@pytest.fixture(scope="module")
def lstm32():
    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)
    return net, net.compile(target="cpu")


def random_params(net, rng):
    k = 1 / np.sqrt(H)
    return {n: rng.uniform(-k, k, s).astype(net.dtype) for n, s in net.param_shapes().items()}


def test_shapes_back_to_back(lstm32):
    """Other T and B at every call, states given or left out, by position or
    by name, contiguous or not: each call is checked against the reference."""
    net, compiled = lstm32
    rng = np.random.default_rng(11)
    p = random_params(net, rng)
    f = compiled.bind(p)
    for k, (T, B) in enumerate([(3, 2), (1, 1), (6, 4), (1, 3), (3, 2), (2, 5)]):
        x = rng.uniform(-1, 1, (T, B, I)).astype(np.float32)
        h0 = rng.uniform(-1, 1, (B, H)).astype(np.float32)
        c0 = rng.uniform(-1, 1, (B, H)).astype(np.float32)
        if k % 3 == 0:
            outs = f(x, h0, c0)
        elif k % 3 == 1:
            h0 = c0 = np.zeros((B, H), np.float32)
            outs = f(x)  # zero initial states
        else:
            # Not contiguous: x as a transposed view, h0 a column slice.
            xt = np.ascontiguousarray(x.transpose(1, 0, 2)).transpose(1, 0, 2)
            wide = np.zeros((B, 2 * H), np.float32)
            wide[:, ::2] = h0
            assert not xt.flags.c_contiguous and not wide[:, ::2].flags.c_contiguous
            outs = f(xt, c0=c0, h0=wide[:, ::2])
        for out, exp in zip(outs, lstm_reference(x, h0, c0, p)):
            assert out.dtype == np.float32
            assert rel(out, exp) < TOL32


def test_dtypes_back_to_back():
    """A float32 and a float64 network of one cell, called alternately with
    numpy arrays and tensors; a call with the wrong dtype in between is
    refused naming the argument, and the next call is right."""
    torch = pytest.importorskip("torch")
    nets = {dt: lc.Network(lc.cells.lstm, input_size=I, hidden=H, dtype=dt)
            for dt in ("float32", "float64")}
    fns = {dt: n.compile(target="cpu") for dt, n in nets.items()}
    rng = np.random.default_rng(12)
    for k, (dt, T, B) in enumerate([("float32", 2, 3), ("float64", 4, 1), ("float32", 1, 2),
                                    ("float64", 3, 3), ("float32", 5, 1)]):
        p = random_params(nets[dt], rng)
        x = rng.uniform(-1, 1, (T, B, I)).astype(dt)
        h0, c0 = (rng.uniform(-1, 1, (B, H)).astype(dt) for _ in range(2))
        other = "float64" if dt == "float32" else "float32"
        with pytest.raises(lc.CallError, match=f"x: dtype {other}, expected {dt}"):
            fns[dt](x.astype(other), h0, c0, **p)
        args = (x, h0, c0)
        if k % 2:
            args = tuple(torch.from_numpy(a) for a in args)
        outs = fns[dt](*args, **p)
        for out, exp in zip(outs, lstm_reference(x, h0, c0, p)):
            assert isinstance(out, torch.Tensor if k % 2 else np.ndarray)
            assert str(out.dtype).replace("torch.", "") == dt
            assert rel(out, exp) < (TOL32 if dt == "float32" else TOL64)


def test_plan_made_once(lstm32, monkeypatch):
    """The plan (descriptor layout, checks, ctypes buffer types) is made
    once per compiled function and shared by bound copies; calls of any
    shape reuse it and make no new ctypes types."""
    made = []
    real = runtime._Plan

    class Counting(real):
        def __init__(self, *a, **kw):
            made.append(self)
            super().__init__(*a, **kw)

    monkeypatch.setattr(runtime, "_Plan", Counting)
    net = lc.Network(lc.cells.rnn, input_size=I, hidden=H)
    compiled = net.compile(target="cpu")
    assert made == [compiled._plan]
    f = compiled.bind(net.init_params(seed=2))
    g = compiled.bind(net.init_params(seed=3))
    assert f._plan is compiled._plan and g._plan is compiled._plan
    Args, Results = compiled._plan.Args, compiled._plan.Results
    # The call goes through the CPU runtime's guard (a failed allocation
    # returns), with one pointer array of a type made once too.
    assert compiled._plan.guarded is not None
    Pointers = compiled._plan.Pointers
    seen = []
    real_guarded = compiled._plan.guarded

    def spy(packed, pointers):
        seen.append((pointers[0], tuple(pointers[1:])))
        return real_guarded(packed, pointers)

    monkeypatch.setattr(compiled._plan, "guarded", spy)
    for T, B in [(1, 1), (4, 3), (2, 6)]:
        x = np.ones((T, B, I), np.float32)
        f(x)
        g(x, h0=np.zeros((B, H), np.float32))
    assert len(made) == 1
    assert compiled._plan.Args is Args and compiled._plan.Results is Results
    assert compiled._plan.Pointers is Pointers
    assert len(seen) == 6 and all(len(a) == len(compiled.args) for _, a in seen)
    assert _descriptors._descriptor_type(3) is _descriptors._descriptor_type(3)


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
def test_descriptor_layout(rank):
    """The struct packing writes exactly the C descriptor that
    _descriptor_type (ctypes' layout of the struct) reads."""
    fmt = struct.Struct("@" + _descriptors._descriptor_format(rank))
    D = _descriptors._descriptor_type(rank)
    assert fmt.size == ctypes.sizeof(D)
    buf = (ctypes.c_int64 * (fmt.size // 8))()
    sizes, strides = tuple(range(2, 2 + rank)), tuple(range(30, 30 + rank))
    fmt.pack_into(buf, 0, 0x1000, 0x2000, 7, *sizes, *strides)
    d = D.from_buffer(buf)
    assert (d.allocated, d.aligned, d.offset) == (0x1000, 0x2000, 7)
    assert tuple(d.sizes) == sizes and tuple(d.strides) == strides


def test_plan_offsets_match_ctypes(lstm32):
    """Every argument's descriptor sits where a ctypes Structure of all of
    them (the C struct layout) puts it; the results' likewise."""
    _, compiled = lstm32
    plan = compiled._plan
    Args = type("Args", (ctypes.Structure,), {"_fields_": [
        (f"a{k}", _descriptors._descriptor_type(len(a.shape))) for k, a in enumerate(compiled.args)]})
    assert plan.offsets == tuple(getattr(Args, f"a{k}").offset
                                 for k in range(len(compiled.args)))
    assert ctypes.sizeof(plan.Args) >= ctypes.sizeof(Args)
    Results = type(compiled._results_struct())
    assert ctypes.sizeof(plan.Results) >= ctypes.sizeof(Results)


def test_bound_parameters(lstm32):
    """Bound arrays are used in place: changed values are seen by the next
    call; a parameter given by name overrides the bound one for that call
    only; a bound parameter of the wrong shape or dtype is still refused at
    the call, naming it."""
    net, compiled = lstm32
    rng = np.random.default_rng(13)
    p = random_params(net, rng)
    f = compiled.bind(p)
    x = rng.uniform(-1, 1, (3, 2, I)).astype(np.float32)
    z = np.zeros((2, H), np.float32)
    assert rel(f(x)[0], lstm_reference(x, z, z, p)[0]) < TOL32
    p["W"] *= -0.5  # in place
    assert rel(f(x)[0], lstm_reference(x, z, z, p)[0]) < TOL32
    q = dict(p, R=rng.uniform(-0.3, 0.3, p["R"].shape).astype(np.float32))
    assert rel(f(x, R=q["R"])[0], lstm_reference(x, z, z, q)[0]) < TOL32
    assert rel(f(x)[0], lstm_reference(x, z, z, p)[0]) < TOL32  # the bound R again
    with pytest.raises(lc.CallError, match=r"R: shape \[28, 6\], expected \[28, 7\]"):
        compiled.bind(dict(p, R=np.zeros((4 * H, H - 1), np.float32)))(x)
    with pytest.raises(lc.CallError, match="bW: dtype float64, expected float32"):
        compiled.bind(dict(p, bW=p["bW"].astype(np.float64)))(x)
    # Not contiguous, read-only, the other byte order: copied or read as they are.
    odd = dict(p, W=np.asfortranarray(p["W"]), bR=p["bR"].astype(p["bR"].dtype.newbyteorder()))
    odd["R"] = p["R"].copy()
    odd["R"].flags.writeable = False
    assert rel(compiled.bind(odd)(x)[0], lstm_reference(x, z, z, p)[0]) < TOL32


def test_errors_name_the_argument(lstm32):
    net, compiled = lstm32
    f = compiled.bind(net.init_params())
    x = np.zeros((2, 3, I), np.float32)
    with pytest.raises(lc.CallError, match=r"h0: shape \[4, 7\] does not match \['B', 7\] "
                                           r"with B=3"):
        f(x, np.zeros((4, H), np.float32))
    with pytest.raises(lc.CallError, match=r"c0: shape \[3, 8\], expected \['B', 7\]"):
        f(x, c0=np.zeros((3, H + 1), np.float32))
    with pytest.raises(lc.CallError, match="x: shape .* has rank 2"):
        f(np.zeros((3, I), np.float32))
    with pytest.raises(lc.CallError, match="x: dtype int64, expected float32"):
        f([[[1, 2, 3, 4, 5]]])
    with pytest.raises(lc.CallError, match="argument 'x' given twice"):
        f(x, x=x)
    with pytest.raises(lc.CallError, match="B = 0"):
        f(np.zeros((2, 0, I), np.float32))
    # After the errors, a good call.
    assert f(x)[0].shape == (2, 3, H)


def test_bind_checks_parameter_shapes(lstm32):
    """A parameter of the wrong shape is refused when bound, naming it."""
    net, compiled = lstm32
    p = net.init_params()
    name = next(iter(p))
    bad = dict(p, **{name: np.zeros(p[name].shape + (1,), np.float32)})
    with pytest.raises(lc.CallError, match=rf"bind: {name}: shape \[.*\], expected \["):
        compiled.bind(bad)


def test_torch_tensors_in_and_out(lstm32):
    """CPU tensors are taken in place and give tensors; a tensor that needs
    a gradient is refused outside no_grad (no silent loss of the gradient);
    lengths as an int32 tensor."""
    torch = pytest.importorskip("torch")
    net, compiled = lstm32
    rng = np.random.default_rng(14)
    p = random_params(net, rng)
    f = compiled.bind(p)
    x = rng.uniform(-1, 1, (4, 3, I)).astype(np.float32)
    h0, c0 = (rng.uniform(-1, 1, (3, H)).astype(np.float32) for _ in range(2))
    exp = lstm_reference(x, h0, c0, p)
    xt, ht, ct = (torch.from_numpy(a) for a in (x, h0, c0))
    outs = f(xt, ht, ct)
    for out, e in zip(outs, exp):
        assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
        assert rel(out.numpy(), e) < TOL32
    # A non-contiguous tensor (batch-first, transposed) is copied.
    xb = torch.from_numpy(np.ascontiguousarray(x.transpose(1, 0, 2))).transpose(0, 1)
    assert not xb.is_contiguous()
    assert rel(f(xb, ht, ct)[0].numpy(), exp[0]) < TOL32
    # A negative view is contiguous, but its storage holds -x: it is read
    # as the values it stands for (resolved), not as its storage.
    xneg = torch.from_numpy(-x)._neg_view()
    assert xneg.is_neg() and xneg.is_contiguous()
    assert rel(f(xneg, ht, ct)[0].numpy(), exp[0]) < TOL32
    # numpy in, numpy out, even with tensors bound.
    g = compiled.bind({k: torch.from_numpy(v) for k, v in p.items()})
    y = g(x, h0, c0)[0]
    assert isinstance(y, np.ndarray) and rel(y, exp[0]) < TOL32
    assert isinstance(g(xt, ht, ct)[0], torch.Tensor)
    needs = xt.clone().requires_grad_()
    with pytest.raises(lc.CallError, match="x: a tensor that requires grad"):
        f(needs, ht, ct)
    with torch.no_grad():
        assert rel(f(needs, ht, ct)[0].numpy(), exp[0]) < TOL32
    with pytest.raises(lc.CallError, match="h0: dtype float64, expected float32"):
        f(xt, ht.double(), ct)
    with pytest.raises(lc.CallError, match=r"h0: shape \[3, 6\], expected \['B', 7\]"):
        f(xt, ht[:, :6], ct)

    lnet = lc.Network(lc.cells.lstm, input_size=I, hidden=H, lengths=True)
    lp = random_params(lnet, rng)
    lf = lnet.compile(target="cpu").bind(lp)
    lengths = np.array([4, 1, 3], np.int32)
    y = lf(xt, torch.from_numpy(lengths), ht, ct)[0]
    step = ref.torch_lstm(*(lp[k].astype(np.float64) for k in ("W", "R", "bW", "bR")))
    ey, _ = ref.run_layer(step, x.astype(np.float64), (h0.astype(np.float64),
                                                        c0.astype(np.float64)), lengths=lengths)
    assert rel(y.numpy(), ey) < TOL32
    with pytest.raises(lc.CallError, match="lengths: dtype int64, expected int32"):
        lf(xt, torch.from_numpy(lengths.astype(np.int64)), ht, ct)
    with pytest.raises(lc.CallError, match=r"lengths must be in \[1, T=4\]"):
        lf(xt, torch.tensor([5, 1, 1], dtype=torch.int32), ht, ct)


@pytest.mark.parametrize("kind,opts", [
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}),
    ("GRU", {}),
    ("GRU", {"num_layers": 2, "batch_first": True}),
])
def test_torch_like_on_tensors(kind, opts):
    """TorchLike on the CPU called like the module on CPU tensors returns
    tensors, matching the module run in float64 on the same weights."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(5)
    m = getattr(torch.nn, kind)(I, H, **opts).eval()
    f = lc.TorchLike(m)
    m64 = getattr(torch.nn, kind)(I, H, **opts).double().eval()
    m64.load_state_dict({k: v.double() for k, v in m.state_dict().items()})
    L = m.num_layers * (2 if m.bidirectional else 1)
    for T, B, with_hx in [(4, 3, True), (1, 1, False), (6, 2, True)]:
        shape = (B, T, I) if m.batch_first else (T, B, I)
        x = torch.rand(shape) * 2 - 1
        hx = None
        if with_hx:
            h0 = torch.rand(L, B, H) - 0.5
            hx = (h0, torch.rand(L, B, H) - 0.5) if kind == "LSTM" else h0
        with torch.no_grad():
            hx64 = None if hx is None else (tuple(t.double() for t in hx) if kind == "LSTM"
                                             else hx.double())
            ey, eh = m64(x.double(), hx64)
        y, h = f(x, hx)
        assert isinstance(y, torch.Tensor) and y.dtype == torch.float32
        assert rel(y.numpy(), ey.numpy()) < TOL32
        got = h if kind == "LSTM" else (h,)
        want = eh if kind == "LSTM" else (eh,)
        for a, b in zip(got, want):
            assert isinstance(a, torch.Tensor) and tuple(a.shape) == tuple(b.shape)
            assert rel(a.numpy(), b.numpy()) < TOL32
    # An unbatched sequence [T, I] with states [L·D, H], as the module
    # takes it: outputs without the batch dimension.
    x1 = torch.rand(5, I) * 2 - 1
    h1 = torch.rand(L, H) - 0.5
    hx1 = (h1, torch.rand(L, H) - 0.5) if kind == "LSTM" else h1
    with torch.no_grad():
        ey, eh = m64(x1.double(), tuple(t.double() for t in hx1) if kind == "LSTM"
                     else hx1.double())
    y, h = f(x1, hx1)
    assert tuple(y.shape) == tuple(ey.shape) and rel(y.numpy(), ey.numpy()) < TOL32
    for a, b in zip(h if kind == "LSTM" else (h,), eh if kind == "LSTM" else (eh,)):
        assert tuple(a.shape) == tuple(b.shape) and rel(a.numpy(), b.numpy()) < TOL32


def test_torch_like_refuses_what_the_module_refuses():
    """TorchLike refuses, naming the argument, what nn.LSTM and nn.GRU
    refuse instead of guessing: an LSTM's state that is not a pair, a GRU's
    that is, integer inputs; a PackedSequence gets the way to pass it."""
    torch = pytest.importorskip("torch")
    lstm, gru = torch.nn.LSTM(I, H), torch.nn.GRU(I, H)
    f, g = lc.TorchLike(lstm), lc.TorchLike(gru)
    x, h = torch.rand(3, 2, I), torch.rand(1, 2, H)
    with pytest.raises(TypeError, match=r"hx: an LSTM's initial state is a tuple \(h_0, c_0\)"):
        f(x, h)
    with pytest.raises(TypeError, match=r"hx: a GRU's initial state is one tensor"):
        g(x, (h, h))
    with pytest.raises(TypeError, match=r"x: dtype torch.int64; expected a floating-point"):
        f(torch.randint(0, 3, (3, 2, I)))
    with pytest.raises(TypeError, match=r"x: dtype int64; expected a floating-point array"):
        g(np.ones((3, 2, I), np.int64))
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, torch.tensor([3, 1]))
    with pytest.raises(TypeError, match=r"PackedSequence is not taken; pad it"):
        f(packed)
    # Lists are pairs too (PyTorch indexes hx).
    assert f(x, [h, h])[0].shape == (3, 2, H)


def test_results_are_the_library_buffers(lstm32):
    """Results are arrays over the buffers the call returned (no copy):
    kept results stay as they were while later calls run (their buffers are
    not handed out again while an array holds them), writing one changes no
    other, and results of calls whose arrays were dropped are still right
    (their buffers reused)."""
    net, compiled = lstm32
    rng = np.random.default_rng(12)
    p = random_params(net, rng)
    f = compiled.bind(p)
    T, B = 40, 30  # results of 8 KiB and more: the allocator's reused sizes
    xs = [rng.uniform(-1, 1, (T, B, I)).astype(np.float32) for _ in range(3)]
    zeros = np.zeros((B, H), np.float32)
    expected = [lstm_reference(x, zeros, zeros, p) for x in xs]
    kept = f(xs[0])
    snapshot = [o.copy() for o in kept]
    for o in kept:
        assert not o.flags.owndata and o.flags.writeable and o.flags.c_contiguous
    for k in range(6):
        outs = f(xs[1 + k % 2])  # dropped at the next iteration
        for out, exp in zip(outs, expected[1 + k % 2]):
            assert rel(out, exp) < TOL32
        for out, old in zip(outs, kept):
            assert not np.shares_memory(out, old)
    for o, s in zip(kept, snapshot):
        assert np.array_equal(o, s)
    for out, exp in zip(kept, expected[0]):
        assert rel(out, exp) < TOL32
    kept[0][...] = 0
    assert np.array_equal(kept[1], snapshot[1]) and np.array_equal(kept[2], snapshot[2])


def test_results_sharing_a_buffer_are_copies(tmp_path):
    """A function that returns one buffer twice (written here, compiled with
    the in-process compiler and described by a hand-written network.json):
    the two results are separate arrays, each right, writing one leaves the
    other; a third result in a buffer of its own is taken over."""
    import json
    from lstmc import _lstmc
    ir = """
    func.func @forward(%x: tensor<?x?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>) {
      %y = arith.addf %x, %x : tensor<?x?x4xf32>
      %z = arith.mulf %x, %x : tensor<?x?x4xf32>
      return %y, %y, %z : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?x4xf32>
    }
    """
    _lstmc.compile(ir, str(tmp_path / runtime.LIBRARY), target="cpu")
    seq = {"shape": ["T", "B", 4], "dtype": "float32"}
    meta = {"entry": "forward", "target": "cpu", "dtype": "float32", "pre_passes": "",
            "compute_type": "fp32", "persistent": False, "chip": None,
            "args": [dict(seq, name="x", kind="data")],
            "results": [dict(seq, name=n, kind="result") for n in ("a", "b", "c")]}
    (tmp_path / runtime.META).write_text(json.dumps(meta))
    f = lc.load(str(tmp_path))
    x = np.random.default_rng(13).uniform(-1, 1, (50, 30, 4)).astype(np.float32)
    a, b, c = f(x)
    assert np.array_equal(a, 2 * x) and np.array_equal(b, 2 * x) and np.array_equal(c, x * x)
    assert not np.shares_memory(a, b)
    assert a.flags.owndata and b.flags.owndata and not c.flags.owndata
    a[...] = 0
    assert np.array_equal(b, 2 * x)
