# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The installed package is self-contained (python/CMakeLists.txt,
docs/python.md): liblstmc.so, the tools and what compiled networks link need
no MLIR or LLVM library, nor libstdc++ where it is linked in; the wheel is
tagged py3-none (ctypes over a C API, no CPython extension)."""
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import lstmc
from lstmc import _lstmc

#: What a self-contained library may need: glibc's libraries, the loader and
#: libgcc's unwinder (which comes with every libstdc++).
GLIBC = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1",
         "ld-linux-x86-64.so.2", "libgcc_s.so.1"}
PACKAGE = os.path.dirname(os.path.abspath(lstmc.__file__))


def elf_dynamic(path):
    """(DT_NEEDED list, DT_SONAME, DT_RUNPATH/DT_RPATH) of an ELF64
    little-endian file, read from its PT_DYNAMIC segment."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, path
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(phnum):
        ptype, _, offset, vaddr, _, filesz, _, _ = struct.unpack_from(
            "<IIQQQQQQ", data, phoff + i * phentsize)
        if ptype == 1:  # PT_LOAD
            loads.append((vaddr, offset, filesz))
        elif ptype == 2:  # PT_DYNAMIC
            dynamic = (offset, filesz)
    assert dynamic, f"{path} has no dynamic section"

    def file_offset(addr):
        for vaddr, offset, size in loads:
            if vaddr <= addr < vaddr + size:
                return addr - vaddr + offset
        raise AssertionError(f"address {addr:#x} not in a PT_LOAD segment of {path}")

    entries = []
    offset, size = dynamic
    for k in range(size // 16):
        tag, value = struct.unpack_from("<qQ", data, offset + 16 * k)
        if tag == 0:
            break
        entries.append((tag, value))
    strtab = file_offset(next(v for t, v in entries if t == 5))  # DT_STRTAB

    def string(index):
        end = data.index(b"\0", strtab + index)
        return data[strtab + index:end].decode()

    needed = [string(v) for t, v in entries if t == 1]
    soname = next((string(v) for t, v in entries if t == 14), None)
    runpath = next((string(v) for t, v in entries if t in (15, 29)), None)
    return needed, soname, runpath


# The GEMM libraries the package carries (lstmc/lib): OpenBLAS's subset,
# oneDNN with the OpenMP runtime and the OpenCL loader it needs.
GEMM_LIBRARIES = {"liblstm_openblas.so", "libdnnl.so.2", "libgomp.so.1",
                  "libOpenCL.so.1"}


def test_liblstmc_needs_only_libc():
    """MLIR, LLVM and libstdc++ are linked in; the GEMM libraries (lstm-run's
    JIT calls them) are the package's own copies, all of them direct
    dependencies (libdnnl.so.2, which has no RUNPATH, finds its own that
    way)."""
    needed, soname, runpath = elf_dynamic(_lstmc.LIBRARY)
    assert soname == "liblstmc.so"
    assert set(needed) <= GLIBC | GEMM_LIBRARIES, needed
    assert GEMM_LIBRARIES <= set(needed), needed
    assert runpath == "$ORIGIN"
    for name in GEMM_LIBRARIES:
        assert os.path.isfile(os.path.join(PACKAGE, "lib", name)), name


@pytest.mark.parametrize("tool", ["lstm-run", "lstm-compile"])
def test_tools_need_only_liblstmc(tool):
    """The tools are their own code on liblstmc.so (one copy of MLIR)."""
    needed, _, runpath = elf_dynamic(os.path.join(PACKAGE, "bin", tool))
    assert "liblstmc.so" in needed
    assert set(needed) <= GLIBC | {"liblstmc.so"}, needed
    assert runpath == "$ORIGIN/../lib"


def test_runtime_libraries_need_no_mlir():
    lib = os.path.join(PACKAGE, "lib")
    needed, soname, _ = elf_dynamic(os.path.join(lib, "liblstm_openblas.so"))
    assert soname == "liblstm_openblas.so" and set(needed) <= GLIBC, needed
    # oneDNN needs libstdc++ (GLIBCXX 3.4.29: GCC 11) from the system.
    needed, soname, _ = elf_dynamic(os.path.join(lib, "libdnnl.so.2"))
    assert soname == "libdnnl.so.2", soname
    assert set(needed) <= GLIBC | GEMM_LIBRARIES | {"libstdc++.so.6"}, needed
    _, soname, _ = elf_dynamic(os.path.join(lib, "stubs", "libcuda.so"))
    assert soname == "libcuda.so.1"
    needed, _, runpath = elf_dynamic(os.path.join(lib, "liblstm_cuda_runtime.so"))
    assert not [n for n in needed if "MLIR" in n or "LLVM" in n], needed
    assert "libcuda.so.1" in needed and not runpath
    for name in ("liblstm_cpu_runtime_static.a", "liblstm_cuda_runtime_static.a"):
        assert os.path.isfile(os.path.join(lib, name)), name
    # The raw binding links with these, not with the build tree's runtime
    # that liblstmc.so was built beside (gone where the package is copied).
    assert _lstmc.runtime_dir("cpu") == _lstmc.runtime_dir("cuda") == lib


def test_glibc_2_34_is_enough():
    """Built on Debian 12 (glibc 2.36), loadable with glibc 2.34 and 2.35
    (python/src/glibc_compat.c): Ubuntu 22.04, RHEL 9."""
    for path in [_lstmc.LIBRARY, os.path.join(PACKAGE, "lib", "liblstm_openblas.so"),
                 os.path.join(PACKAGE, "lib", "libdnnl.so.2"),
                 os.path.join(PACKAGE, "lib", "libgomp.so.1"),
                 os.path.join(PACKAGE, "lib", "libOpenCL.so.1"),
                 os.path.join(PACKAGE, "lib", "liblstm_cuda_runtime.so"),
                 os.path.join(PACKAGE, "bin", "lstm-run"),
                 os.path.join(PACKAGE, "bin", "lstm-compile")]:
        out = subprocess.run(["objdump", "-T", path], capture_output=True, text=True)
        if out.returncode != 0:
            pytest.skip("objdump is not available")
        import re
        versions = {tuple(map(int, v.split("."))) for v in
                    re.findall(r"GLIBC_(\d+\.\d+(?:\.\d+)?)", out.stdout)}
        assert max(versions) <= (2, 34), (path, max(versions))


def test_only_the_c_api_is_exported():
    """Little of MLIR's C++ is visible to the process: the C API and what
    the tools need."""
    out = subprocess.run(["nm", "-D", "--defined-only", _lstmc.LIBRARY],
                         capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("nm is not available")
    names = [line.split()[-1] for line in out.stdout.splitlines() if line.strip()]
    # The C API, and the C++ symbols that the tools' objects use (listed at
    # build time, python/exports.cmake): a few hundred, not MLIR's 10^5.
    assert "lstmTextCompile" in names and "mlirContextCreate" in names
    others = [n for n in names if not n.startswith(("lstm", "mlir"))]
    assert len(others) < 2000, len(others)


def test_no_mlir_library_is_loaded():
    """A process that compiles and runs a network maps no libMLIR/libLLVM."""
    script = (
        "import numpy as np, lstmc\n"
        "net = lstmc.Network(lstmc.cells.gru, input_size=3, hidden=4)\n"
        "f = net.compile(target='cpu').bind(net.init_params(seed=1))\n"
        "f(np.ones((2, 1, 3), np.float32))\n"
        "maps = open('/proc/self/maps').read()\n"
        "print('liblstmc.so' in maps, 'libMLIR' in maps or 'libLLVM' in maps)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         cwd="/")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "False"]


def test_compiled_cpu_network_needs_no_mlir(tmp_path):
    net = lstmc.Network(lstmc.cells.lstm, input_size=4, hidden=8)
    f = net.compile(path=str(tmp_path / "net"), target="cpu")
    needed, _, runpath = elf_dynamic(f.library_path)
    assert not [n for n in needed if "mlir" in n.lower() or "LLVM" in n], needed
    assert GEMM_LIBRARIES <= set(needed), needed
    assert runpath == os.path.join(PACKAGE, "lib")
    params = net.init_params(seed=3)
    x = np.random.default_rng(0).uniform(-1, 1, (3, 2, 4)).astype(np.float32)
    y, _, _ = f.bind(params)(x)
    assert y.shape == (3, 2, 8) and np.all(np.isfinite(y))


def test_compiled_cuda_network_links_the_stub(tmp_path):
    """A CUDA network compiles without a GPU (ptxas of a CUDA toolkit is
    needed) and needs the driver only."""
    net = lstmc.Network(lstmc.cells.lstm, input_size=4, hidden=8)
    out = str(tmp_path / "cuda")
    os.makedirs(out)
    try:
        _lstmc.compile(net.ir, os.path.join(out, "network.so"), target="cuda")
    except _lstmc.CompilerError as e:
        if "ptxas" in str(e) or "libdevice" in str(e):
            pytest.skip(f"no CUDA toolkit: {e}")
        raise
    needed, _, _ = elf_dynamic(os.path.join(out, "network.so"))
    assert "libcuda.so.1" in needed
    assert not [n for n in needed if "mlir" in n.lower() or "LLVM" in n or "cublas" in n]


def test_wheel_is_tagged_py3_none():
    from importlib import metadata
    wheel = metadata.distribution("lstmc").read_text("WHEEL")
    if wheel is None:
        pytest.skip("lstmc is not installed from a wheel")
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines()
            if line.startswith("Tag:")]
    assert tags == ["py3-none-linux_x86_64"], tags


@pytest.mark.parametrize("tool", ["lstm-compile", "lstm-run"])
def test_console_scripts_run_the_tools(tool):
    from lstmc import _tools
    out = subprocess.run([sys.executable, "-c",
                          f"import sys; sys.argv = ['{tool}', '--help']; "
                          f"from lstmc import _tools; _tools.{tool.replace('-', '_')}()"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert f"{tool}:" in out.stdout
    assert os.path.isdir(_tools.BIN_DIR)


def test_lstm_run_runs_an_example():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    example = os.path.join(root, "examples", "lstm.mlir")
    if not os.path.isfile(example):
        pytest.skip("not run from the source tree")
    out = subprocess.run([os.path.join(PACKAGE, "bin", "lstm-run"), example, "--random-inputs",
                          "--seed=1", "--shapes=3x2x64,2x128,2x128"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "time:" in out.stdout + out.stderr


@pytest.mark.slow
@pytest.mark.skipif(os.environ.get("LSTMC_SLOW") != "1",
                    reason="builds a wheel (minutes): LSTMC_SLOW=1 runs it")
def test_wheel_builds(tmp_path):
    """scripts/build-wheel.sh: a py3-none wheel, installed into a fresh
    virtual environment, compiles and runs a network."""
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run(["bash", os.path.join(root, "scripts", "build-wheel.sh"),
                          str(tmp_path / "dist")], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    wheels = os.listdir(tmp_path / "dist")
    assert len(wheels) == 1 and wheels[0].endswith("-py3-none-linux_x86_64.whl"), wheels


def _module_imports(path):
    """The package's modules that the module at `path` imports when it is
    loaded (its top-level relative imports; imports inside functions run
    later and are left out)."""
    import ast
    tree = ast.parse(open(path).read(), path)
    found = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            if node.module:
                found.add(node.module.split(".")[0])
            else:
                found.update(alias.name for alias in node.names)
    return found


def test_no_import_cycles():
    """No module of the package imports, while it loads, one that imports it
    back (directly or through others): each loads whole before its users."""
    modules = {name[:-3]: os.path.join(PACKAGE, name) for name in os.listdir(PACKAGE)
               if name.endswith(".py")}
    graph = {m: _module_imports(p) & set(modules) for m, p in modules.items()}
    state = {}

    def visit(m, path):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", "import cycle: " + " -> ".join(path + [m])
        state[m] = "open"
        for n in sorted(graph[m]):
            visit(n, path + [m])
        state[m] = "done"

    for m in sorted(graph):
        visit(m, [])
    # The check sees the package's imports: the ONNX importer's parts at least.
    assert {"_onnx_glue", "_onnx_layers", "_onnx_network", "_onnx_values"} <= graph["onnx_import"]
    assert "_onnx_cells" in graph["_onnx_layers"] & graph["_onnx_network"]
