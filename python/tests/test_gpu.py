# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU path: CUDA tensors of PyTorch (and CuPy if installed) in, without
copies, on the caller's stream; checked against the float64 reference.
Marked gpu: skipped without a GPU (conftest.py)."""
import numpy as np
import pytest

import lstmc as lc
import reference as ref
from cases import network

pytestmark = pytest.mark.gpu
TOL = 1e-5


@pytest.fixture(scope="module")
def torch():
    return pytest.importorskip("torch", reason="the GPU tests use PyTorch CUDA tensors")


def check_on_side_stream(torch, f, name, T, B, seed):
    """Runs `f` on fresh inputs of example `name` on a side stream and
    compares every result with the float64 reference."""
    inputs = ref.make_inputs(name, T, B, np.random.default_rng(seed))
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        outs = f(*[torch.from_numpy(a).cuda() for a in inputs])
    stream.synchronize()
    for out, exp in zip(outs, ref.expected(name, inputs)):
        assert out.is_cuda
        o = out.cpu().numpy()
        assert np.isfinite(o).all()
        assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < TOL


@pytest.mark.parametrize("name", ["lstm", "gru", "cho_gru", "peephole", "varlen",
                                  "bidirectional", "stack3", "lstmp", "greff_fgr"])
@pytest.mark.parametrize("T,B", [(1, 1), (7, 5)])
def test_reference_on_gpu(torch, name, T, B):
    check_on_side_stream(torch, network(name).compile(target="cuda"), name, T, B, 3)


@pytest.mark.parametrize("name", ["lstm", "gru", "peephole", "stack3", "bidirectional",
                                  "cho_gru"])
@pytest.mark.parametrize("T,B", [(1, 1), (30, 7)])
def test_persistent_on_gpu(torch, name, T, B):
    """persistent=True: the layers run as persistent kernels (Cho's GRU in
    two phases a step: its R_n product reads r * h), within the fp32
    tolerance of the float64 reference, on the caller's stream."""
    f = network(name).compile(target="cuda", persistent=True)
    check_on_side_stream(torch, f, name, T, B, 11)


@pytest.mark.parametrize("form", ["batched", "looped", "auto"])
def test_batched_gemm_forms(torch, form, monkeypatch):
    """The wavefront's batched GEMMs (stack3's three layers a diagonal, one
    strided batched GEMM per product) run as cuBLAS's batched call, as one
    call per matrix, or as whichever the runtime measured faster
    (LSTM_RUNTIME_GEMM_BATCHED): all three within the fp32 tolerance of the
    float64 reference, also where beta != 0 would show a GEMM run twice
    into its output (the measuring runs write scratch memory)."""
    monkeypatch.setenv("LSTM_RUNTIME_GEMM_BATCHED", form)
    f = network("stack3").compile(target="cuda", pre_passes="lstm-optimize")
    check_on_side_stream(torch, f, "stack3", 9, 6, 23)


def test_batched_gemm_form_unknown(torch, monkeypatch):
    """An unknown LSTM_RUNTIME_GEMM_BATCHED fails the call with a message
    naming the variable, rather than picking a form silently."""
    monkeypatch.setenv("LSTM_RUNTIME_GEMM_BATCHED", "sideways")
    f = network("stack3").compile(target="cuda", pre_passes="lstm-optimize")
    inputs = ref.make_inputs("stack3", 3, 2, np.random.default_rng(5))
    with pytest.raises(RuntimeError, match="LSTM_RUNTIME_GEMM_BATCHED"):
        f(*[torch.from_numpy(a).cuda() for a in inputs])


@pytest.mark.parametrize("algo", ["cublas", "cublaslt", "tuned"])
@pytest.mark.parametrize("name,T,B", [("stack3", 9, 6), ("lstmp", 7, 5),
                                      ("bidirectional", 5, 3), ("greff_fgr", 6, 1)])
