# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Errors a Python user understands: cells that do not type-check (the
primitive and the shapes are named), calls with wrong shapes or dtypes, GPU
tensors where there is no GPU; exceptions, never a crash."""
import numpy as np
import pytest

import lstmc as lc
import lstmc.compiler


def test_matmul_shape():
    def cell(c, x):
        h = c.state("h", 8)
        W = c.param("W", 8, x.size + 1)
        return lc.tanh(x @ W), {"h": h}
    with pytest.raises(lc.CellError, match=r"matmul: input \[B, 4\] @ weight \[8, 5\]\^T"):
        lc.Network(cell, input_size=4)


def test_add_sizes():
    def cell(c, x):
        h = c.state("h", 8)
        W, R = c.param("W", 8, x.size), c.param("R", 6, 8)
        return lc.tanh(x @ W + h @ R), {"h": h}
    with pytest.raises(lc.CellError, match=r"add: terms of different sizes: .*\[8, 4\].*\[6, 8\]"):
        lc.Network(cell, input_size=4)


def test_mul_shapes():
    def cell(c, x):
        h = c.state("h", 8)
        return h * x, {"h": h}
    with pytest.raises(lc.CellError, match=r"mul: shapes differ: \[B, 8\] and \[B, 4\]"):
        lc.Network(cell, input_size=4)


def test_state_size():
    def cell(c, x):
        h = c.state("h", 8)
        W = c.param("W", 6, x.size)
        y = lc.tanh(x @ W)
        return y, {"h": y}
    with pytest.raises(lc.CellError, match=r"state 'h': declared \[B, 8\], the cell yields \[B, 6\]"):
        lc.Network(cell, input_size=4)


def test_bad_activation_and_peephole():
    def cell(c, x):
        h = c.state("h", 8)
        p = c.param("p", 4)
        return lc.sigmoid(x @ c.param("W", 8, 4) + p * h), {"h": h}
    with pytest.raises(lc.CellError, match=r"peephole: p \[4\] \* s \[B, 8\]"):
        lc.Network(cell, input_size=4)
    with pytest.raises(lc.CellError, match="unknown activation 'gelu'"):
        lc.gate("gelu", None)


def test_compiler_diagnostics_name_the_op_and_line():
    """IR the verifier rejects: the diagnostics of the compiler come back as a
    CellError with the op and its location (the primitive and cell line)."""
    bad = """func.func @f(%x: tensor<?x4xf32>, %W: tensor<8x5xf32>) -> tensor<?x8xf32> {
  %g = lstm.gate tanh (%x : tensor<?x4xf32>) weights(%W : tensor<8x5xf32>) -> tensor<?x8xf32> loc("lstm.gate tanh at mycell.py:7")
  return %g : tensor<?x8xf32>
}"""
    with pytest.raises(lc.CellError, match=r"(?s)mycell.py:7.*'lstm.gate' op"):
        lstmc.compiler.verify(bad)
    with pytest.raises(lc.CellError, match="does not parse"):
        lstmc.compiler.verify("func.func @f( {")


@pytest.fixture(scope="module")
def rnn():
    net = lc.Network(lc.cells.rnn, input_size=4, hidden=8)
    return net.compile().bind(net.init_params())


def test_call_dtype(rnn):
    with pytest.raises(lc.CallError, match="x: dtype float64, expected float32"):
        rnn(np.zeros((3, 2, 4)))


def test_call_shapes(rnn):
    x = np.zeros((3, 2, 4), np.float32)
    with pytest.raises(lc.CallError, match=r"x: shape \[3, 2, 5\], expected \['T', 'B', 4\]"):
        rnn(np.zeros((3, 2, 5), np.float32))
    with pytest.raises(lc.CallError, match=r"h0: shape \[3, 8\] does not match \['B', 8\] with B=2"):
        rnn(x, h0=np.zeros((3, 8), np.float32))
    with pytest.raises(lc.CallError, match="rank 2"):
        rnn(np.zeros((3, 4), np.float32))
    with pytest.raises(lc.CallError, match="must not be empty"):
        rnn(np.zeros((0, 2, 4), np.float32))
    with pytest.raises(lc.CallError, match="unknown argument 'c0'"):
        rnn(x, c0=x)


def test_missing_params():
    net = lc.Network(lc.cells.rnn, input_size=4, hidden=8)
    f = net.compile()
    with pytest.raises(lc.CallError, match="missing arguments: W, R, bW, bR"):
        f(np.zeros((3, 2, 4), np.float32))
    with pytest.raises(lc.CallError, match="unknown parameters"):
        f.bind({"Q": np.zeros(3)})


def test_lengths_range():
    net = lc.Network(lc.cells.rnn, input_size=4, hidden=8, lengths=True)
    f = net.compile().bind(net.init_params())
    x = np.zeros((3, 2, 4), np.float32)
    with pytest.raises(lc.CallError, match=r"lengths must be in \[1, T=3\]"):
        f(x, np.array([4, 1], np.int32))
    with pytest.raises(lc.CallError, match="lengths: dtype int64, expected int32"):
        f(x, np.array([3, 1]))


def test_network_options():
    with pytest.raises(ValueError, match="compute_type 'fp8'"):
        lc.Network(lc.cells.rnn, input_size=4, compute_type="fp8")
    assert lc.Network(lc.cells.rnn, input_size=4, compute_type="bf16").compute_type == "bf16"
    with pytest.raises(ValueError, match="compute_type 'bf16' needs dtype 'float32'"):
        lc.Network(lc.cells.rnn, input_size=4, compute_type="bf16", dtype="float64")
    with pytest.raises(ValueError, match="direction 'sideways'"):
        lc.Network(lc.cells.rnn, input_size=4, direction="sideways")
    with pytest.raises(ValueError, match="dtype 'float16'"):
        lc.Network(lc.cells.rnn, input_size=4, dtype="float16")
    net = lc.Network(lc.cells.rnn, input_size=4, hidden=8)
    with pytest.raises(RuntimeError, match="malformed --pre-passes pipeline 'bogus'"):
        net.compile(pre_passes="bogus")
    # Arguments of the wrong type name themselves (None reached the native
    # compiler's string conversion before).
    with pytest.raises(TypeError, match=r"pre_passes=None: expected a string \('' for no pre-passes\)"):
        net.compile(pre_passes=None)
    with pytest.raises(TypeError, match="cuda_path=3: expected a string"):
        net.compile(cuda_path=3)
    with pytest.raises(TypeError, match="chip=90: expected a string or None"):
        net.compile(chip=90)


def test_gpu_call_without_gpu():
    """A GPU network is refused with NoGPUError where no GPU is; numpy arrays
    are refused by a GPU network with a clear CallError."""
    from lstmc import _gpu_call
    with pytest.raises(lc.CallError, match="x: a GPU network takes CUDA tensors .*numpy"):
        _gpu_call._as_cuda(np.zeros(3, np.float32), "x")
    if lc.gpu_available():
        pytest.skip("a GPU is present")
    net = lc.Network(lc.cells.rnn, input_size=4, hidden=8)
    try:
        f = net.compile(target="cuda")
    except (RuntimeError, lc.NoGPUError) as e:
        # No CUDA toolkit/runtime built here, or no driver to load it: both
        # are Python exceptions with the reason.
        assert "cuda" in str(e).lower() or "ptx" in str(e).lower() or "link" in str(e)
        return
    with pytest.raises(lc.NoGPUError, match="no CUDA GPU"):
        f(np.zeros((3, 2, 4), np.float32))


def compile_for_cuda(net, path, **options):
    """Compiles `net` for CUDA into `path`: the library is written here even
    without a GPU (loading it needs the driver); skips without a toolkit."""
    try:
        net.compile(path=str(path), target="cuda", **options)
    except lc.NoGPUError:
        pass
    except RuntimeError as e:
        if "ptxas" in str(e) or "link" in str(e):
            pytest.skip(f"no CUDA toolkit to compile with: {e}")
        raise


def test_persistent_compiles_for_cuda(tmp_path):
    """persistent=True reaches the compiler: the library launches a
    persistent kernel (its name is in the library), made from the
    pre-passes it needs; without it there is none."""
    import json
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=8)
    compile_for_cuda(net, tmp_path / "persistent", persistent=True,
                     pre_passes="lstm-optimize")
    compile_for_cuda(net, tmp_path / "per-step")
    meta = json.loads((tmp_path / "persistent" / "network.json").read_text())
    assert meta["persistent"] is True
    assert meta["pre_passes"] == "lstm-optimize{persistent=true}"
    # The kernel's name (the runtime itself knows the prefix).
    kernel = f"lstm_persistent_{meta['entry']}_0".encode()
    assert kernel in (tmp_path / "persistent" / "network.so").read_bytes()
    assert kernel not in (tmp_path / "per-step" / "network.so").read_bytes()


def test_per_step_fallback_on_demand_compiles_less(tmp_path):
    """persistent=True compiles the library without the per-step lowering
    beside the kernels (per_step_fallback="on-demand", the default; the
    first call that needs it compiles the complete library: test_gpu.py):
    its step kernels are not in the library, which True compiles in.
    per_step_fallback takes 'on-demand', True or False only."""
    import json
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=8)
    compile_for_cuda(net, tmp_path / "on-demand", persistent=True)
    compile_for_cuda(net, tmp_path / "complete", persistent=True, per_step_fallback=True)
    compile_for_cuda(net, tmp_path / "per-step", per_step_fallback=False)
    flags = {d: json.loads((tmp_path / d / "network.json").read_text())["per_step_fallback"]
             for d in ("on-demand", "complete", "per-step")}
    # Without persistent kernels there is no fallback to leave out.
    assert flags == {"on-demand": False, "complete": True, "per-step": True}
    libraries = {d: (tmp_path / d / "network.so").read_bytes() for d in flags}
    entry = json.loads((tmp_path / "complete" / "network.json").read_text())["entry"]
    step_kernel = f"{entry}_kernel_0".encode()
    assert step_kernel in libraries["complete"] and step_kernel in libraries["per-step"]
    assert step_kernel not in libraries["on-demand"]
    kernel = f"lstm_persistent_{entry}_0".encode()
    assert kernel in libraries["on-demand"] and kernel in libraries["complete"]
    for bad in ("yes", 1, None):
        with pytest.raises(ValueError, match="per_step_fallback=.*expected 'on-demand', "
                                             "True or False"):
            net.compile(target="cuda", persistent=True, per_step_fallback=bad)


def test_persistent_training_pre_passes(tmp_path):
    """With gradients, persistent=True takes lstm-optimize{wavefront=false}
    (the training functions have no stack for the wavefront, and its branch
    would lengthen the compile), and the library has the kernels of the
    training forward and the backward."""
    import json
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=8)
    compile_for_cuda(net, tmp_path, persistent=True, gradients="train")
    meta = json.loads((tmp_path / "network.json").read_text())
    assert meta["pre_passes"] == "lstm-optimize{wavefront=false}"
    library = (tmp_path / "network.so").read_bytes()
    for function in ("train", "backward"):
        assert f"lstm_persistent_{meta['entry']}_{function}_0".encode() in library


def test_gpu_training_pre_passes(tmp_path):
    """Without persistent kernels, a CUDA library with gradients takes the
    training wavefronts' pre-passes for the default ones (what the training
    benchmark compiles); a pipeline given in full is kept."""
    import json

    from lstmc.compiler import GPU_TRAIN_PRE_PASSES
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=8, num_layers=3)
    compile_for_cuda(net, tmp_path / "default", gradients="train")
    meta = json.loads((tmp_path / "default" / "network.json").read_text())
    assert meta["pre_passes"] == GPU_TRAIN_PRE_PASSES
    assert "product-links=true" in meta["pre_passes"]
    compile_for_cuda(net, tmp_path / "given", gradients="train",
                     pre_passes="lstm-optimize{wavefront=false}")
    meta = json.loads((tmp_path / "given" / "network.json").read_text())
    assert meta["pre_passes"] == "lstm-optimize{wavefront=false}"


def test_persistent_compute_types(tmp_path):
    """Every compute type takes persistent=True: the kernels compute in
    fp32 under TF32 (more exactly than it allows) and round their products'
    operands to bf16 under bf16; neither compiles without the kernels."""
    for compute_type in ("tf32", "bf16"):
        net = lc.Network(lc.cells.lstm, input_size=4, hidden=8, compute_type=compute_type)
        compile_for_cuda(net, tmp_path / compute_type, persistent=True)
        assert b"lstm_persistent_" in (tmp_path / compute_type / "network.so").read_bytes()


def test_persistent_tensor_cores_option(tmp_path):
    """persistent_tensor_cores reaches the compiler: by default a layer
    gets its tensor-core kernel (3xTF32 under fp32) and, for the batches
    below the tensor cores', a kernel of dot products (`..._dots`); False
    gives it the one kernel of fp32 multiply-adds. persistent_split_depth
    reaches it too (H = 32: at 8 the depth has no warps to split), and both
    are checked here first, naming the argument."""
    import json
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=32)
    compile_for_cuda(net, tmp_path / "tc", persistent=True)
    compile_for_cuda(net, tmp_path / "fma", persistent=True, persistent_tensor_cores=False)
    compile_for_cuda(net, tmp_path / "split", persistent=True, persistent_split_depth=2)
    entry = json.loads((tmp_path / "tc" / "network.json").read_text())["entry"]
    kernel, dots = (f"lstm_persistent_{entry}_0{s}".encode() for s in ("", "_dots"))
    libraries = {d: (tmp_path / d / "network.so").read_bytes() for d in ("tc", "fma", "split")}
    assert kernel in libraries["tc"] and dots in libraries["tc"]
    assert kernel in libraries["fma"] and dots not in libraries["fma"]
    # Two warps a tile's depth: another tensor-core kernel than the chosen one.
    assert dots in libraries["split"] and libraries["split"] != libraries["tc"]
    meta = json.loads((tmp_path / "fma" / "network.json").read_text())
    assert meta["persistent_tensor_cores"] is False and meta["persistent_split_depth"] is None
    for bad in (1, None, "no"):
        with pytest.raises(ValueError, match=r"persistent_tensor_cores=.*expected True or False"):
            net.compile(target="cuda", persistent=True, persistent_tensor_cores=bad)
    with pytest.raises(ValueError, match="persistent_tensor_cores=False applies with persistent=True"):
        net.compile(target="cuda", persistent_tensor_cores=False)
    for bad in (3, -1, 64, True, 2.0):
        with pytest.raises(ValueError, match=r"persistent_split_depth=.*expected None"):
            net.compile(target="cuda", persistent=True, persistent_split_depth=bad)
    with pytest.raises(ValueError, match="persistent_split_depth applies with persistent=True"):
        net.compile(target="cuda", persistent=True, persistent_tensor_cores=False,
                    persistent_split_depth=2)


def test_split_tf32_gemms_option(tmp_path):
    """split_tf32_gemms reaches the compiler: under fp32 the hoisted input
    projection of a network with I = 4H = 1024 (hoisted by lstm-optimize;
    1024 terms and columns, at least 512 multiply-adds an element of its
    operands from T·B = 1024) runs as 3xTF32 by default, behind a test of
    its rows, which adds the kernels that split its operands: False
    compiles another library, where the same options twice compile
    the same bytes; network.json records it. The argument is checked here
    first, naming it."""
    import json
    net = lc.Network(lc.cells.lstm, input_size=1024, hidden=256)
    for name, split in (("split", True), ("again", True), ("fma", False)):
        compile_for_cuda(net, tmp_path / name, pre_passes="lstm-optimize",
                         split_tf32_gemms=split)
    libraries = {d: (tmp_path / d / "network.so").read_bytes() for d in ("split", "again", "fma")}
    assert libraries["split"] == libraries["again"]
    assert libraries["fma"] != libraries["split"]
    meta = {d: json.loads((tmp_path / d / "network.json").read_text()) for d in ("split", "fma")}
    assert meta["split"]["split_tf32_gemms"] is True and meta["fma"]["split_tf32_gemms"] is False
    for bad in (1, None, "no"):
        with pytest.raises(ValueError, match=r"split_tf32_gemms=.*expected True or False"):
            net.compile(target="cuda", split_tf32_gemms=bad)
    with pytest.raises(ValueError, match="split_tf32_gemms=False applies to target='cuda'"):
        net.compile(target="cpu", split_tf32_gemms=False)
    tf32 = lc.Network(lc.cells.lstm, input_size=128, hidden=32, compute_type="tf32")
    with pytest.raises(ValueError, match="under compute_type 'fp32'"):
        tf32.compile(target="cuda", split_tf32_gemms=False)


def test_persistent_needs_cuda():
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=8)
    with pytest.raises(ValueError, match="persistent=True: persistent kernels need target='cuda'"):
        net.compile(target="cpu", persistent=True)


def test_bf16_compiles_for_cuda(tmp_path):
    """compute_type='bf16' reaches the compiler: the GPU library is built (it
    runs only where a GPU is, test_gpu.py checks it there)."""
    net = lc.Network(lc.cells.lstm, input_size=4, hidden=8, compute_type="bf16")
    compile_for_cuda(net, tmp_path, pre_passes="lstm-optimize")
    assert (tmp_path / "network.so").exists()
    import json
    assert json.loads((tmp_path / "network.json").read_text())["compute_type"] == "bf16"


def test_compiler_defaults_come_from_the_compiler(tmp_path):
    """lstmc spells no default of its own: a GPU library built without a chip
    records the compiler's default (the C API's, i.e. lstm-compile's)."""
    defaults = lstmc.compiler.default_options()
    assert set(defaults) == {"target", "chip", "features", "compute_type"}
    assert defaults["target"] in ("cpu", "cuda") and defaults["compute_type"] == "fp32"
    assert defaults["chip"].startswith("sm_") and defaults["features"].startswith("+ptx")
    net = lc.Network(lc.cells.rnn, input_size=4, hidden=8)
    compile_for_cuda(net, tmp_path)
    import json
    assert json.loads((tmp_path / "network.json").read_text())["chip"] == defaults["chip"]


