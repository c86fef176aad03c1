# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Real trained weights: the bidirectional LSTM (64 -> 32) of g2pM 0.1.2.5
(PyPI; Chinese grapheme-to-phoneme), whose checkpoint g2pM/np_ckpt.pkl is a
pickled dict of numpy arrays in nn.LSTM's layout under 'lstm.'. Imported
with from_state_dict(prefix="lstm."), the network runs on fresh random
inputs and is compared with the package's own numpy implementation
(G2pM.fw_lstm_cell, bw_lstm_cell, reverse_sequence) and its predictions."""
import os
import pickle

import numpy as np
import pytest

import lstmc as lc

REASON = ("g2pM==0.1.2.5 is not installed (pip install g2pM==0.1.2.5; scripts/setup.sh "
          "installs it): the test on its trained LSTM weights is skipped")
g2pM = pytest.importorskip("g2pM", reason=REASON)


def _version():
    from importlib import metadata
    try:
        return metadata.version("g2pM")
    except metadata.PackageNotFoundError:
        return None


if _version() != "0.1.2.5":
    pytest.skip(f"g2pM {_version()} is installed, the test expects 0.1.2.5 ({REASON})",
                allow_module_level=True)

TOL = 1e-5  # fp32 against float64 (VARIANTS.md)


@pytest.fixture(scope="module")
def package():
    """The package's model (its numpy forward pass) and its checkpoint."""
    with open(os.path.join(os.path.dirname(g2pM.__file__), "np_ckpt.pkl"), "rb") as f:
        ckpt = pickle.load(f)
    return g2pM.G2pM(), ckpt


@pytest.fixture(scope="module")
def compiled(package):
    _, ckpt = package
    out = {}
    for dtype in ("float32", "float64"):
        net, params = lc.from_state_dict(ckpt, "LSTM", prefix="lstm.", lengths=True,
                                         dtype=dtype)
        out[dtype] = net.compile().bind(params)
    return out


def package_bilstm(model, x, lengths):
    """What G2pM.predict computes between the embedding and the classifier,
    with the package's functions: per-step fw / bw cells over the batch, the
    backward direction on each sequence reversed within its length.
    x [B, T, 64] float64; returns [B, T, 64] and the final (h, c) of both."""
    rev = model.reverse_sequence(x, lengths)
    fw = bw = None
    fws, bws = [], []
    for t in range(max(lengths)):
        fw = model.fw_lstm_cell(x[:, t, :], fw)
        bw = model.bw_lstm_cell(rev[:, t, :], bw)
        fws.append(fw[0])
        bws.append(bw[0])
    bwh = model.reverse_sequence(np.stack(bws, axis=1), lengths)
    return np.concatenate([np.stack(fws, axis=1), bwh], axis=2), fw, bw


def rel(a, b):
    assert np.isfinite(a).all()
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def test_checkpoint_imports(package):
    _, ckpt = package
    net, params = lc.from_state_dict(ckpt, "LSTM", prefix="lstm.")
    assert (net.input_size, net.num_layers, net.direction) == (64, 1, "bidirectional")
    assert net.state_sizes == [("h", 32), ("c", 32)]
    assert sorted(params) == ["R", "R_rev", "W", "W_rev", "bR", "bR_rev", "bW", "bW_rev"]
    # The whole checkpoint (embedding, classifier) without the prefix: the
    # error names the prefix to pass.
    with pytest.raises(ValueError, match=r"prefix='lstm.'"):
        lc.from_state_dict(ckpt, "LSTM")


@pytest.mark.parametrize("dtype,tol", [("float32", TOL), ("float64", 1e-10)])
def test_full_length_batch(package, compiled, dtype, tol):
    model, _ = package
    rng = np.random.default_rng(20 if dtype == "float32" else 21)
    B, T = 5, 9
    x = rng.uniform(-1, 1, (B, T, 64))
    lengths = [T] * B
    ref, (fh, fc), (bh, bc) = package_bilstm(model, x, lengths)
    xt = np.ascontiguousarray(x.transpose(1, 0, 2), dtype)
    y, hT, cT = compiled[dtype](xt, np.array(lengths, np.int32))
    assert rel(y.transpose(1, 0, 2), ref) < tol
    assert rel(hT, np.stack([fh, bh])) < tol and rel(cT, np.stack([fc, bc])) < tol


@pytest.mark.parametrize("dtype,tol", [("float32", TOL), ("float64", 1e-10)])
def test_embedded_characters_with_lengths(package, compiled, dtype, tol):
    """Random character ids through the package's embedding, sequences of
    different lengths (padding id 0 after them, as predict pads)."""
    model, _ = package
    rng = np.random.default_rng(22 if dtype == "float32" else 23)
    B, T = 6, 12
    lengths = [12, 3, 7, 1, 12, 9]
    ids = np.zeros((B, T), np.int64)
    for b, n in enumerate(lengths):
        ids[b, :n] = rng.integers(1, len(model.embeddings), n)
    x = model.get_embedding(ids).astype(np.float64)
    ref, _, _ = package_bilstm(model, x, lengths)
    y, _, _ = compiled[dtype](np.ascontiguousarray(x.transpose(1, 0, 2), dtype),
                              np.array(lengths, np.int32))
    y = y.transpose(1, 0, 2)
    # The package's forward direction runs on over the padding; compare each
    # sequence within its length, and check our zeros after it.
    for b, n in enumerate(lengths):
        assert rel(y[b, :n], ref[b, :n]) < tol
        assert (y[b, n:] == 0).all()


def test_predictions(package, compiled):
    """The package's classifier on our hidden states gives its predictions
    (G2pM.predict on the same character ids)."""
    model, _ = package
    rng = np.random.default_rng(24)
    B, T = 8, 10
    lengths = rng.integers(2, T + 1, B)
    lengths[0] = T
    ids = np.zeros((B, T), np.int32)
    for b, n in enumerate(lengths):
        ids[b, :n] = rng.integers(1, len(model.embeddings), n)
    target = [int(rng.integers(0, n)) for n in lengths]
    expected = model.predict(ids, target)
    x = np.ascontiguousarray(model.get_embedding(ids).transpose(1, 0, 2), np.float64)
    y, _, _ = compiled["float64"](x, lengths.astype(np.int32))
    hidden = y.transpose(1, 0, 2)[np.arange(B), target]
    ours = np.argmax(model.fc_layer(hidden), axis=1)
    np.testing.assert_array_equal(ours, expected)
