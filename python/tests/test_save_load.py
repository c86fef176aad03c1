# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""A compiled network saved and loaded again runs where the compiler is not
importable (lstmc.load needs only numpy and ctypes)."""
import os
import subprocess
import sys
import textwrap

import numpy as np

import lstmc as lc


def test_round_trip(tmp_path):
    net = lc.Network(lc.cells.lstm, input_size=6, hidden=10, num_layers=2, lengths=True)
    params = net.init_params(seed=7)
    f = net.compile(target="cpu")
    # Two threads on both sides: the layers run on parts of the batch, one a
    # thread, whose products of fewer rows may round the last bit otherwise
    # than one part's (a thread count is reproducible, not every count
    # alike); and other tests of this process set the runtime's count.
    f.set_threads(2)
    rng = np.random.default_rng(8)
    x = rng.uniform(-1, 1, (5, 3, 6)).astype(np.float32)
    lengths = np.array([5, 2, 4], np.int32)
    expected = f.bind(params)(x, lengths)
    saved = f.save(str(tmp_path / "net"))
    np.savez(tmp_path / "data.npz", x=x, lengths=lengths, **params)
    for k, e in enumerate(expected):
        np.save(tmp_path / f"expected{k}.npy", e)
    # A fresh interpreter in which the compiler cannot be imported.
    script = textwrap.dedent(f"""
        import sys
        sys.modules["lstmc._lstmc"] = None  # no compiler
        import numpy as np
        import lstmc
        f = lstmc.load({saved!r})
        f.set_threads(2)
        d = dict(np.load({str(tmp_path / "data.npz")!r}))
        x, lengths = d.pop("x"), d.pop("lengths")
        outs = f.bind(d)(x, lengths)
        for k, o in enumerate(outs):
            e = np.load({str(tmp_path)!r} + f"/expected{{k}}.npy")
            assert o.shape == e.shape and np.array_equal(o, e), k
        try:
            lstmc.compile(None)
        except ImportError as e:
            assert "not available" in str(e)
        else:
            raise AssertionError("the compiler was importable")
        print("loaded", len(outs))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "loaded 3"
    assert sorted(os.listdir(saved)) == ["network.json", "network.so"]


def test_load_missing(tmp_path):
    import pytest
    with pytest.raises(FileNotFoundError, match="not a saved network"):
        lc.load(str(tmp_path))