def _named_cell(param="W", state="h"):
    def cell(c, x):
        h = c.state(state, 4)
        W, R = c.param(param, 4, x.size), c.param("R", 4, 4)
        hn = lc.tanh(x @ W + h @ R)
        return hn, {state: hn}
    return cell


@pytest.mark.parametrize("param, state, kwargs, message", [
    ("h0", "h", {}, r"argument 'h0' is the initial value of a state and a parameter"),
    ("x", "h", {}, r"argument 'x' is the input and a parameter"),
    ("R_rev", "h", {"direction": "bidirectional"}, r"argument 'R_rev' is two parameters"),
    ("my W", "h", {}, r"param 'my W': the name 'my W' must be an identifier"),
    ("1W", "h", {}, r"param '1W': the name '1W' must be an identifier"),
    ("W", "", {}, r"state '': the name '0' must be an identifier"),
    ("xt", "h", {}, r"a parameter 'xt' takes the name of a value that the cell's IR defines"),
    ("W", "h", {"entry": "my-func"}, r"entry 'my-func': a function name must be an identifier"),
])
def test_argument_names(param, state, kwargs, message):
    """Names the IR or a call cannot take are refused while the network is
    built, naming them (not a parse error in generated text)."""
    with pytest.raises(lc.CellError, match=message):
        lc.Network(_named_cell(param, state), input_size=3, **kwargs)


