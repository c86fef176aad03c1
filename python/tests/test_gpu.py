# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The GPU path: CUDA tensors of PyTorch (and CuPy if installed) in, without
copies, on the caller's stream; checked against the float64 reference.
Marked gpu: skipped without a GPU (conftest.py)."""
import copy

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


@pytest.mark.parametrize("name", ["varlen", "varlen_stack2", "lstmp", "lstmp_stack2",
                                  "varlen_lstmp_bidirectional2", "ln_lstm_stack2"])
@pytest.mark.parametrize("T,B", [(1, 1), (9, 5), (30, 7)])
def test_persistent_lengths_projections_layer_norm(torch, name, T, B):
    """Layers with lengths, LSTMP layers and layer-normalised LSTM layers run
    as persistent kernels (the two layers of varlen_stack2, lstmp_stack2 and
    ln_lstm_stack2 as one kernel each): a step at or past a row's length
    keeps its states and writes zeros to its outputs; the projected h
    [B, P], narrower than c [B, H], is a product of the step's second phase,
    stored by units below P; the layer norms' 4H-wide values are evaluated
    four columns a unit, their means and variances products in phases of
    their own. Kernels launched; results within the fp32 tolerance of the
    float64 reference (lengths from 1 to T)."""
    f = network(name).compile(target="cuda", persistent=True)
    inputs = ref.make_inputs(name, T, B, np.random.default_rng(29))
    names, outs = kernels_launched(torch, f, inputs)
    assert any("lstm_persistent" in k for k in names), sorted(names)
    for out, exp in zip(outs, ref.expected(name, inputs)):
        o = out.cpu().numpy()
        assert np.isfinite(o).all()
        assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < TOL


def bf16(a):
    """`a` rounded to bf16 (from float32, to nearest, ties to even), as
    float64."""
    bits = np.asarray(a, np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return bits.astype(np.uint32).view(np.float32).astype(np.float64)


class BF16Operands(np.ndarray):
    """A float64 array whose matrix products round both operands to bf16
    first, and whose results are such arrays again: the float64 reference
    run through it computes what a bf16 compute type asks of every GEMM."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        args = [np.asarray(a) for a in inputs]
        if ufunc is np.matmul:
            args = [bf16(a) for a in args]
        out = getattr(ufunc, method)(*args, **kwargs)
        return out.view(BF16Operands) if isinstance(out, np.ndarray) else out


@pytest.mark.parametrize("name", ["lstm", "cho_gru", "stack3"])
def test_persistent_bf16_operands(torch, name):
    """Under compute_type='bf16' the persistent kernels round both operands
    of their products to bf16 and sum in fp32: their results agree with the
    float64 reference whose every matrix product rounds its operands
    (BF16Operands) to fp32 accuracy, far closer than to the exact one,
    which they meet within the bf16 tolerance of VARIANTS.md (2e-2)."""
    T, B = 30, 7
    f = network(name, compute_type="bf16").compile(target="cuda", persistent=True)
    inputs = ref.make_inputs(name, T, B, np.random.default_rng(41))
    names, outs = kernels_launched(torch, f, inputs)
    assert any("lstm_persistent" in k for k in names), sorted(names)
    args, cell = ref.spec_of(name)
    rounded = cell(**{n: a.astype(np.float64).view(BF16Operands)
                      for (n, _, _), a in zip(args, inputs)})
    for out, exact, emulated in zip(outs, ref.expected(name, inputs), rounded):
        o = out.cpu().numpy().astype(np.float64)
        emulated = np.asarray(emulated)
        to_emulated = np.linalg.norm(o - emulated) / np.linalg.norm(emulated)
        to_exact = np.linalg.norm(o - exact) / np.linalg.norm(exact)
        assert to_emulated < 1e-4, (to_emulated, to_exact)
        assert to_exact < 2e-2
        assert to_emulated < to_exact / 10, (to_emulated, to_exact)


@pytest.mark.parametrize("compute_type,tol,batch",
                         [("tf32", 2e-3, 37), ("bf16", 2e-2, 37), ("fp32", 1e-5, 70)])
