# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""lstmc.torch_module on the CPU: compiled networks as torch.nn.Modules whose
backward is the compiled gradient (@f_train, then @f_backward on its saved
activations). Checked with torch.autograd.gradcheck in float64 (every cell of
lstmc.cells and a cell written here) and against nn.LSTM's autograd on the
same weights; optimizers, no_grad, state_dict, moves and errors."""
import functools

import numpy as np
import pytest

import lstmc as lc
from lstmc import cells

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="PyTorch is not installed; torch_module tests skipped")

T, B, I, H = 3, 2, 2, 3


def coupled_peephole(c, x, hidden=H):
    """A cell of this test only: one forget gate that peeks at c, coupled
    input (1 - f), and an output squashed by the new c and the gate."""
    h, cs = c.state("h", hidden), c.state("c", hidden)
    W, R = c.param("W", 2 * hidden, x.size), c.param("R", 2 * hidden, hidden)
    b, p = c.param("b", 2 * hidden), c.param("p", hidden)
    (Wf, Wz), (Rf, Rz), (bf, bz) = W.split(2), R.split(2), b.split(2)
    f = lc.sigmoid(x @ Wf + h @ Rf + bf + p * cs)
    z = lc.tanh(x @ Wz + h @ Rz + bz)
    c_new = f * cs + lc.one_minus(f) * z
    h_new = lc.tanh(c_new) * f
    return h_new, {"h": h_new, "c": c_new}


CASES = {
    "lstm": (cells.lstm, {}),
    "lstmp": (cells.lstm, {"proj_size": 2}),
    "peephole": (cells.greff, {}),
    "greff_fgr": (cells.greff, {"variant": "fgr"}),
    "gru": (cells.gru, {}),
    "cho_gru": (cells.cho_gru, {}),
    "mgu": (cells.mgu, {}),
    "rnn_tanh": (cells.rnn, {}),
    "ln_lstm": (cells.ln_lstm, {}),
    "coupled_peephole": (coupled_peephole, {}),
    # stacked states [L·D, B, N] and integer lengths (no gradient)
    "lstm_bidirectional_lengths": (cells.lstm, {"direction": "bidirectional",
                                                "lengths": True}),
}


@functools.lru_cache(maxsize=None)
def compiled(name, dtype="float64"):
    cell, options = CASES[name]
    net = lc.Network(cell, input_size=I, hidden=H, dtype=dtype, **options)
    return net, net.compile(target="cpu", gradients=True, pre_passes="lstm-optimize")


def module(name, dtype="float64", seed=0):
    torch.manual_seed(seed)
    return lc.torch_module(compiled(name, dtype)[1])


def inputs(m, lengths=False, seed=1):
    g = torch.Generator().manual_seed(seed)
    x = torch.rand(T, B, I, generator=g, dtype=m._dtype) - 0.5
    states = []
    for a in m._states:
        shape = [B if d == "B" else d for d in a.shape]
        states.append(torch.rand(shape, generator=g, dtype=m._dtype) - 0.5)
    kw = {"lengths": [T, 2][:B]} if lengths else {}
    return x, states, kw


@pytest.mark.parametrize("name", list(CASES))
def test_gradcheck(name):
    m = module(name)
    x, states, kw = inputs(m, lengths=CASES[name][1].get("lengths", False))
    leaves = [x, *states]
    for t in leaves:
        t.requires_grad_(True)
    params = list(m.parameters())
    n = len(leaves)
    assert torch.autograd.gradcheck(lambda *a: m(a[0], *a[1:n], **kw), (*leaves, *params),
                                    eps=1e-6, atol=1e-7, rtol=1e-5)


@functools.lru_cache(maxsize=None)
def _lstm_network():
    torch.manual_seed(3)
    ref = torch.nn.LSTM(4, 5, num_layers=2).double()
    net, params = lc.from_torch(ref)
    return ref.state_dict(), params, net.compile(target="cpu", gradients=True)


def _lstm_pair():
    """nn.LSTM (2 layers, float64) and our module with its weights."""
    state, params, f = _lstm_network()
    ref = torch.nn.LSTM(4, 5, num_layers=2).double()
    ref.load_state_dict(state)
    return ref, lc.torch_module(f, params)


def _torch_name(ours):
    """W1 -> weight_ih_l1, ... (a stack's names; the gate order is shared)."""
    base, k = ours[:-1], ours[-1]
    return {"W": "weight_ih", "R": "weight_hh", "bW": "bias_ih", "bR": "bias_hh"}[base] + f"_l{k}"


@pytest.mark.parametrize("only_y", [False, True], ids=["all_results", "y_only"])
def test_matches_nn_lstm_autograd(only_y):
    """Forward and every gradient equal nn.LSTM's (float64), with cotangents
    for y, hT, cT or for y alone (hT and cT get None: zeros)."""
    ref, m = _lstm_pair()
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 3, 4, generator=g, dtype=torch.float64)
    h0, c0 = (torch.randn(2, 3, 5, generator=g, dtype=torch.float64) for _ in range(2))
    gy, gh, gc = (torch.randn(s, generator=g, dtype=torch.float64)
                  for s in ((6, 3, 5), (2, 3, 5), (2, 3, 5)))
    results = {}
    for which in ("ref", "ours"):
        xs = [t.clone().requires_grad_(True) for t in (x, h0, c0)]
        if which == "ref":
            y, (hT, cT) = ref(xs[0], (xs[1], xs[2]))
            mod = ref
        else:
            y, hT, cT = m(*xs)
            mod = m
        loss = (y * gy).sum() if only_y else (y * gy).sum() + (hT * gh).sum() + (cT * gc).sum()
        mod.zero_grad()
        loss.backward()
        grads = {n: p.grad.clone() for n, p in mod.named_parameters()}
        results[which] = (y.detach(), hT.detach(), cT.detach(), [t.grad for t in xs], grads)
    (ry, rh, rc, rgx, rgp), (oy, oh, oc, ogx, ogp) = results["ref"], results["ours"]
    for a, b in ((oy, ry), (oh, rh), (oc, rc), *zip(ogx, rgx)):
        torch.testing.assert_close(a, b, rtol=1e-10, atol=1e-12)
    assert set(ogp) == {"W0", "R0", "bW0", "bR0", "W1", "R1", "bW1", "bR1"}
    for name, grad in ogp.items():
        torch.testing.assert_close(grad, rgp[_torch_name(name)], rtol=1e-10, atol=1e-12,
                                   msg=name)


