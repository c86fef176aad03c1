# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Threads of the CPU runtime's products (lib/Runtime/CpuBlas.cpp): oneDNN's
sgemm threads with OpenMP. Results with one and with two threads against the
float64 reference (fp32 tolerance of VARIANTS.md), on shapes large enough
that the products and the step's cell split across threads
(lstmRuntimeCpuParallelFor); and a child forked after the parent
ran its products on two threads, which GNU's OpenMP runtime would leave
hanging in its first parallel region: the runtime makes such a child compute
on one thread, so it gets the same answer and never hangs (run in a
subprocess under a time limit, so that a hang fails the test rather than the
suite)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import lstmc as lc
import reference as ref

TOL32 = 1e-5
I, H, T, B = 48, 64, 6, 96


def lstm_reference(x, p):
    w = {k: np.asarray(v, np.float64) for k, v in p.items()}
    step = ref.torch_lstm(w["W"], w["R"], w["bW"], w["bR"])
    zeros = np.zeros((x.shape[1], H))
    y, _ = ref.run_layer(step, np.asarray(x, np.float64), (zeros, zeros))
    return y


@pytest.fixture(scope="module")
def network():
    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)
    return net, net.compile(target="cpu")


@pytest.mark.parametrize("threads", [1, 2])
def test_thread_counts_agree_with_reference(network, threads):
    net, compiled = network
    compiled.set_threads(threads)
    assert compiled.threads == threads
    p = net.init_params(seed=threads)
    x = np.random.default_rng(threads).uniform(-1, 1, (T, B, I)).astype(np.float32)
    y = compiled.bind(p)(x)[0]
    exp = lstm_reference(x, p)
    assert np.linalg.norm(y - exp) / np.linalg.norm(exp) < TOL32
    compiled.set_threads(0)
    assert compiled.threads == (os.cpu_count() or 1)


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, 2 ** 31])
def test_set_threads_rejects_bad_counts(network, bad):
    with pytest.raises(ValueError, match="set_threads"):
        network[1].set_threads(bad)


FORK_SCRIPT = """
import ctypes, os, sys
import numpy as np
import lstmc as lc
net = lc.Network(lc.cells.lstm, input_size=%d, hidden=%d)
compiled = net.compile(target="cpu")
compiled.set_threads(2)
f = compiled.bind(net.init_params(seed=5))
x = np.random.default_rng(5).uniform(-1, 1, (%d, %d, %d)).astype(np.float32)
parent = f(x)[0]
pid = os.fork()
if pid == 0:
    compiled.set_threads(2)
    assert compiled.threads == 1
    child = f(x)[0]
    os._exit(0 if np.allclose(child, parent, rtol=1e-6, atol=1e-7) else 3)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
""" % (I, H, T, B, I)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_forked_child_computes_and_does_not_hang(tmp_path):
    script = tmp_path / "fork.py"
    script.write_text(FORK_SCRIPT)
    try:
        out = subprocess.run([sys.executable, str(script)], capture_output=True,
                             text=True, timeout=120)
    except subprocess.TimeoutExpired:
        pytest.fail("a forked child hung in the CPU runtime's products")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["child", "0"], out.stdout


@pytest.mark.parametrize("chunk_bytes", [0, 100_000, 150_000])
def test_chunk_bytes_agree_with_reference(chunk_bytes, tmp_path):
    """The hoisted projection (hoist_min_threads=1: hoisted on any number of
    threads) whole (0) and in chunks of 100 and 150 kB a thread (on two
    threads: two and three of the six steps, a step being
    B · 4H floats, 96 KiB) against the float64 reference. The option reaches
    the compiler: a chunked layer's library holds its loop over chunks, so
    it differs from the whole projection's."""
    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)
    libraries = {}
    for size in sorted({0, chunk_bytes}):
        libraries[size] = net.compile(tmp_path / str(size), target="cpu",
                                      pre_passes="lstm-optimize{wavefront=false}",
                                      chunk_bytes=size, hoist_min_threads=1)
    compiled = libraries[chunk_bytes]
    compiled.set_threads(2)
    p = net.init_params(seed=7)
    x = np.random.default_rng(7).uniform(-1, 1, (T, B, I)).astype(np.float32)
    y = compiled.bind(p)(x)[0]
    exp = lstm_reference(x, p)
    assert np.linalg.norm(y - exp) / np.linalg.norm(exp) < TOL32
    if chunk_bytes:
        whole, chunked = ((tmp_path / str(s) / "network.so").read_bytes()
                          for s in (0, chunk_bytes))
        assert whole != chunked