@pytest.mark.parametrize("name", ["lstm", "cho_gru", "stack3"])
def test_persistent_tensor_cores(torch, name, compute_type, tol, batch):
    """Under compute_type 'tf32' and 'bf16' the persistent kernels' products
    run on tensor cores from a batch of 16 (TF32) or 4 (bf16), a second
    kernel of dot products below it: at B = 1 and at B = 37 (two tiles of
    16 rows and a part of one) different kernels run, both within the
    tolerance of VARIANTS.md against the float64 reference, over 40 steps
    (stack3: three layers in one kernel; Cho's GRU: two phases a step).
    Under 'fp32' they run as 3xTF32 from where the dot products stop, at 64
    for these small layers: B = 70 (four tiles and a part), within fp32's
    1e-5."""
    f = network(name, compute_type=compute_type).compile(target="cuda", persistent=True)
    launched = []
    for T, B in [(40, 1), (40, batch)]:
        inputs = ref.make_inputs(name, T, B, np.random.default_rng(53 + B))
        names, outs = kernels_launched(torch, f, inputs)
        persistent = {k for k in names if "lstm_persistent" in k}
        assert persistent, sorted(names)
        launched.append(persistent)
        for out, exp in zip(outs, ref.expected(name, inputs)):
            o = out.cpu().numpy().astype(np.float64)
            assert np.isfinite(o).all()
            assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < tol
    assert launched[0] != launched[1], launched


def check_graphed_step(torch, m, x_shape, y_shape, steps, make_x, final):
    """A training step of torch module `m` (loss (y * gy).sum() plus
    `final`(hT, cT)) through GraphedStep `steps` times on new inputs
    (`make_x(shape)`): its three warm-up calls, then the capture and the
    replays (`steps` > 3), each against the same step of a copy of `m` run
    eagerly: the loss and every parameter's gradient within 1e-5."""
    twin = copy.deepcopy(m)

    def step(module, x, gy):
        y, hT, cT = module(x)
        loss = (y * gy).sum() + final(hT, cT)
        loss.backward()
        return loss.detach()

    runner = lc.torch_module.GraphedStep(lambda x, gy: step(m, x, gy),
                                         torch.zeros(x_shape, device="cuda"),
                                         torch.zeros(y_shape, device="cuda"),
                                         zero_grad=m.zero_grad)
    for _ in range(steps):
        x = make_x(x_shape)
        gy = torch.randn(y_shape, device="cuda")
        loss = runner(x, gy)
        twin.zero_grad()
        with torch.cuda.stream(runner.stream):  # the libraries' buffers are per stream
            runner.stream.wait_stream(torch.cuda.current_stream())
            eager = step(twin, x, gy)
        torch.cuda.current_stream().wait_stream(runner.stream)
        assert (loss - eager).abs() <= 1e-5 * eager.abs()
        for a, b in zip(m.parameters(), twin.parameters()):
            assert (a.grad - b.grad).norm() <= 1e-5 * b.grad.norm()
    assert runner.graph is not None
    del runner
    lc.torch_module.release_captured()