def test_initialisation_like_nn_lstm():
    m = module("lstm", seed=0)
    k = 1 / H ** 0.5
    for name, p in m.named_parameters():
        assert isinstance(p, torch.nn.Parameter) and p.dtype == torch.float64, name
        assert -k <= p.min() and p.max() <= k, name
    every = torch.cat([p.detach().flatten() for p in m.parameters()])
    assert every.numel() == 4 * H * (I + H + 2)
    assert every.max() > 0.8 * k and every.min() < -0.8 * k
    # torch's generator: the same seed, the same weights
    m2 = module("lstm", seed=0)
    for (_, a), (_, b) in zip(m.named_parameters(), m2.named_parameters()):
        assert torch.equal(a, b)


def test_same_seed_same_weights_as_nn_lstm():
    """The default initialisation draws like nn.LSTM's (uniform_, one
    parameter after another in nn.LSTM's order): the same seed gives the
    same weights."""
    _, params, f = _lstm_network()
    torch.manual_seed(11)
    ref = torch.nn.LSTM(4, 5, num_layers=2, dtype=torch.float64)
    torch.manual_seed(11)
    m = lc.torch_module(f)
    for k in range(2):
        for ours, theirs in (("W", "weight_ih"), ("R", "weight_hh"), ("bW", "bias_ih"),
                             ("bR", "bias_hh")):
            assert torch.equal(getattr(m, f"{ours}{k}"), getattr(ref, f"{theirs}_l{k}"))