def test_chunks_not_under_twice_the_weights(tmp_path):
    """Chunks no larger than twice the projection's weights (48 x 256
    floats, 48 KiB) leave it whole: the same library as chunk_bytes=0."""
    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)
    for size in (0, 2 * I * 4 * H * 4):
        net.compile(tmp_path / str(size), target="cpu",
                    pre_passes="lstm-optimize{wavefront=false}", chunk_bytes=size,
                    hoist_min_threads=1)
    assert ((tmp_path / "0" / "network.so").read_bytes() ==
            (tmp_path / str(2 * I * 4 * H * 4) / "network.so").read_bytes())


@pytest.mark.parametrize("threads", [1, 2, 3, 4])
def test_hoist_by_threads_agrees_with_reference(tmp_path, threads):
    """lstm-optimize hoists the input projection; the library chooses at
    run time (hoist_min_threads, default 3) between it and the products in
    the steps: both against the float64 reference, on 1-4 threads."""
    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)
    compiled = net.compile(tmp_path, target="cpu", pre_passes="lstm-optimize{wavefront=false}")
    compiled.set_threads(threads)
    p = net.init_params(seed=11 + threads)
    x = np.random.default_rng(threads).uniform(-1, 1, (T, B, I)).astype(np.float32)
    y = compiled.bind(p)(x)[0]
    exp = lstm_reference(x, p)
    assert np.linalg.norm(y - exp) / np.linalg.norm(exp) < TOL32


def test_hoist_min_threads_reaches_the_compiler(tmp_path):
    """hoist_min_threads=1 (always hoisted) gives another library than the
    default (both forms); 4 another again (its threshold). Without hoisting
    (lstmc's default pre-passes) there is nothing to choose: the option
    changes nothing."""
    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)

    def library(name, **options):
        net.compile(tmp_path / name, target="cpu", **options)
        return (tmp_path / name / "network.so").read_bytes()

    hoisting = "lstm-optimize{wavefront=false}"
    chosen = library("default", pre_passes=hoisting)
    assert library("one", pre_passes=hoisting, hoist_min_threads=1) != chosen
    assert library("four", pre_passes=hoisting, hoist_min_threads=4) != chosen
    assert library("plain") == library("plain-one", hoist_min_threads=1)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_split_batch_agrees_with_reference(tmp_path, threads):
    """Each layer on parts of its batch, a thread each (split_batch, the
    default: 96 rows in 1 to 5 parts, unequal from 5) and the batch whole,
    both against the float64 reference; the option reaches the compiler
    (the whole form's library is another)."""
    net = lc.Network(lc.cells.lstm, input_size=I, hidden=H)
    p = net.init_params(seed=21 + threads)
    x = np.random.default_rng(30 + threads).uniform(-1, 1, (T, B, I)).astype(np.float32)
    for split in (True, False):
        compiled = net.compile(tmp_path / str(split), target="cpu",
                               pre_passes="lstm-optimize{wavefront=false}", split_batch=split)
        compiled.set_threads(threads)
        y = compiled.bind(p)(x)[0]
        exp = lstm_reference(x, p)
        assert np.linalg.norm(y - exp) / np.linalg.norm(exp) < TOL32, split
    assert ((tmp_path / "True" / "network.so").read_bytes() !=
            (tmp_path / "False" / "network.so").read_bytes())


BAD_CPU_OPTIONS = ([("chunk_bytes", bad) for bad in (-1, 1.5, "2", True, 2 ** 63)] +
                   [("hoist_min_threads", bad) for bad in (0, -1, 1.5, "2", True, 2 ** 31)] +
                   [("split_batch", bad) for bad in (0, 1, "no", None)])


@pytest.mark.parametrize("option, bad", BAD_CPU_OPTIONS)
def test_cpu_options_reject_bad_values(option, bad):
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=8)
    with pytest.raises(ValueError, match=option):
        net.compile(target="cpu", **{option: bad})


@pytest.mark.parametrize("option, value", [("chunk_bytes", 4096), ("hoist_min_threads", 2),
                                           ("split_batch", False)])
def test_cpu_options_are_for_the_cpu(option, value):
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=8)
    with pytest.raises(ValueError, match=f"{option} applies to target='cpu' only"):
        net.compile(target="cuda", **{option: value})