@pytest.mark.parametrize("T,B,I,H", [(40, 8, 256, 128), (60, 40, 1024, 640), (2, 2048, 512, 512)])
def test_split_tf32_gemms_within_fp32(torch, T, B, I, H):
    """Under the fp32 compute type a sequence's products run on TF32 tensor
    cores with split operands (lstm-split-tf32-gemms, on by default) where
    they have at least 128 rows, columns and terms and 512 multiply-adds
    for each element the splits write. At I = 256, H = 128, T = 40, B = 8:
    the first layer's hoisted input projection (320 x 512 x 256), each one
    product. At I = 1024, H = 640, T = 60, B = 40 the products deeper than
    1024 terms run in parts whose sums are added in fp32: the backward's
    products through the first layer's input weights (4H = 2560 terms,
    three parts) and the weight gradients of 2560 x 640 and 2560 x 1024
    (T·B = 2400, three parts, on the side streams of
    lstm-fork-independent-work). At I = H = 512, T = 2, B = 2048 the steps'
    products too: the forward's h·Rᵀ, R split once before the loops, and
    the backward's dG·R (2048 terms: two parts, 2^20 outputs), whose loop
    carries the batch in states that trade their rows (the test of the
    batch built from the loop's initial states). A two-layer LSTM through
    lc.torch_module
    on the GPU: the forward and every gradient within fp32's 1e-5
    (norm-relative) of nn.LSTM in float64 with the same weights; the
    training step captured in a CUDA graph, as the eager step."""
    torch.manual_seed(11)
    ref32 = torch.nn.LSTM(I, H, num_layers=2)
    net, params = lc.from_torch(ref32)
    ours = lc.torch_module(net, params, target="cuda")
    ref = torch.nn.LSTM(I, H, num_layers=2).double().cuda()
    ref.load_state_dict(ref32.state_dict())
    g = torch.Generator().manual_seed(5)
    x = torch.rand(T, B, I, generator=g) * 2 - 1
    h0, c0 = (torch.rand(2, B, H, generator=g) * 2 - 1 for _ in range(2))
    cots = [torch.randn(s, generator=g).cuda() for s in ((T, B, H), (2, B, H), (2, B, H))]
    results = {}
    for which, mod, dtype in (("ref", ref, torch.float64), ("ours", ours, torch.float32)):
        xs = [t.to("cuda", dtype).requires_grad_(True) for t in (x, h0, c0)]
        if which == "ref":
            y, (hT, cT) = mod(xs[0], (xs[1], xs[2]))
        else:
            y, hT, cT = mod(*xs)
        mod.zero_grad()
        sum((o * c.to(dtype)).sum() for o, c in zip((y, hT, cT), cots)).backward()
        results[which] = ([o.detach() for o in (y, hT, cT)] + [t.grad for t in xs],
                          {n: p.grad.clone() for n, p in mod.named_parameters()})
        # (The autograd graph, which holds the parameters' gradient
        # accumulators, gone before the capture below on another stream.)
        del y, hT, cT
    names = {"W": "weight_ih", "R": "weight_hh", "bW": "bias_ih", "bR": "bias_hh"}
    pairs = list(zip(results["ours"][0], results["ref"][0]))
    pairs += [(grad, results["ref"][1][names[n[:-1]] + "_l" + n[-1]])
              for n, grad in results["ours"][1].items()]
    assert len(pairs) == 6 + 8
    for a, b in pairs:
        a, b = a.detach().double(), b.detach().double()
        assert torch.isfinite(a).all()
        assert float((a - b).norm() / b.norm()) < 1e-5

    # The same training step captured in a CUDA graph: the weight
    # gradients, products in parts behind a check of T·B, run on side
    # streams (lstm-fork-independent-work) and allocate their results there.
    check_graphed_step(torch, ours, (T, B, I), (T, B, H), 5,
                       lambda shape: torch.rand(shape, device="cuda") * 2 - 1,
                       final=lambda hT, cT: cT.sum())


@pytest.mark.parametrize("name", ["lstm", "stack3"])
def test_persistent_tensor_cores_options(torch, name):
    """Network.compile's persistent_tensor_cores and persistent_split_depth:
    under fp32, persistent_tensor_cores=False runs the one kernel of fp32
    multiply-adds at B = 1 and 70 (no `_dots` kernel beside it, the same
    kernel at both), persistent_split_depth=2 the 3xTF32 kernel with two
    warps a tile's depth at 70; both within fp32's 1e-5 of the float64
    reference."""
    fma = network(name).compile(target="cuda", persistent=True,
                                persistent_tensor_cores=False)
    split = network(name).compile(target="cuda", persistent=True, persistent_split_depth=2)
    for f, sizes in ((fma, [(30, 1), (30, 70)]), (split, [(30, 70)])):
        launched = []
        for T, B in sizes:
            inputs = ref.make_inputs(name, T, B, np.random.default_rng(97 + B))
            names, outs = kernels_launched(torch, f, inputs)
            persistent = {k for k in names if "lstm_persistent" in k}
            assert persistent and not any(k.endswith("_dots") for k in persistent), names
            launched.append(persistent)
            for out, exp in zip(outs, ref.expected(name, inputs)):
                o = out.cpu().numpy().astype(np.float64)
                assert np.isfinite(o).all()
                assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < 1e-5
        assert all(k == launched[0] for k in launched), launched


@pytest.mark.parametrize("split", [2, 4])
@pytest.mark.parametrize("compute_type,tol", [("tf32", 2e-3), ("bf16", 2e-2)])
@pytest.mark.parametrize("name", ["lstm", "cho_gru", "stack3"])
def test_persistent_tensor_cores_split_depth(torch, name, compute_type, tol, split):
    """tensor-cores-split-depth: the warps of a tile split its depth, each
    summing its share into a partial tile that one of them adds up: at
    B = 5 (one tile) and B = 37 (three tiles a block's set of warps, the
    partial tiles alternating in shared memory) within the tolerance of the
    float64 reference."""
    options = ("always=true tensor-cores=true tensor-cores-from-batch=1 "
               f"tensor-cores-split-depth={split} shared-memory=229376")
    if compute_type == "bf16":
        options += " bf16-operands=true"
    f = network(name, compute_type=compute_type).compile(
        target="cuda",
        pre_passes=f"lstm-optimize{{wavefront=false}},lstm-to-persistent{{{options}}}")
    for T, B in [(30, 5), (30, 37)]:
        inputs = ref.make_inputs(name, T, B, np.random.default_rng(71 + B))
        names, outs = kernels_launched(torch, f, inputs)
        assert any("lstm_persistent" in k for k in names), sorted(names)
        for out, exp in zip(outs, ref.expected(name, inputs)):
            o = out.cpu().numpy().astype(np.float64)
            assert np.isfinite(o).all()
            assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < tol


