# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The compile cache (lstmc.compile's cache_dir, $LSTMC_CACHE_DIR): a compile
of the same network with the same options loads the library made before,
and anything that changes the library makes another entry."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import lstmc as lc
from lstmc import compiler


def _net(hidden=6):
    return lc.Network(lc.cells.lstm, input_size=4, hidden=hidden)


# The IR names where the network was made (file and line: run-time checks
# report them), so it is part of the key; a process that is to find another
# one's entry makes the network at the same place, this module's.
_NETDEF = """
import lstmc as lc


def net():
    return lc.Network(lc.cells.lstm, input_size=4, hidden=6)
"""


def _in_process(tmp_path, code):
    """Runs `code` in a fresh interpreter that can import netdef; returns its
    printed lines."""
    (tmp_path / "netdef.py").write_text(_NETDEF)
    script = "import sys\nsys.path.insert(0, %r)\n" % str(tmp_path) + textwrap.dedent(code)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def _netdef(tmp_path):
    (tmp_path / "netdef.py").write_text(_NETDEF)
    sys.path.insert(0, str(tmp_path))
    try:
        import importlib
        import netdef
        netdef = importlib.reload(netdef)
    finally:
        sys.path.remove(str(tmp_path))
    return netdef.net()


def _entries(root):
    return sorted(e for e in os.listdir(root) if not e.startswith("."))


def _run(f, params, seed=3):
    x = np.random.default_rng(seed).uniform(-1, 1, (5, 3, 4)).astype(np.float32)
    return f.bind(params)(x)


def test_second_compile_loads_the_first(tmp_path):
    net = _net()
    params = net.init_params(seed=1)
    first = net.compile(target="cpu", cache_dir=str(tmp_path))
    assert first.from_cache is False
    assert _entries(tmp_path) == [os.path.basename(first.directory)]
    second = net.compile(target="cpu", cache_dir=str(tmp_path))
    assert second.from_cache is True
    assert second.directory == first.directory
    for a, b in zip(_run(first, params), _run(second, params)):
        assert np.array_equal(a, b)
    # Nothing half-made is left beside the entry.
    assert sorted(os.listdir(tmp_path)) == _entries(tmp_path)


def test_what_changes_the_library_changes_the_entry(tmp_path):
    root = str(tmp_path)
    _net().compile(target="cpu", cache_dir=root)
    _net(hidden=7).compile(target="cpu", cache_dir=root)              # the IR
    _net().compile(target="cpu", cache_dir=root, pre_passes="")      # the passes
    _net().compile(target="cpu", cache_dir=root, split_batch=False)  # an option
    _net().compile(target="cpu", cache_dir=root, gradients="train")  # the functions
    assert len(_entries(root)) == 5
    f = _net().compile(target="cpu", cache_dir=root, gradients="train")
    assert f.from_cache and hasattr(f, "train") and hasattr(f, "backward")
    assert len(_entries(root)) == 5


def test_environment_variable_and_opting_out(tmp_path, monkeypatch):
    root = tmp_path / "cache"
    monkeypatch.setenv("LSTMC_CACHE_DIR", str(root))
    net = _net()
    assert net.compile(target="cpu").from_cache is False
    assert net.compile(target="cpu").from_cache is True
    assert net.compile(target="cpu", cache_dir=True).from_cache is True
    # False, or a directory asked for, compiles as without a cache.
    off = net.compile(target="cpu", cache_dir=False)
    assert off.from_cache is False and not off.directory.startswith(str(root))
    own = net.compile(path=str(tmp_path / "own"), target="cpu")
    assert own.from_cache is False and own.directory == str(tmp_path / "own")
    assert len(_entries(root)) == 1