def test_gemm_algorithms(torch, algo, name, T, B, monkeypatch):
    """Every GEMM by cuBLAS's own call, by the fastest of cublasLt's
    algorithms whatever cuBLAS measured (cublaslt), or by whichever measured
    faster (tuned, the default; LSTM_RUNTIME_GEMM_ALGO): within the fp32
    tolerance of the float64 reference, for the wavefront's batched GEMMs,
    a projection, both directions and a batch of one (operands at odd
    offsets: the algorithms are chosen for the operands' alignment)."""
    monkeypatch.setenv("LSTM_RUNTIME_GEMM_ALGO", algo)
    f = network(name).compile(target="cuda", pre_passes="lstm-optimize")
    check_on_side_stream(torch, f, name, T, B, 29)


def test_gemm_algorithm_unknown(torch, monkeypatch):
    """An unknown LSTM_RUNTIME_GEMM_ALGO fails the call with a message
    naming the variable."""
    monkeypatch.setenv("LSTM_RUNTIME_GEMM_ALGO", "fastest")
    f = network("lstm").compile(target="cuda", pre_passes="lstm-optimize")
    inputs = ref.make_inputs("lstm", 3, 2, np.random.default_rng(5))
    with pytest.raises(RuntimeError, match="LSTM_RUNTIME_GEMM_ALGO"):
        f(*[torch.from_numpy(a).cuda() for a in inputs])


def kernels_launched(torch, f, inputs):
    """The names of the CUDA kernels one call of `f` launches (CUPTI sees
    the driver-API launches of our runtime too)."""
    from torch.profiler import ProfilerActivity, profile
    args = [torch.from_numpy(a).cuda() for a in inputs]
    f(*args)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        outs = f(*args)
        torch.cuda.synchronize()
    return {e.key for e in prof.key_averages()}, outs


def check_runtime_choice(torch, f, name, inputs, monkeypatch, variable, limit):
    """Runs `f` with the GPU as it is and with `variable` (a limit the
    runtime reports, LSTM_RUNTIME_GPU_*) set to `limit`: persistent kernels
    the first time, none the second (the cost model's run-time choice), both
    within the fp32 tolerance of the float64 reference."""
    expected = ref.expected(name, inputs)
    for limit_variable in ("LSTM_RUNTIME_GPU_MULTIPROCESSORS",
                           "LSTM_RUNTIME_GPU_SHARED_MEMORY"):
        monkeypatch.delenv(limit_variable, raising=False)
    for value, persistent in ((None, True), (limit, False)):
        if value is not None:
            monkeypatch.setenv(variable, value)
        names, outs = kernels_launched(torch, f, inputs)
        assert any("lstm_persistent" in k for k in names) == persistent, sorted(names)
        for out, exp in zip(outs, expected):
            o = out.cpu().numpy()
            assert np.isfinite(o).all()
            assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < TOL


@pytest.mark.parametrize("name", ["lstm", "stack3"])
def test_persistent_needs_the_sms(torch, name, monkeypatch):
    """The cost model's run-time choice also asks the GPU's SM count: with
    fewer SMs than the kernel has blocks (LSTM_RUNTIME_GPU_MULTIPROCESSORS
    makes the runtime report fewer) the layers run per step instead of
    failing the cooperative launch (stack3, whose layers lstm-optimize
    {persistent=true} keeps for the kernels at this batch: as its wavefront);
    with the GPU's own count, as persistent kernels. Both within the fp32
    tolerance of the float64 reference."""
    f = network(name).compile(target="cuda", persistent=True)
    inputs = ref.make_inputs(name, 9, 4, np.random.default_rng(17))
    check_runtime_choice(torch, f, name, inputs, monkeypatch,
                         "LSTM_RUNTIME_GPU_MULTIPROCESSORS", "2")


