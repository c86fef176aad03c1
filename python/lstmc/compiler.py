"""The compiler, in-process (the native extension lstmc._lstmc over the C
API): verification, IR transformations and compilation to a library."""
import json
import os
import tempfile

from . import runtime
from .dsl import CellError

try:
    from . import _lstmc
except ImportError as e:  # e.g. only the runtime was copied somewhere
    _lstmc = None
    _import_error = e

#: Optimisation passes run on the lstm IR before the lowering, by default.
DEFAULT_PRE_PASSES = "lstm-combine-gate-gemms"


def _native():
    if _lstmc is None:
        raise ImportError("the lstm compiler (lstmc._lstmc) is not available: "
                          f"{_import_error}; lstmc.load() still runs saved networks")
    return _lstmc


def CompilerError():
    return _native().CompilerError


def verify(ir):
    """Parses and verifies lstm IR; a failure raises CellError with the
    compiler's diagnostics."""
    native = _native()
    try:
        native.verify(ir)
    except native.CompilerError as e:
        raise CellError(f"the cell does not type-check in the compiler: {e}") from None


def transform(ir, pipeline):
    """Runs a textual pass pipeline on builtin.module, returns the new IR."""
    return _native().transform(ir, pipeline)


def canonicalize(ir):
    return transform(ir, "canonicalize")


def _package_lib_dir():
    d = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
    return d if os.path.isfile(os.path.join(d, "liblstm_cuda_runtime_static.a")) else ""


def compile(network, path=None, target="cpu", pre_passes=DEFAULT_PRE_PASSES, chip="sm_90",
            features="+ptx80", cuda_path="", cuda_lib_dir="", runtime_lib_dir=None):
    """Compiles `network` (a Network, or lstm IR text with a signature given
    by a Network) into a directory `path` (a temporary one by default) and
    loads it.

    target: 'cpu' or 'cuda'. pre_passes: the optimisation pipeline on the
    lstm IR (a textual pipeline; '' for none). chip, features, cuda_path,
    cuda_lib_dir: as lstm-compile's options. Returns a CompiledNetwork."""
    if target not in ("cpu", "cuda"):
        raise ValueError(f"target {target!r}: expected 'cpu' or 'cuda'")
    native = _native()
    verify(network.ir)
    tmp = None
    if path is None:
        tmp = path = tempfile.mkdtemp(prefix="lstmc-")
    os.makedirs(path, exist_ok=True)
    if runtime_lib_dir is None:
        runtime_lib_dir = _package_lib_dir()
    try:
        native.compile(network.ir, os.path.join(path, runtime.LIBRARY), target=target,
                       chip=chip, features=features, cuda_path=cuda_path,
                       cuda_lib_dir=cuda_lib_dir, runtime_lib_dir=runtime_lib_dir,
                       pre_passes=pre_passes, compute_type=network.compute_type)
    except native.CompilerError as e:
        raise RuntimeError(str(e)) from None
    meta = {"entry": network.entry, "target": target, "dtype": network.dtype,
            "pre_passes": pre_passes, "compute_type": network.compute_type, "chip": chip if target == "cuda" else None,
            "args": [a.to_json() for a in network.args],
            "results": [a.to_json() for a in network.results], "ir": network.ir}
    with open(os.path.join(path, runtime.META), "w") as f:
        json.dump(meta, f, indent=1)
    return runtime.CompiledNetwork(path, meta, _owned_tmp=tmp)
