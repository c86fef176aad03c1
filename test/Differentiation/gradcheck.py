"""Calling the gradient functions of a compiled example from Python.

A module is transformed with lstm-opt (e.g. --lstm-differentiate), compiled
for the CPU with lstm-compile into a shared library exporting the C
interface of every public function, and its functions are called through
ctypes on numpy arrays: one compilation serves the many calls that finite
differences need. The signatures are read from the transformed IR.

The library is compiled at LLVM's -O0 (lstm-compile --opt-level=0) unless
asked otherwise: these tests check what the generated code computes, not how
fast, and -O0 compiles a stack's gradient functions about five times
faster (1.6 s against 7.5 s for stack3). The examples' forward code is
checked as shipped (-O3) by test/Integration and the Python package's tests.
"""
import ctypes
import os
import re
import subprocess

import numpy as np

_DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}


def to_f64(text):
    """The example with every f32 made f64: the float64 build of a cell."""
    return re.sub(r"(?<![A-Za-z0-9_.%@])f32\b|(?<=x)f32\b", "f64", text)


def _split_top(s):
    """Splits at commas outside <> and ()."""
    parts, depth, cur = [], 0, ""
    for ch in s:
        if ch in "<(":
            depth += 1
        elif ch in ">)":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def _tensor(t):
    m = re.fullmatch(r"tensor<(.*)>", t.strip())
    if not m:
        raise ValueError(f"not a ranked tensor type: {t}")
    dims = m.group(1).split("x")
    return [None if d == "?" else int(d) for d in dims[:-1]], np.dtype(_DTYPES[dims[-1]])


def signature(ir, name):
    """([(shape, dtype)] of the arguments, [(shape, dtype)] of the results) of
    func.func @name in `ir` (None for dynamic extents)."""
    m = re.search(r"func\.func @" + re.escape(name) + r"\(", ir)
    if not m:
        raise KeyError(f"no function @{name}")
    i, depth = m.end(), 1
    while depth:
        depth += {"(": 1, ")": -1}.get(ir[i], 0)
        i += 1
    args = [_tensor(a.split(":", 1)[1]) for a in _split_top(ir[m.end():i - 1])]
    rest = ir[i:].lstrip()
    results = []
    if rest.startswith("->"):
        rest = rest[2:].lstrip()
        if rest.startswith("("):
            j, depth = 1, 1
            while depth:
                depth += {"(": 1, ")": -1}.get(rest[j], 0)
                j += 1
            results = [_tensor(r) for r in _split_top(rest[1:j - 1])]
        else:
            results = [_tensor(re.match(r"tensor<[^>]*>", rest).group(0))]
    return args, results


def _descriptor_type(rank):
    class Descriptor(ctypes.Structure):
        _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                    ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * max(rank, 1)),
                    ("strides", ctypes.c_int64 * max(rank, 1))]
    return Descriptor


class Library:
    """A module transformed by `pipeline` and compiled for the CPU."""

    def __init__(self, text, tools, workdir, pipeline="lstm-differentiate", opt_level=0,
                 threads=None):
        src = os.path.join(workdir, "in.mlir")
        out = os.path.join(workdir, "out.mlir")
        lib = os.path.join(workdir, "lib.so")
        with open(src, "w") as f:
            f.write(text)
        run = lambda cmd: subprocess.run(cmd, check=True, capture_output=True, text=True)
        try:
            run([os.path.join(tools, "lstm-opt"), src,
                 f"--pass-pipeline=builtin.module({pipeline})", "-o", out])
            run([os.path.join(tools, "lstm-compile"), out, "--target=cpu",
                 f"--opt-level={opt_level}", "-o", lib])
        except subprocess.CalledProcessError as e:
            raise RuntimeError(f"{' '.join(e.cmd)} failed:\n{e.stderr}") from None
        with open(out) as f:
            self.ir = f.read()
        self.lib = ctypes.CDLL(lib)
        # The CPU runtime's thread count (one per core by default), which
        # chooses between a layer's hoisted and stepwise input projections
        # (lstm-hoist-by-threads).
        if threads is not None:
            self.lib.lstmRuntimeCpuSetThreads(ctypes.c_int32(threads))
        self._free = ctypes.CDLL(None).free
        self._free.argtypes = [ctypes.c_void_p]

    def call(self, name, *arrays):
        """Calls @name on numpy arrays; returns its results as numpy arrays."""
        args, results = signature(self.ir, name)
        if len(arrays) != len(args):
            raise ValueError(f"@{name} takes {len(args)} arguments, got {len(arrays)}")
        keep, descs = [], []
        for (shape, dtype), a in zip(args, arrays):
            a = np.ascontiguousarray(a, dtype=dtype)
            if a.ndim != len(shape):
                raise ValueError(f"@{name}: rank {a.ndim} for {shape}")
            keep.append(a)
            d = _descriptor_type(a.ndim)()
            d.allocated = d.aligned = a.ctypes.data
            d.offset = 0
            for k, (n, s) in enumerate(zip(a.shape, a.strides)):
                d.sizes[k], d.strides[k] = n, s // a.itemsize
            descs.append(d)

        class Results(ctypes.Structure):
            _fields_ = [(f"r{k}", _descriptor_type(len(s))) for k, (s, _) in enumerate(results)]
        out = Results()
        fn = getattr(self.lib, "_mlir_ciface_" + name)
        fn.restype = None
        before = [a.copy() for a in keep]
        fn(ctypes.byref(out), *[ctypes.byref(d) for d in descs])
        # The caller owns the arguments: a compiled function must not write
        # them.
        for k, (a, b) in enumerate(zip(before, keep)):
            if not np.array_equal(a, b, equal_nan=True):
                raise AssertionError(f"@{name} wrote its argument #{k}")
        inputs = {a.ctypes.data for a in keep}
        values, owned = [], set()
        for k, (shape, dtype) in enumerate(results):
            d = getattr(out, f"r{k}")
            rank = len(shape)
            dims = tuple(d.sizes[:rank])
            if 0 in dims:
                values.append(np.zeros(dims, dtype))
            else:
                base = d.aligned + d.offset * dtype.itemsize
                span = 1 + sum((n - 1) * s for n, s in zip(dims, d.strides[:rank]))
                buf = (ctypes.c_char * (span * dtype.itemsize)).from_address(base)
                view = np.lib.stride_tricks.as_strided(
                    np.frombuffer(buf, dtype=dtype), dims,
                    [s * dtype.itemsize for s in d.strides[:rank]])
                values.append(view.copy())
            if d.allocated and d.allocated not in inputs:
                owned.add(d.allocated)
        for p in owned:
            self._free(p)
        return values