@pytest.mark.parametrize("name", ["lstm", "cho_gru"])
def test_persistent_needs_the_shared_memory(torch, name, monkeypatch):
    """A persistent kernel whose batch needs more than the 48 KiB of shared
    memory every GPU gives a block (here 120 rows of h, 60 KiB) runs only
    where the GPU gives that much: with less reported
    (LSTM_RUNTIME_GPU_SHARED_MEMORY) the layers run per step; with the GPU's
    own limit as persistent kernels, opted in to the memory at launch. Both
    within the fp32 tolerance of the float64 reference. Without row tiles:
    with them each block stages an eighth of the rows, under 48 KiB."""
    f = network(name).compile(
        target="cuda", persistent=True,
        pre_passes="lstm-optimize{persistent=true},"
                   "lstm-to-persistent{row-tiles=false shared-memory=229376}")
    inputs = ref.make_inputs(name, 7, 120, np.random.default_rng(23))
    check_runtime_choice(torch, f, name, inputs, monkeypatch,
                         "LSTM_RUNTIME_GPU_SHARED_MEMORY", "40000")


@pytest.mark.parametrize("name", ["lstm", "gru", "cho_gru", "stack3", "lstmp"])
def test_bf16_on_gpu(torch, name):
    """compute_type='bf16': GEMM operands rounded to bf16, fp32 accumulation,
    within VARIANTS.md's bf16 tolerance of the float64 reference."""
    f = network(name, compute_type="bf16").compile(target="cuda", pre_passes="lstm-optimize")
    inputs = ref.make_inputs(name, 9, 33, np.random.default_rng(5))
    outs = f(*[torch.from_numpy(a).cuda() for a in inputs])
    torch.cuda.synchronize()
    for out, exp in zip(outs, ref.expected(name, inputs)):
        o = out.cpu().numpy()
        assert np.isfinite(o).all()
        assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < 2e-2


def test_inputs_not_copied(torch):
    """Non-contiguous inputs are refused (a copy would be hidden)."""
    net = lc.Network(lc.cells.rnn, input_size=4, hidden=8)
    f = net.compile(target="cuda")
    p = {k: torch.from_numpy(v).cuda() for k, v in net.init_params().items()}
    x = torch.rand(3, 4, 2, device="cuda").transpose(1, 2)
    with pytest.raises(lc.CallError, match="contiguous"):
        f.bind(p)(x)
    with pytest.raises(lc.CallError, match="numpy"):
        f.bind(p)(np.zeros((3, 2, 4), np.float32))


def test_save_load_gpu(torch, tmp_path):
    net = lc.Network(lc.cells.gru, input_size=4, hidden=8)
    params = net.init_params()
    f = net.compile(target="cuda")
    g = lc.load(f.save(str(tmp_path / "gru")))
    p = {k: torch.from_numpy(v).cuda() for k, v in params.items()}
    x = torch.rand(5, 2, 4, device="cuda")
    for a, b in zip(f.bind(p)(x), g.bind(p)(x)):
        assert torch.equal(a, b)


def test_torch_module_on_gpu(torch):
    m = torch.nn.LSTM(6, 12, num_layers=2).eval()
    f = lc.TorchLike(m, target="cuda")
    x = torch.rand(4, 3, 6)
    with torch.no_grad():
        ey, (eh, ec) = m(x)
    y, (h, c) = f(x.cuda())
    assert torch.allclose(y.cpu(), ey, atol=1e-5)
    assert torch.allclose(c.cpu(), ec, atol=1e-5)


def test_cupy(torch):
    """CuPy arrays in and out, checked against the float64 reference."""
    name = "mgu"
    f = network(name).compile(target="cuda")
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    inputs = ref.make_inputs(name, 5, 2, np.random.default_rng(4))
    outs = f(*[cupy.asarray(a) for a in inputs])
    cupy.cuda.get_current_stream().synchronize()
    for out, exp in zip(outs, ref.expected(name, inputs)):
        o = cupy.asnumpy(out)
        assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < TOL