def test_optimizer_clipping_and_training():
    """Adam with gradient clipping changes every parameter and brings a loss
    down."""
    m = module("gru")
    opt = torch.optim.Adam(m.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(0)
    x = torch.rand(T, 4, I, generator=g, dtype=torch.float64) - 0.5
    target = torch.rand(T, 4, H, generator=g, dtype=torch.float64) - 0.5
    before = [p.detach().clone() for p in m.parameters()]
    losses = []
    for _ in range(30):
        opt.zero_grad()
        y, hT = m(x)
        loss = ((y - target) ** 2).mean()
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(m.parameters(), 0.5)
        assert torch.isfinite(norm)
        assert sum(float(p.grad.norm()) ** 2 for p in m.parameters()) ** 0.5 <= 0.5 + 1e-5
        opt.step()
        losses.append(float(loss.detach()))
    for p, b in zip(m.parameters(), before):
        assert not torch.equal(p.detach(), b)
    assert losses[-1] < 0.5 * losses[0]


def test_no_grad_runs_the_plain_forward():
    m = module("lstm")
    x, states, _ = inputs(m)
    calls = []
    call = m._runner.call
    m._runner.call = lambda which, values, **kw: calls.append(which) or call(which, values, **kw)
    y, hT, cT = m(x, *states)
    assert y.grad_fn is not None and calls == ["train"]
    with torch.no_grad():
        y2, hT2, cT2 = m(x, *states)
    assert y2.grad_fn is None and calls == ["train", "forward"]
    with torch.inference_mode():
        m(x, *states)
    assert calls[-1] == "forward"
    # Nothing requires grad: the plain forward too.
    for p in m.parameters():
        p.requires_grad_(False)
    m(x, *states)
    assert calls[-1] == "forward"
    torch.testing.assert_close(y2, y.detach(), rtol=0, atol=0)
    torch.testing.assert_close(cT2, cT.detach(), rtol=0, atol=0)


def test_double_backward_is_refused():
    """A backward with create_graph=True (a gradient penalty) raises: the
    gradients would come back without a graph and the penalty would add
    nothing. The plain backward after it works."""
    m = module("lstm")
    x, states, _ = inputs(m)
    x.requires_grad_(True)
    y = m(x, *states)[0]
    with pytest.raises(RuntimeError, match=r"create_graph=True \(double backward\) is not "
                                           r"supported"):
        torch.autograd.grad(y.sum(), x, create_graph=True)
    y = m(x, *states)[0]
    (g,) = torch.autograd.grad(y.sum(), x)
    assert g.shape == x.shape and g.grad_fn is None and bool(g.abs().sum() > 0)


def test_states_by_name_and_defaults():
    m = module("lstm")
    x, (h0, c0), _ = inputs(m)
    a = m(x, h0, c0)
    b = m(x, c0=c0, h0=h0)
    for u, v in zip(a, b):
        torch.testing.assert_close(u, v, rtol=0, atol=0)
    zeros = m(x, torch.zeros_like(h0), torch.zeros_like(c0))
    for u, v in zip(m(x), zeros):
        torch.testing.assert_close(u, v, rtol=0, atol=0)
    assert m.state_names == ["h0", "c0"]


def test_state_dict_round_trip(tmp_path):
    m = module("peephole", seed=0)
    m2 = module("peephole", seed=1)
    x, states, _ = inputs(m)
    assert not torch.equal(m(x)[0], m2(x)[0])
    sd = m.state_dict()
    assert set(sd) == {"W", "R", "bW", "bR", "P"}
    torch.save(sd, tmp_path / "m.pt")
    m2.load_state_dict(torch.load(tmp_path / "m.pt"))
    for u, v in zip(m(x, *states), m2(x, *states)):
        torch.testing.assert_close(u, v, rtol=0, atol=0)


def test_deepcopy_shares_the_library():
    """copy.deepcopy (e.g. torch.optim.swa_utils.AveragedModel) copies the
    parameters, not the library; pickling says what to do instead."""
    import copy
    import pickle
    m = module("rnn_tanh")
    c = copy.deepcopy(m)
    assert c.compiled is m.compiled and c._runner is not m._runner
    assert all(a is not b and torch.equal(a, b) for a, b in zip(m.parameters(), c.parameters()))
    with torch.no_grad():
        c.W.add_(1)
    x, _, _ = inputs(m)
    assert not torch.equal(c(x)[0], m(x)[0])
    swa = torch.optim.swa_utils.AveragedModel(m)
    swa.update_parameters(m)
    torch.testing.assert_close(swa(x)[0], m(x)[0], rtol=0, atol=0)
    with pytest.raises(TypeError, match="state_dict"):
        pickle.dumps(m)


def test_loaded_network(tmp_path):
    """A network saved and loaded (lstmc.load, as where no compiler is)."""
    compiled("mgu")[1].save(str(tmp_path / "mgu"))
    loaded = lc.load(str(tmp_path / "mgu"))
    m = lc.torch_module(loaded, target="cpu")
    x = (torch.rand(T, B, I, dtype=torch.float64) - 0.5).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda x, *p: m(x), (x, *m.parameters()), fast_mode=True)
    with pytest.raises(ValueError, match="compiled for 'cpu'"):
        lc.torch_module(loaded, target="cuda")
    plain = lc.load(str(tmp_path / "mgu"))
    plain.__dict__.pop("train")  # as a library compiled without gradients
    m2 = lc.torch_module(plain)
    with torch.no_grad():
        m2(x)
    with pytest.raises(RuntimeError, match="without gradients"):
        m2(x)


