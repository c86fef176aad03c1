# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The compiler, in-process: ctypes bindings of liblstmc.so's C API
(include/lstm-c/Text.h: IR text in, IR text or diagnostics out).

liblstmc.so is a plain shared library with MLIR and LLVM linked in
(python/CMakeLists.txt), not a CPython extension: the same file serves every
Python 3 version, so the wheel is tagged py3-none. Importing this module
raises ImportError when the library is missing (lstmc.load() still runs
saved networks then). $LSTMC_LIBRARY names another copy of the library.
"""
import ctypes
import json
import os

#: The package's native files: liblstmc.so, the runtimes, the tools (../bin).
LIB_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib")
LIBRARY = os.environ.get("LSTMC_LIBRARY") or os.path.join(LIB_DIR, "liblstmc.so")


class CompilerError(RuntimeError):
    """A failure of the compiler, with its diagnostics."""


class _CompileOptions(ctypes.Structure):
    # LstmTextCompileOptions: a null or empty string takes the default.
    _fields_ = [(name, ctypes.c_char_p) for name in (
        "target", "chip", "features", "cudaPath", "cudaLibDir", "runtimeLibDir",
        "prePasses", "computeType")] + [("gradients", ctypes.c_int),
                                        ("persistent", ctypes.c_int),
                                        ("chunkBytes", ctypes.c_longlong),
                                        ("hoistMinThreads", ctypes.c_int),
                                        ("wholeBatch", ctypes.c_int),
                                        ("noPerStepFallback", ctypes.c_int),
                                        ("noPersistentTensorCores", ctypes.c_int),
                                        ("setPersistentSplitDepth", ctypes.c_int),
                                        ("persistentSplitDepth", ctypes.c_int),
                                        ("noSplitTF32Gemms", ctypes.c_int)]


def _load():
    try:
        lib = ctypes.CDLL(LIBRARY)
    except OSError as e:
        raise ImportError(f"the lstm compiler library cannot be loaded: {e}") from None
    errp = ctypes.POINTER(ctypes.c_void_p)
    lib.lstmTextVerify.argtypes = [ctypes.c_char_p, ctypes.c_size_t, errp]
    lib.lstmTextTransform.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                      errp, errp]
    lib.lstmTextCompile.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p,
                                    ctypes.POINTER(_CompileOptions), errp]
    for f in (lib.lstmTextVerify, lib.lstmTextTransform, lib.lstmTextCompile):
        f.restype = ctypes.c_int
    # Returned strings stay pointers (c_void_p) until copied and freed.
    lib.lstmTextDefaultOptions.argtypes = []
    lib.lstmTextDefaultOptions.restype = ctypes.c_void_p
    lib.lstmTextFree.argtypes = [ctypes.c_void_p]
    lib.lstmTextFree.restype = None
    return lib


_lib = _load()


def _take(ptr):
    """The text of a string the library returned, which is then freed."""
    if not ptr:
        return ""
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        _lib.lstmTextFree(ptr)


def _bytes(s):
    return s.encode("utf-8") if isinstance(s, str) else bytes(s)


def _call(fn, *args, output=False):
    error = ctypes.c_void_p()
    out = ctypes.c_void_p()
    extra = (ctypes.byref(out),) if output else ()
    rc = fn(*args, *extra, ctypes.byref(error))
    if rc != 0:
        _take(out.value)
        raise CompilerError(_take(error.value) or "the compiler failed")
    return _take(out.value) if output else None


def verify(ir):
    """Parses and verifies `ir`; raises CompilerError with the diagnostics
    if it does not."""
    data = _bytes(ir)
    _call(_lib.lstmTextVerify, data, len(data))


def transform(ir, pipeline):
    """Parses `ir`, runs the textual pass pipeline on builtin.module (e.g.
    'canonicalize', 'lstm-combine-gate-gemms') and returns the printed
    module."""
    data = _bytes(ir)
    return _call(_lib.lstmTextTransform, data, len(data), _bytes(pipeline), output=True)


def runtime_dir(target):
    """The package's copy of the target's runtime (linked into every compiled
    library, with the GEMM libraries and the libcuda stub next to it), or ""
    where the package has none (the build tree's is used then). The default
    the library was built with names the build tree, which a package that
    moved or was built elsewhere no longer has."""
    name = f"liblstm_{target}_runtime_static.a"
    return LIB_DIR if os.path.isfile(os.path.join(LIB_DIR, name)) else ""


def compile(ir, output, target="cpu", chip="", features="", cuda_path="", cuda_lib_dir="",
            runtime_lib_dir=None, pre_passes="", compute_type="", gradients=False,
            persistent=False, chunk_bytes=None, hoist_min_threads=None,
            split_batch=True, per_step_fallback=True, persistent_tensor_cores=True,
            persistent_split_depth=None, split_tf32_gemms=True):
    """Compiles `ir` to the shared library `output` (lstm-compile
    in-process); an empty option takes the compiler's default (see
    default_options). `runtime_lib_dir` None takes the package's own copy
    of the target's runtime (runtime_dir), "" the build tree's. With `gradients`, the gradient functions of
    lstm-differentiate are exported too (gradients="train": only the
    training forward and the backward, the forward a call of the training
    forward); with `persistent`, layers run as
    persistent kernels where the cost model says so (without
    `per_step_fallback`, the per-step lowering beside them is left out: a
    run that needs it fails, saying so; without `persistent_tensor_cores`
    the kernels' products are fp32 multiply-adds at every batch;
    `persistent_split_depth`, None for the compiler's choice, is
    lstm-compile's --persistent-split-depth); `split_tf32_gemms` (cuda,
    fp32): a sequence's products on TF32 tensor cores with split
    operands (3xTF32; False: fp32 FMAs); `chunk_bytes` (cpu):
    the hoisted input projections computed that many bytes of steps a
    thread at a time, 0 or None whole; `hoist_min_threads` (cpu): the
    least number of threads that runs them hoisted (None: the compiler's
    default); `split_batch` (cpu): layers with independent rows on parts
    of the batch, a thread each (False: whole). ctypes releases the GIL for the
    call: other Python threads run while it compiles."""
    if runtime_lib_dir is None:
        runtime_lib_dir = runtime_dir(target)
    data = _bytes(ir)
    options = _CompileOptions(
        _bytes(target), _bytes(chip), _bytes(features), _bytes(cuda_path),
        _bytes(cuda_lib_dir), _bytes(runtime_lib_dir), _bytes(pre_passes),
        _bytes(compute_type), 2 if gradients == "train" else 1 if gradients else 0,
        1 if persistent else 0,
        chunk_bytes or 0, hoist_min_threads or 0, 0 if split_batch else 1,
        0 if per_step_fallback else 1, 0 if persistent_tensor_cores else 1,
        0 if persistent_split_depth is None else 1, persistent_split_depth or 0,
        0 if split_tf32_gemms else 1)
    _call(_lib.lstmTextCompile, data, len(data), _bytes(output), ctypes.byref(options))


def default_options():
    """The compiler's defaults: {'target', 'chip', 'features',
    'compute_type'}."""
    return json.loads(_take(_lib.lstmTextDefaultOptions()))