def test_persistent_tensor_cores_split_to_fit(torch):
    """An LSTM of H = 320 in TF32 under tensor-cores-split-depth=0 (split
    only to fit): a warp's fragments of the whole depth (80 registers a
    lane) do not fit the 64 of a 512-thread block, so two warps split each
    tile's depth. Under the cost model, the tensor-core kernel runs at
    B = 37 (not the dots kernel) within 2e-3 of the float64 reference."""
    hidden, inputs_size, T, B = 320, 48, 30, 37
    persistent = ("lstm-to-persistent{tensor-cores=true tensor-cores-split-depth=0 "
                  "shared-memory=229376 async-copies=true}")
    f = lc.Network(lc.cells.lstm, input_size=inputs_size, hidden=hidden,
                   compute_type="tf32").compile(
        target="cuda", pre_passes=f"lstm-optimize{{wavefront=false}},{persistent}")
    rng = np.random.default_rng(83)
    scale = 1 / np.sqrt(hidden)
    x = rng.standard_normal((T, B, inputs_size)).astype(np.float32)
    h0, c0 = (rng.standard_normal((B, hidden)).astype(np.float32) for _ in range(2))
    W = (rng.uniform(-scale, scale, (4 * hidden, inputs_size))).astype(np.float32)
    R = (rng.uniform(-scale, scale, (4 * hidden, hidden))).astype(np.float32)
    bW, bR = (rng.uniform(-scale, scale, 4 * hidden).astype(np.float32) for _ in range(2))
    names, outs = kernels_launched(torch, f, [x, h0, c0, W, R, bW, bR])
    persistent = [k for k in names if "lstm_persistent" in k]
    assert persistent and not any(k.endswith("_dots") for k in persistent), sorted(names)
    f64 = [a.astype(np.float64) for a in (x, h0, c0, W, R, bW, bR)]
    y, (h, c) = ref.run_layer(ref.torch_lstm(*f64[3:]), f64[0], (f64[1], f64[2]))
    for out, exp in zip(outs, [y, h, c]):
        o = out.cpu().numpy().astype(np.float64)
        assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < 2e-3


def check_runtime_variable_error(torch, monkeypatch, variable, value, name):
    """A call of example `name` (optimised) with the runtime's environment
    variable `variable` set to an unknown `value` fails with a message
    naming the variable, rather than going on with a default."""
    monkeypatch.setenv(variable, value)
    f = network(name).compile(target="cuda", pre_passes="lstm-optimize")
    inputs = ref.make_inputs(name, 3, 2, np.random.default_rng(5))
    with pytest.raises(RuntimeError, match=variable):
        f(*[torch.from_numpy(a).cuda() for a in inputs])


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
    check_runtime_variable_error(torch, monkeypatch, "LSTM_RUNTIME_GEMM_BATCHED", "sideways",
                                 "stack3")


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
    check_runtime_variable_error(torch, monkeypatch, "LSTM_RUNTIME_GEMM_ALGO", "fastest", "lstm")


def reference_stack(torch, cell, params, x, hidden):
    """A stack of `cell` layers (docs/VARIANTS.md: "lstm" as nn.LSTM, Cho's
    GRU with the reset gate before its recurrent product) in PyTorch's
    autograd on x's dtype, from zero initial states, the parameters by
    lstmc's names (W0, R0, bW0, bR0, W1, ...): [y, hT] and, for the LSTM,
    cT."""
    layers = len(params) // 4
    inputs, finals, cells = x, [], []
    for layer in range(layers):
        W, R, bW, bR = (params[f"{n}{layer}"] for n in ("W", "R", "bW", "bR"))
        h = x.new_zeros(x.shape[1], hidden)
        c = x.new_zeros(x.shape[1], hidden)
        ys = []
        for x_t in inputs:
            if cell == "lstm":
                i, f, g, o = (x_t @ W.T + bW + h @ R.T + bR).chunk(4, 1)
                c = f.sigmoid() * c + i.sigmoid() * g.tanh()
                h = o.sigmoid() * c.tanh()
            else:
                (Wr, Wz, Wn), (Rr, Rz, Rn) = W.chunk(3), R.chunk(3)
                br, bz, bn = (bW + bR).chunk(3)
                r = (x_t @ Wr.T + h @ Rr.T + br).sigmoid()
                z = (x_t @ Wz.T + h @ Rz.T + bz).sigmoid()
                n = (x_t @ Wn.T + (r * h) @ Rn.T + bn).tanh()
                h = (1 - z) * n + z * h
            ys.append(h)
        inputs = torch.stack(ys)
        finals.append(h)
        cells.append(c)
    out = [inputs, torch.stack(finals)]
    return out + [torch.stack(cells)] if cell == "lstm" else out