def test_state_named_like_an_argument():
    """A state named x: its values take other names than the input x, and
    the network computes h' = tanh(x W^T + h R^T) (float64 numpy)."""
    net = lc.Network(_named_cell("W", "x"), input_size=3)
    rng = np.random.default_rng(3)
    p = {n: rng.uniform(-0.5, 0.5, s).astype(np.float32)
         for n, s in net.param_shapes().items()}
    xs = rng.uniform(-1, 1, (2, 1, 3)).astype(np.float32)
    y, xT = net.compile(target="cpu").bind(p)(xs)
    h = np.zeros((1, 4))
    W, R = p["W"].astype(np.float64), p["R"].astype(np.float64)
    for t in range(2):
        h = np.tanh(xs[t] @ W.T + h @ R.T)
        assert np.abs(y[t] - h).max() < 1e-5
    assert np.abs(xT - h).max() < 1e-5


def test_entry_named_like_a_c_function():
    """A function named like one of the C library's would take the compiled
    code's own calls (free: the library freed its buffers through the
    network): the compiler refuses it, naming the function."""
    net = lc.Network(_named_cell(), input_size=3, entry="free")
    with pytest.raises(RuntimeError, match=r"function 'free' has the name of a function of "
                                           r"the C library"):
        net.compile(target="cpu")