def test_errors():
    m = module("lstm")
    x, (h0, c0), _ = inputs(m)
    with pytest.raises(lc.CallError, match=r"x: dtype torch.float32, expected torch.float64"):
        m(x.float())
    with pytest.raises(lc.CallError, match=r"h0: shape \[3, 3\] does not match \['B', 3\]"):
        m(x, torch.zeros(3, 3, dtype=torch.float64))
    with pytest.raises(lc.CallError, match=r"c0: shape \[2, 4\], expected \['B', 3\]"):
        m(x, h0, torch.zeros(2, 4, dtype=torch.float64))
    with pytest.raises(lc.CallError, match=r"x: a tensor on meta, but this module runs on cpu"):
        m(torch.zeros(T, B, I, dtype=torch.float64, device="meta"))
    with pytest.raises(lc.CallError, match="x: expected a torch.Tensor, got ndarray"):
        m(x.numpy())
    with pytest.raises(lc.CallError, match="unknown argument 'hx'"):
        m(x, hx=h0)
    with pytest.raises(lc.CallError, match="3 initial states given"):
        m(x, h0, c0, c0)
    with pytest.raises(lc.CallError, match="lengths: this network was built without"):
        m(x, lengths=[1, 2])
    with pytest.raises(lc.CallError, match="must not be empty"):
        m(x[:0])
    # Moves that the compiled library cannot follow are refused before
    # anything moves.
    with pytest.raises(TypeError, match="compiled for float64"):
        m.float()
    with pytest.raises(RuntimeError, match="target='cpu' and cannot move to meta"):
        m.to("meta")
    assert m.W.dtype == torch.float64 and m.W.device.type == "cpu"
    m.to("cpu", torch.float64)  # no change: fine
    with pytest.raises(ValueError, match=r"params: unknown \['V'\], missing \['W'\]"):
        lc.torch_module(m.compiled, {**{k: v for k, v in m.state_dict().items() if k != "W"},
                                     "V": 0})
    with pytest.raises(ValueError, match=r"params\['W'\]: shape \[2, 2\]"):
        lc.torch_module(m.compiled, {**m.state_dict(), "W": torch.zeros(2, 2)})


def test_lengths_errors():
    m = module("lstm_bidirectional_lengths")
    x, states, _ = inputs(m)
    with pytest.raises(lc.CallError, match="pass lengths"):
        m(x)
    with pytest.raises(lc.CallError, match=r"lengths must be in \[1, T=3\], got \[0, 3\]"):
        m(x, lengths=[3, 0])
    with pytest.raises(lc.CallError, match=r"lengths: shape \[3\], expected \[2\]"):
        m(x, lengths=torch.tensor([1, 2, 3]))
    with pytest.raises(lc.CallError, match="lengths: an integer tensor"):
        m(x, lengths=torch.tensor([1.0, 2.0]))
    # int64 tensors, numpy arrays and lists give the same result
    outs = [m(x, lengths=v)[0] for v in (torch.tensor([3, 2]), np.array([3, 2]), [3, 2])]
    for o in outs[1:]:
        torch.testing.assert_close(o, outs[0], rtol=0, atol=0)


def test_functional_call():
    """torch.func.functional_call swaps in other parameters (they get the
    gradients)."""
    m = module("rnn_tanh", seed=0)
    other = {n: (p.detach() * 0.5).requires_grad_(True) for n, p in m.named_parameters()}
    x, states, _ = inputs(m)
    y = torch.func.functional_call(m, other, (x,))[0]
    y.sum().backward()
    assert all(other[n].grad is not None for n in other)
    assert all(p.grad is None for p in m.parameters())
    halved = {n: p.detach() * 0.5 for n, p in m.named_parameters()}
    for n, p in m.named_parameters():
        p.data.copy_(halved[n])
    torch.testing.assert_close(m(x)[0], y.detach(), rtol=0, atol=0)