@pytest.mark.parametrize("layout", ["nk", "kn", "auto"])
@pytest.mark.parametrize("name,T,B", [("stack3", 9, 6), ("lstmp", 7, 5), ("bidirectional", 5, 3),
                                      ("cho_gru", 6, 4), ("greff_fgr", 6, 1)])
def test_weights_layouts(torch, layout, name, T, B, monkeypatch):
    """A step's products on the weights as the gates keep them (nk), on
    the weights transposed before the loop (kn), or on whichever the
    runtime measured faster for the product's sizes (auto, the default;
    LSTM_RUNTIME_WEIGHTS_LAYOUT, lstm-transpose-loop-weights): within the
    fp32 tolerance of the float64 reference, for the wavefront's batched
    products, a projection, both directions, Cho's GRU's product of r ⊙ h
    and a batch of one."""
    monkeypatch.setenv("LSTM_RUNTIME_WEIGHTS_LAYOUT", layout)
    f = network(name).compile(target="cuda", pre_passes="lstm-optimize")
    check_on_side_stream(torch, f, name, T, B, 31)


@pytest.mark.parametrize("layout", ["nk", "kn"])
@pytest.mark.parametrize("cell", ["lstm", "cho_gru"])
def test_weights_layouts_training(torch, layout, cell, monkeypatch):
    """A training step of a two-layer stack (the forward and the backward
    as wavefronts, their step products on the weights as kept or
    transposed before the loops) against PyTorch's autograd in float64 on
    the same weights: the outputs within 1e-5 and every gradient within
    1e-4 of the reference's norm."""
    monkeypatch.setenv("LSTM_RUNTIME_WEIGHTS_LAYOUT", layout)
    torch.manual_seed(7)
    cells = {"lstm": lc.cells.lstm, "cho_gru": lc.cells.cho_gru}
    check_stack_training(torch, cells[cell], cell, num_layers=2, compute_type="fp32",
                         tol=1e-5, grad_tol=1e-4, sizes=(6, 5, 24, 32))


def check_stack_training(torch, cell_fn, cell, num_layers, compute_type, tol, grad_tol, sizes):
    """A training step of lstmc.torch_module over a stack of `cell` layers
    on the GPU (sizes T, B, I, H) against reference_stack in float64 on the
    same weights: every output within `tol` and every gradient (weights
    and input) within `grad_tol` of the reference's norm."""
    T, B, I, H = sizes
    m = lc.torch_module(lc.Network(cell_fn, input_size=I, hidden=H, num_layers=num_layers,
                                   compute_type=compute_type), target="cuda")
    params = [p.detach().cpu().double().requires_grad_(True) for p in m.parameters()]
    x = torch.randn(T, B, I, dtype=torch.float64, requires_grad=True)
    ours_x = x.detach().float().cuda().requires_grad_(True)
    outs = m(ours_x)
    cotangents = [torch.randn(o.shape, dtype=torch.float64) for o in outs]
    sum((o * c.float().cuda()).sum() for o, c in zip(outs, cotangents)).backward()
    expected = reference_stack(torch, cell, dict(zip([n for n, _ in m.named_parameters()],
                                                     params)), x, H)
    for o, e in zip(outs, expected):
        e = e.detach()
        assert (o.detach().cpu().double() - e).norm() <= tol * e.norm()
    sum((e * c).sum() for e, c in zip(expected, cotangents)).backward()
    for (name, p), ref_p in zip(m.named_parameters(), params):
        assert (p.grad.cpu().double() - ref_p.grad).norm() <= grad_tol * ref_p.grad.norm(), name
    assert (ours_x.grad.cpu().double() - x.grad).norm() <= grad_tol * x.grad.norm()


@pytest.mark.parametrize("compute_type,tol,grad_tol",
                         [("fp32", 1e-5, 1e-5), ("tf32", 2e-3, 1e-2), ("bf16", 2e-2, 5e-2)])