_OUT_OF_MEMORY = r"""
import resource
import numpy as np
import lstmc as lc
net = lc.Network(lc.cells.rnn, input_size=1, hidden=1024)
f = net.compile(target="cpu").bind(net.init_params(0))
small = np.full((3, 2, 1), 0.5, np.float32)
before = f(small)[0]
# 600 MB above what the process maps now; y alone would take 1.6 GB.
mapped = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (mapped + 600 * 2**20,
                                        resource.getrlimit(resource.RLIMIT_AS)[1]))
try:
    f(np.ones((4000, 100, 1), np.float32))
    print("NO ERROR")
except MemoryError as e:
    print("MemoryError:", e)
after = f(small)[0]
print("AGAIN", bool(np.array_equal(before, after)))
"""


def test_out_of_memory_is_an_exception():
    """A buffer the compiled function cannot allocate (a batch too large for
    the memory) raises MemoryError with its size, and the process goes on:
    the call returns through the CPU runtime's guard instead of aborting
    (here in a child process whose address space is limited), saying which
    layer's buffer; a later call gives what it gave before."""
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-c", _OUT_OF_MEMORY], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import re
    # The buffer is the layer's output; the message names the layer and the
    # line of the script that built the network (lc.Network, its 5th line).
    assert re.search(r"MemoryError: lstm: out of memory: cannot allocate a buffer of "
                     r"1[0-9]{9} bytes \(for the value made at layer 0 \(forward\) of "
                     r"forward at <string>:5\)", proc.stdout), proc.stdout + proc.stderr[-2000:]
    assert "AGAIN True" in proc.stdout