def test_bad_values(tmp_path, monkeypatch):
    net = _net()
    monkeypatch.delenv("LSTMC_CACHE_DIR", raising=False)
    with pytest.raises(ValueError, match="LSTMC_CACHE_DIR is not set"):
        net.compile(target="cpu", cache_dir=True)
    for bad in ("", 3, 1.5):
        with pytest.raises(ValueError, match="cache_dir"):
            net.compile(target="cpu", cache_dir=bad)
    with pytest.raises(ValueError, match="path and cache_dir"):
        net.compile(path=str(tmp_path / "a"), target="cpu", cache_dir=str(tmp_path / "b"))
    # A compile that fails leaves no entry behind.
    root = tmp_path / "c"
    with pytest.raises(RuntimeError):
        net.compile(target="cpu", cache_dir=str(root), pre_passes="no-such-pass")
    assert not root.exists() or os.listdir(root) == []


def test_broken_entry_is_compiled_again(tmp_path):
    root = tmp_path / "cache"
    # Made and loaded by another process: this one has not mapped it.
    assert _in_process(tmp_path, f"""
        import netdef
        print(netdef.net().compile(target="cpu", cache_dir={str(root)!r}).from_cache)
    """) == ["False"]
    [entry] = _entries(root)
    library = root / entry / "network.so"
    library.write_bytes(b"not a library")
    net = _netdef(tmp_path)
    with pytest.warns(RuntimeWarning, match="cannot be loaded"):
        again = net.compile(target="cpu", cache_dir=str(root))
    assert again.from_cache is False and _entries(root) == [entry]
    params = net.init_params(seed=2)
    reference = net.compile(target="cpu", cache_dir=False)
    for a, b in zip(_run(reference, params), _run(again, params)):
        assert np.array_equal(a, b)


def test_another_process_finds_the_entry(tmp_path):
    root = tmp_path / "cache"
    assert _netdef(tmp_path).compile(target="cpu", cache_dir=str(root)).from_cache is False
    assert _in_process(tmp_path, f"""
        import netdef
        print(netdef.net().compile(target="cpu", cache_dir={str(root)!r}).from_cache)
    """) == ["True"]
    assert len(_entries(root)) == 1


def test_a_new_compiler_misses(tmp_path, monkeypatch):
    """The key names the compiler's library (size, modification time): a
    reinstalled lstmc compiles again."""
    root = str(tmp_path)
    _net().compile(target="cpu", cache_dir=root)
    real_stat = os.stat

    class Newer:
        def __init__(self, st):
            self.st_size, self.st_mtime_ns = st.st_size, st.st_mtime_ns + 1

    from lstmc import _lstmc
    monkeypatch.setattr(compiler.os, "stat", lambda p, *a, **k: Newer(real_stat(p))
                        if p == _lstmc.LIBRARY else real_stat(p, *a, **k))
    assert _net().compile(target="cpu", cache_dir=root).from_cache is False
    assert len(_entries(root)) == 2


def test_entry_made_meanwhile_is_kept(tmp_path, monkeypatch):
    """Two processes compiling the same network: the one that renames its
    directory second finds the entry there, loads it and leaves nothing of
    its own behind."""
    root = str(tmp_path)
    net = _net()
    first = net.compile(target="cpu", cache_dir=root)
    made = os.path.getmtime(os.path.join(first.directory, "network.so"))
    real = compiler._cached
    lookups = []

    def missed_once(r, key):
        lookups.append(key)
        return None if len(lookups) == 1 else real(r, key)

    monkeypatch.setattr(compiler, "_cached", missed_once)
    again = net.compile(target="cpu", cache_dir=root)
    assert len(lookups) == 2 and again.from_cache is True
    assert again.directory == first.directory
    assert os.path.getmtime(os.path.join(again.directory, "network.so")) == made
    assert sorted(os.listdir(root)) == [os.path.basename(first.directory)]


def test_failed_compile_leaves_no_temporary_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("LSTMC_CACHE_DIR", raising=False)
    monkeypatch.setattr(compiler.tempfile, "tempdir", str(tmp_path))
    with pytest.raises(RuntimeError):
        _net().compile(target="cpu", pre_passes="no-such-pass")
    assert os.listdir(tmp_path) == []