def test_gru_stack_training_tensor_cores(torch, compute_type, tol, grad_tol):
    """A training step of a three-layer Cho GRU stack, whose forward
    diagonal runs two products under TF32 and bf16 (lstm-concat-summed-
    products' split-columns: [x h] · [W_rz R_rz]ᵀ and [x (r ⊙ h)] ·
    [W_n R_n]ᵀ) and whose backward is a reverse wavefront (its dn computed
    in its columns of dG, lstm-elide-copies; the next diagonal's inputs
    gathered in the last pointwise kernel's launch, lstm-wavefront's
    gathersAhead), against PyTorch's autograd in float64 on the same
    weights: the outputs within VARIANTS.md's tolerance (1e-5, 2e-3, 2e-2)
    and every gradient within it in fp32 and five times it under TF32 and
    bf16 (1e-2, 5e-2, as scripts/gpu-check-grad.sh: a gradient sums T·B
    products of rounded operands)."""
    torch.manual_seed(11)
    check_stack_training(torch, lc.cells.cho_gru, "cho_gru", num_layers=3,
                         compute_type=compute_type, tol=tol, grad_tol=grad_tol,
                         sizes=(7, 6, 24, 32))


def test_weights_layout_unknown(torch, monkeypatch):
    """An unknown LSTM_RUNTIME_WEIGHTS_LAYOUT fails the call with a message
    naming the variable."""
    check_runtime_variable_error(torch, monkeypatch, "LSTM_RUNTIME_WEIGHTS_LAYOUT", "diagonal",
                                 "stack3")


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


def clear_gpu_limits(monkeypatch):
    """The runtime reports the GPU's own SM count and shared memory."""
    for variable in ("LSTM_RUNTIME_GPU_MULTIPROCESSORS", "LSTM_RUNTIME_GPU_SHARED_MEMORY"):
        monkeypatch.delenv(variable, raising=False)


def check_launches(torch, f, inputs, expected, persistent):
    """Runs `f` on `inputs`: persistent kernels launched or not as
    `persistent` says, every result within the fp32 tolerance of the float64
    reference `expected`."""
    names, outs = kernels_launched(torch, f, inputs)
    assert any("lstm_persistent" in k for k in names) == persistent, sorted(names)
    for out, exp in zip(outs, expected):
        o = out.cpu().numpy()
        assert np.isfinite(o).all()
        assert np.linalg.norm(o - exp) / np.linalg.norm(exp) < TOL


def check_runtime_choice(torch, f, name, inputs, monkeypatch, variable, limit):
    """Runs `f` with the GPU as it is and with `variable` (a limit the
    runtime reports, LSTM_RUNTIME_GPU_*) set to `limit`: persistent kernels
    the first time, none the second (the cost model's run-time choice), both
    within the fp32 tolerance of the float64 reference."""
    expected = ref.expected(name, inputs)
    clear_gpu_limits(monkeypatch)
    check_launches(torch, f, inputs, expected, persistent=True)
    monkeypatch.setenv(variable, limit)
    check_launches(torch, f, inputs, expected, persistent=False)


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
        assert (a - b).norm() <= 1e-6 * b.norm()


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


def test_per_step_fallback_on_demand(torch, monkeypatch):
    """persistent=True compiles the library without the per-step lowering
    beside the kernels (per_step_fallback="on-demand", the default): the
    calls the kernels take run on it; the first call they do not take
    (fewer SMs reported than the kernel has blocks) compiles the complete
    library and runs on it, and so does every later call, either way; all
    within the fp32 tolerance of the float64 reference. False raises
    instead, saying that the fallback is missing; True compiles nothing
    more."""
    name = "lstm"
    inputs = ref.make_inputs(name, 9, 4, np.random.default_rng(29))
    expected = ref.expected(name, inputs)
    clear_gpu_limits(monkeypatch)

    f = network(name).compile(target="cuda", persistent=True)
    lean = f.directory
    assert f.meta["per_step_fallback"] is False
    check_launches(torch, f, inputs, expected, persistent=True)
    assert f.directory == lean
    monkeypatch.setenv("LSTM_RUNTIME_GPU_MULTIPROCESSORS", "2")
    check_launches(torch, f, inputs, expected, persistent=False)
    assert f.directory != lean and f.meta["per_step_fallback"] is True
    monkeypatch.delenv("LSTM_RUNTIME_GPU_MULTIPROCESSORS")
    check_launches(torch, f, inputs, expected, persistent=True)

    g = network(name).compile(target="cuda", persistent=True, per_step_fallback=False)
    monkeypatch.setenv("LSTM_RUNTIME_GPU_MULTIPROCESSORS", "2")
    with pytest.raises(RuntimeError, match="compiled without the per-step lowering"):
        g(*[torch.from_numpy(a).cuda() for a in inputs])

    h = network(name).compile(target="cuda", persistent=True, per_step_fallback=True)
    complete = h.directory
    check_launches(torch, h, inputs, expected, persistent=False)
    assert h.directory == complete