@pytest.mark.parametrize("batched", [True, False], ids=["free_on_streams", "free_each"])
def test_gpu_buffers_are_freed_by_their_thread(batched):
    """The GPU path's bookkeeping, with a stand-in library: a buffer is freed
    by the thread that made it (the runtime's cache is per thread), on its
    stream, at that thread's next call; during a capture only the capturing
    stream's; buffers made during a capture are kept until release_captured.
    All in one lstmRuntimeFreeOnStreams call, or one by one with a library
    that has none (compiled before it)."""
    import threading

    from lstmc import _torch_cuda as tm

    class Lib:
        def __init__(self):
            self.calls = []
            self.stream = None

        def lstmRuntimeSetStream(self, s):
            self.stream = s.value

        def lstmRuntimeFree(self, p):
            self.calls.append((threading.get_ident(), p.value, self.stream))

    class BatchedLib(Lib):
        def lstmRuntimeFreeOnStreams(self, n, pointers, streams):
            self.batches = getattr(self, "batches", 0) + 1
            for k in range(n):
                self.calls.append((threading.get_ident(), pointers[k], streams[k]))

    lib = BatchedLib() if batched else Lib()
    made = {}

    def other():
        made["a"] = tm._Block(lib, 0x100, 7, captured=False)
        made["b"] = tm._Block(lib, 0x200, 8, captured=False)
        made["c"] = tm._Block(lib, 0x300, 7, captured=True)
        made["thread"] = threading.get_ident()

    t = threading.Thread(target=other)
    t.start()
    t.join()
    made.pop("a"), made.pop("b"), made.pop("c")  # the last views die here, on this thread
    tm._release_pending(False, 7)
    assert lib.calls == []  # not this thread's buffers
    # what the other thread's next call does: its queue, drained here
    tm._pending[threading.get_ident()].extend(tm._pending.pop(made["thread"]))
    tm._release_pending(True, 7)  # capturing on stream 7: only stream 7's
    assert [(p, s) for _, p, s in lib.calls] == [(0x100, 7)]
    tm._release_pending(False, 7)
    assert [(p, s) for _, p, s in lib.calls] == [(0x100, 7), (0x200, 8)]
    assert getattr(lib, "batches", 0) == (2 if batched else 0)
    assert (lib, 0x300, 7, made["thread"]) in tm._captured_blocks
    tm._captured_blocks.remove((lib, 0x300, 7, made["thread"]))


def test_gpu_argument_words():
    """The GPU path's memref descriptors, CPU tensors standing in for CUDA
    ones: allocated and aligned pointer, offset 0, sizes, row-major strides
    (a size-1 axis whose stride is anything gets the row-major one); the
    layout rebuilt when the shapes change, the pointers written on every
    call."""
    import ctypes

    from lstmc import _torch_cuda as tm

    f = object.__new__(tm._CudaFunction)
    f.ArgWords = ctypes.c_int64 * (9 + 5)  # a rank-3 and a rank-1 argument
    f._pointer_at = [0, 9]
    f._arg_layout = None

    def words(*tensors):
        descs, pointers = f._argument_words(tensors)
        assert pointers == [t.data_ptr() for t in tensors]
        return list(descs)

    a = torch.empty_strided((2, 1, 4), (4, 100, 1))
    assert a.is_contiguous()
    b = torch.zeros(5)
    pa, pb = a.data_ptr(), b.data_ptr()
    assert words(a, b) == [pa, pa, 0, 2, 1, 4, 4, 4, 1, pb, pb, 0, 5, 1]
    a2, b2 = torch.zeros(2, 1, 4), torch.zeros(5)
    assert words(a2, b2) == [a2.data_ptr(), a2.data_ptr(), 0, 2, 1, 4, 4, 4, 1,
                             b2.data_ptr(), b2.data_ptr(), 0, 5, 1]
    c = torch.zeros(3, 2, 6)
    assert words(c, b) == [c.data_ptr(), c.data_ptr(), 0, 3, 2, 6, 12, 6, 1, pb, pb, 0, 5, 1]
    assert words(a, b) == [pa, pa, 0, 2, 1, 4, 4, 4, 1, pb, pb, 0, 5, 1]
