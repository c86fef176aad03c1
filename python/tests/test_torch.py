# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch interop on the CPU: networks from nn.LSTM / nn.GRU (and their
state_dict) give the modules' outputs."""
import numpy as np
import pytest

import lstmc as lc

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="PyTorch is not installed; interop tests skipped")

TOL = 1e-5


def rel(a, b):
    b = b.detach().numpy()
    assert np.isfinite(a).all()
    return np.linalg.norm(a - b) / np.linalg.norm(b)


@pytest.mark.parametrize("kind,opts", [
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"bias": False, "batch_first": True}),
    ("LSTM", {"proj_size": 5}),
    ("GRU", {}),
    ("GRU", {"num_layers": 3, "bias": False}),
    ("GRU", {"bidirectional": True, "batch_first": True}),
])
def test_module(kind, opts):
    torch.manual_seed(0)
    m = getattr(torch.nn, kind)(6, 12, **opts).eval()
    T, B = 5, 3
    x = torch.rand(B, T, 6) * 2 - 1 if m.batch_first else torch.rand(T, B, 6) * 2 - 1
    L = m.num_layers * (2 if m.bidirectional else 1)
    h0 = torch.rand(L, B, opts.get("proj_size", 12)) - 0.5
    hx = (h0, torch.rand(L, B, 12) - 0.5) if kind == "LSTM" else h0
    with torch.no_grad():
        ey, eh = m(x, hx)
    f = lc.TorchLike(m)
    y, h = f(x.numpy(), tuple(t.numpy() for t in hx) if kind == "LSTM" else hx.numpy())
    assert rel(y, ey) < TOL
    for a, b in zip(h if kind == "LSTM" else (h,), eh if kind == "LSTM" else (eh,)):
        assert a.shape == tuple(b.shape)
        assert rel(a, b) < TOL


def test_state_dict_and_lengths():
    """from_state_dict, and per-sequence lengths against packed sequences."""
    torch.manual_seed(1)
    m = torch.nn.LSTM(4, 8).eval()
    net, params = lc.from_state_dict(m.state_dict(), "LSTM", lengths=True)
    f = net.compile().bind(params)
    x = torch.rand(6, 3, 4)
    lengths = torch.tensor([6, 2, 4])
    packed = torch.nn.utils.rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
    with torch.no_grad():
        py, (eh, ec) = m(packed)
    ey, _ = torch.nn.utils.rnn.pad_packed_sequence(py, total_length=6)
    y, hT, cT = f(x.numpy(), lengths.numpy().astype(np.int32))
    assert rel(y, ey) < TOL and rel(hT, eh[0]) < TOL and rel(cT, ec[0]) < TOL


def test_gate_order_is_mapped():
    """The importer maps torch's blocks by name: a permuted table permutes."""
    from lstmc import interop
    a = np.arange(8.0).reshape(4, 2)
    assert (interop._reorder(a, "ifgo", "ifgo") == a).all()
    assert (interop._reorder(a, "ifgo", "gifo")[0] == a[2]).all()


def test_not_rnn():
    with pytest.raises(TypeError, match="expected nn.LSTM or nn.GRU"):
        lc.from_torch(torch.nn.Linear(2, 2))