def test_torch_module_per_step_fallback_on_demand(torch, monkeypatch):
    """A training step of lstmc.torch_module(persistent=True) that the
    kernels do not take (fewer SMs reported than their blocks): its
    training forward and backward compile the complete library on demand
    and give what the module compiled with it (per_step_fallback=True)
    gives (within 1e-6: cuBLAS's choices may differ between two loads),
    and what the kernels give (within 1e-5). Within a CUDA graph
    capture such a call raises, asking for a warm-up call."""
    clear_gpu_limits(monkeypatch)
    net = lc.Network(lc.cells.lstm, input_size=5, hidden=16, num_layers=2)
    on_demand = lc.torch_module(net, target="cuda", persistent=True)
    complete = lc.torch_module(net, target="cuda", persistent=True, per_step_fallback=True)
    complete.load_state_dict(on_demand.state_dict())
    torch.manual_seed(5)
    x = torch.randn(7, 3, 5, device="cuda")

    def step(m):
        m.zero_grad()
        out = m(x)
        y = out[0] if isinstance(out, tuple) else out
        (y * torch.linspace(-1, 1, y.shape[-1], device="cuda")).sum().backward()
        return [y.detach().clone()] + [p.grad.clone() for p in m.parameters()]

    kernels = step(on_demand)
    monkeypatch.setenv("LSTM_RUNTIME_GPU_MULTIPROCESSORS", "2")
    switched, reference = step(on_demand), step(complete)
    for a, b, k in zip(switched, reference, kernels):
        assert (a - b).norm() <= 1e-6 * b.norm()
        assert (a - k).norm() <= 1e-5 * k.norm()

    # Warmed up where the kernels run (cuBLAS, the runtime's stream and
    # buffers set up), captured on the same stream where they do not.
    capturing = lc.torch_module(net, target="cuda", persistent=True)
    monkeypatch.delenv("LSTM_RUNTIME_GPU_MULTIPROCESSORS")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        capturing(x)[0].sum().backward()
    torch.cuda.current_stream().wait_stream(side)
    monkeypatch.setenv("LSTM_RUNTIME_GPU_MULTIPROCESSORS", "2")
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="warm-up call compiles it"):
        with torch.cuda.graph(graph, stream=side):
            capturing(x)


def test_capture_on_another_stream_is_an_error(torch):
    """A CUDA graph captured on another stream than the calls before it
    (PyTorch's default capture stream after a warm-up on a side stream)
    would have to free the earlier stream's cached buffers within the
    capture, which invalidates it: the call fails with a message saying to
    warm up on the capturing stream, and the capture stays valid; captured
    on the warm-up's stream, the graph replays what an eager call gives."""
    net = lc.Network(lc.cells.lstm, input_size=5, hidden=16, num_layers=2)
    m = lc.torch_module(net, target="cuda")
    x = torch.randn(7, 3, 5, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side), torch.no_grad():
        expected = m(x)[0].clone()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match="run the warm-up calls on the stream that then captures"):
        with torch.cuda.graph(graph), torch.no_grad():
            m(x)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=side), torch.no_grad():
        y = m(x)[0]
    graph.replay()
    torch.cuda.synchronize()
    assert (y - expected).norm() <= 1e-6 * expected.norm()


def _nn_lstm_name(ours):
    """W1 -> weight_ih_l1, ... (a stack's names; the gate order is shared)."""
    base, k = ours[:-1], ours[-1]
    return {"W": "weight_ih", "R": "weight_hh", "bW": "bias_ih", "bR": "bias_hh"}[base] + f"_l{k}"


def test_torch_module_training_against_nn_lstm(torch):
    """Training steps of lstmc.torch_module on the GPU (fp32) against
    nn.LSTM's autograd in float64 on the CPU on the same weights: y, hT, cT
    and the gradients of x, the given initial states and every parameter,
    within 1e-5 (results) and 1e-4 (gradients) of the reference's norm.
    Cotangents for y alone (hT and cT get none: the zeros the module keeps
    per shape) and for all three; initial states left out (zeros) and
    given; batches 3, 5, 3 (a kept zero tensor per shape, reused); the
    saved activations handed from the training forward to the backward
    outside torch tensors. Then the same step captured in a CUDA graph
    (GraphedStep) and replayed on new inputs, against the eager step."""
    torch.manual_seed(0)
    net = lc.Network(lc.cells.lstm, input_size=5, hidden=16, num_layers=2)
    m = lc.torch_module(net, target="cuda")
    ref = torch.nn.LSTM(5, 16, num_layers=2).double()
    with torch.no_grad():
        for name, p in m.named_parameters():
            getattr(ref, _nn_lstm_name(name)).copy_(p.detach().cpu().double())
    g = torch.Generator().manual_seed(3)

    def close(a, b, tol):
        a = a.detach().cpu().double()
        assert a.shape == b.shape
        assert (a - b).norm() <= tol * b.norm()

    def against_reference():
        for B in (3, 5, 3):
            for states in (False, True):
                for only_y in (True, False):
                    x = torch.randn(7, B, 5, generator=g, dtype=torch.float64)
                    h0, c0 = (torch.randn(2, B, 16, generator=g, dtype=torch.float64)
                              for _ in range(2))
                    gy, gh, gc = (torch.randn(s, generator=g, dtype=torch.float64)
                                  for s in ((7, B, 16), (2, B, 16), (2, B, 16)))
                    leaves = [x, h0, c0] if states else [x]
                    ours = [t.float().cuda().requires_grad_(True) for t in leaves]
                    theirs = [t.clone().requires_grad_(True) for t in leaves]
                    m.zero_grad()
                    ref.zero_grad()
                    y, hT, cT = m(*ours)
                    ry, (rh, rc) = ref(theirs[0], tuple(theirs[1:]) if states else None)
                    for out, exp in ((y, ry), (hT, rh), (cT, rc)):
                        close(out, exp.detach(), 1e-5)
                    cotangents = (gy, gh, gc) if not only_y else (gy,)
                    for outs, cuda in (((y, hT, cT), True), ((ry, rh, rc), False)):
                        sum(((o * (c.float().cuda() if cuda else c)).sum()
                             for o, c in zip(outs, cotangents))).backward()
                    for o, t in zip(ours, theirs):
                        close(o.grad, t.grad, 1e-4)
                    for name, p in m.named_parameters():
                        close(p.grad, getattr(ref, _nn_lstm_name(name)).grad, 1e-4)

    # (In a function: its outputs, whose graphs hold the parameters' gradient
    # accumulators made on the default stream, must be gone before the
    # capture on another stream, as for any PyTorch module.)
    against_reference()

    # The step captured, against the same step of a copy run eagerly.
    check_graphed_step(torch, m, (7, 3, 5), (7, 3, 16), 5,
                       lambda shape: torch.randn(shape, device="cuda"),
                       final=lambda hT, cT: hT.sum())


def test_torch_module_saved_activations_lifetime(torch):
    """The training forward's saved activations stay the library's buffers,
    owned by one tensor that goes through save_for_backward: the backward
    frees them (queued for the thread that made them) while the graph's
    outputs live on, a second backward raises as PyTorch's does, and under
    saved-tensor hooks (save_on_cpu) they are tensors the hooks see, with
    the same gradients."""
    import threading

    from lstmc import _torch_cuda as tm

    net = lc.Network(lc.cells.greff, input_size=5, hidden=16, num_layers=2)
    m = lc.torch_module(net, target="cuda")
    saved = sum(r.kind == "saved" for r in m.compiled.train.results)
    assert saved > 0
    x = torch.randn(7, 3, 5, device="cuda")
    me = threading.get_ident()

    def grads():
        m.zero_grad()
        y = m(x)[0]
        loss = (y * y).sum()
        queued = len(tm._pending.get(me, ()))
        loss.backward()
        # the saved buffers are given back with autograd's saved tensors,
        # the graph's output still alive
        assert len(tm._pending.get(me, ())) > queued and y.grad_fn is not None
        with pytest.raises(RuntimeError, match="second time"):
            loss.backward()
        torch.cuda.synchronize()
        return [p.grad.clone() for p in m.parameters()]

    plain = grads()
    seen = []

    def pack(t):
        seen.append(t.shape)
        return t.cpu()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t.cuda()):
        m.zero_grad()
        y = m(x)[0]
        (y * y).sum().backward()
    hooked = [p.grad.clone() for p in m.parameters()]
    assert sum(s == (7, 3, 16) for s in seen) >= saved  # the activations, as tensors
    for a, b in zip(hooked, plain):
        assert (a - b).norm() <= 1e-6 * b.norm()
