# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Calling compiled networks: ctypes and memref descriptors, no compiler.

A compiled network is a shared library exporting ``_mlir_ciface_<entry>``
(lstm-compile's C interface: every argument and result a ranked memref
descriptor {allocated, aligned, offset, sizes[r], strides[r]}) plus a JSON
description of its arguments and results. This module needs only numpy (and
torch or CuPy for GPU networks): :func:`load` runs a saved network where the
compiler is not installed.

CPU networks take and return numpy arrays. GPU networks take CUDA tensors of
PyTorch or CuPy (anything with ``__cuda_array_interface__``, or ``__dlpack__``
through torch/CuPy) without copying them, run on the caller's current stream
(``lstmRuntimeSetStream`` where the library's runtime has it) and return
tensors of the same library.
"""
import ctypes
import functools
import json
import os
import shutil

import numpy as np

META = "network.json"
LIBRARY = "network.so"
_NP = {"float32": np.float32, "float64": np.float64, "int32": np.int32}
_TYPESTR = {"float32": "<f4", "float64": "<f8", "int32": "<i4"}
#: The CUDA driver's handle of the legacy default stream (cuda.h).
_CU_STREAM_LEGACY = 1


class CallError(ValueError):
    """A call with the wrong arguments: names the argument and the shapes."""


class NoGPUError(RuntimeError):
    """A GPU network called where no GPU (or no CUDA tensor library) is."""


@functools.lru_cache(maxsize=None)
def _descriptor_type(rank):
    """The ctypes type of a rank-`rank` memref descriptor (one class per
    rank: making a ctypes class costs more than a call)."""
    class Descriptor(ctypes.Structure):
        _fields_ = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
                    ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
                    ("strides", ctypes.c_int64 * rank)]
    return Descriptor


def _descriptor(ptr, shape, strides):
    d = _descriptor_type(len(shape))()
    d.allocated = d.aligned = ptr
    d.offset = 0
    for i, (n, s) in enumerate(zip(shape, strides)):
        d.sizes[i], d.strides[i] = n, s
    return d


def _contiguous_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


class _CudaArray:
    """A CUDA buffer as seen through __cuda_array_interface__ (no copy)."""

    def __init__(self, obj, name):
        cai = obj.__cuda_array_interface__
        self.obj = obj
        self.ptr = cai["data"][0]
        self.shape = tuple(cai["shape"])
        self.dtype = np.dtype(cai["typestr"]).name
        item = np.dtype(cai["typestr"]).itemsize
        strides = cai.get("strides")
        self.strides = (_contiguous_strides(self.shape) if strides is None
                        else tuple(s // item for s in strides))
        if self.strides != _contiguous_strides(self.shape) and 0 not in self.shape:
            raise CallError(f"{name}: a GPU argument must be contiguous (strides "
                            f"{self.strides} for shape {self.shape}); call .contiguous()")


class CompiledNetwork:
    """A loaded network: call it with the function's arguments, by position or
    by name. Initial states left out are zeros; `bind` fixes the parameters."""

    def __init__(self, directory, meta=None, _owned_tmp=None):
        self.directory = directory
        if meta is None:
            with open(os.path.join(directory, META)) as f:
                meta = json.load(f)
        self.meta = meta
        from .network import Arg
        self.args = [Arg.from_json(a) for a in meta["args"]]
        self.results = [Arg.from_json(a) for a in meta["results"]]
        self.target = meta["target"]
        self.entry = meta["entry"]
        self._tmp = _owned_tmp
        self.library_path = os.path.join(directory, LIBRARY)
        try:
            self.lib = ctypes.CDLL(self.library_path)
        except OSError as e:
            if self.target == "cuda" and "libcuda" in str(e):
                raise NoGPUError(f"{self.library_path} is a GPU network and needs the CUDA "
                                 f"driver (libcuda.so.1), which is not installed: {e}") from e
            raise
        self.fn = getattr(self.lib, "_mlir_ciface_" + self.entry)
        self.fn.restype = None
        self._bound = {}
        # The gradient functions (compiled with gradients=True): callables
        # of the same library, named after what lstm-differentiate adds.
        for name, fmeta in meta.get("functions", {}).items():
            setattr(self, name, CompiledNetwork(directory, dict(meta, **fmeta, functions={})))
        if self.target == "cuda":
            self.lib.lstmRuntimeLastError.restype = ctypes.c_char_p
            self.lib.lstmRuntimeFree.argtypes = [ctypes.c_void_p]
            self._set_stream = getattr(self.lib, "lstmRuntimeSetStream", None)
            if self._set_stream is not None:
                self._set_stream.argtypes = [ctypes.c_void_p]
        else:
            self._free = ctypes.CDLL(None).free
            self._free.argtypes = [ctypes.c_void_p]

    def __repr__(self):
        return (f"CompiledNetwork({self.entry}, target={self.target}, args=[" +
                ", ".join(map(repr, self.args)) + "])")

    def __del__(self):
        if getattr(self, "_tmp", None):
            shutil.rmtree(self._tmp, ignore_errors=True)

    # ------------------------------------------------------------------
    def save(self, path):
        """Writes the library and its description to the directory `path`;
        :func:`load` reads it back, without the compiler."""
        os.makedirs(path, exist_ok=True)
        shutil.copy2(self.library_path, os.path.join(path, LIBRARY))
        with open(os.path.join(path, META), "w") as f:
            json.dump(self.meta, f, indent=1)
        return path

    def bind(self, params):
        """A copy of this callable with the parameters (a dict name -> array)
        fixed; call it with x (and lengths, initial states)."""
        names = {a.name for a in self.args if a.kind == "param"}
        unknown = set(params) - names
        if unknown:
            raise CallError(f"bind: unknown parameters {sorted(unknown)} (the network has "
                            f"{sorted(names)})")
        out = CompiledNetwork.__new__(CompiledNetwork)
        out.__dict__.update(self.__dict__)
        out._tmp = None  # the original owns the directory
        out._owner = self
        out._bound = dict(self._bound, **params)
        for name in self.meta.get("functions", {}):
            setattr(out, name, getattr(self, name).bind(params))
        return out

    # ------------------------------------------------------------------
    def _collect(self, args, kwargs):
        values = dict(self._bound)
        free = [a for a in self.args if a.name not in self._bound]
        if len(args) > len(free):
            raise CallError(f"{len(args)} positional arguments for {len(free)} "
                            f"({', '.join(a.name for a in free)})")
        for a, v in zip(free, args):
            values[a.name] = v
        for k, v in kwargs.items():
            if k not in {a.name for a in self.args}:
                raise CallError(f"unknown argument {k!r} (arguments: "
                                f"{', '.join(a.name for a in self.args)})")
            if k in values and k not in self._bound:
                raise CallError(f"argument {k!r} given twice")
            values[k] = v
        # Initial states and cotangents left out are zeros.
        missing = [a.name for a in self.args
                   if a.name not in values and a.kind not in ("state", "cotangent")]
        if missing:
            raise CallError(f"missing arguments: {', '.join(missing)}")
        return values

    def _check(self, arg, shape, dtype, dims):
        if dtype != arg.dtype:
            raise CallError(f"{arg.name}: dtype {dtype}, expected {arg.dtype}")
        if len(shape) != len(arg.shape):
            raise CallError(f"{arg.name}: shape {list(shape)} has rank {len(shape)}, "
                            f"expected {list(arg.shape)}")
        for n, d in zip(shape, arg.shape):
            if isinstance(d, str):
                if dims.setdefault(d, n) != n:
                    raise CallError(f"{arg.name}: shape {list(shape)} does not match "
                                    f"{list(arg.shape)} with {d}={dims[d]} (from x)")
            elif n != d:
                raise CallError(f"{arg.name}: shape {list(shape)}, expected {list(arg.shape)}")

    def _shape_of(self, arg, dims):
        return tuple(dims[d] if isinstance(d, str) else d for d in arg.shape)

    def __call__(self, *args, **kwargs):
        values = self._collect(args, kwargs)
        if self.target == "cuda":
            return self._call_gpu(values)
        return self._call_cpu(values)

    def _results_struct(self):
        Results = self.__dict__.get("_Results")
        if Results is None:
            class Results(ctypes.Structure):
                _fields_ = [(f"r{k}", _descriptor_type(len(r.shape)))
                            for k, r in enumerate(self.results)]
            self._Results = Results
        return Results()

    def _call_cpu(self, values):
        dims, arrays = {}, []
        for a in self.args:
            if a.name not in values:
                continue
            v = values[a.name]
            if not isinstance(v, np.ndarray):
                if hasattr(v, "__cuda_array_interface__") or hasattr(v, "device"):
                    raise CallError(f"{a.name}: a CPU network takes numpy arrays, got "
                                    f"{type(v).__name__}")
                v = np.asarray(v)
            self._check(a, v.shape, v.dtype.name, dims)
            values[a.name] = v
        for n in ("T", "B"):
            if dims.get(n, 1) < 1:
                raise CallError(f"{n} = {dims[n]}: sequences and batches must not be empty")
        if "lengths" in values:
            lengths = values["lengths"]
            if lengths.min() < 1 or lengths.max() > dims["T"]:
                raise CallError(f"lengths must be in [1, T={dims['T']}], got "
                                f"[{lengths.min()}, {lengths.max()}]")
        descs = []
        for a in self.args:
            v = values.get(a.name)
            if v is None:  # an initial state: zeros
                v = np.zeros(self._shape_of(a, dims), dtype=_NP[a.dtype])
            v = np.ascontiguousarray(v)
            arrays.append(v)  # alive for the call
            descs.append(_descriptor(v.ctypes.data, v.shape,
                                     [s // v.itemsize for s in v.strides]))
        results = self._results_struct()
        self.fn(ctypes.byref(results), *[ctypes.byref(d) for d in descs])
        inputs = {v.ctypes.data for v in arrays}
        outs, owned = [], set()
        for k, r in enumerate(self.results):
            d = getattr(results, f"r{k}")
            rank = len(r.shape)
            shape = tuple(d.sizes[:rank])
            dtype = np.dtype(_NP[r.dtype])
            if 0 in shape:
                outs.append(np.zeros(shape, dtype))
            else:
                # A strided view of the library's buffer, copied out.
                base = d.aligned + d.offset * dtype.itemsize
                span = 1 + sum((n - 1) * s for n, s in zip(shape, d.strides[:rank]))
                buf = (ctypes.c_char * (span * dtype.itemsize)).from_address(base)
                view = np.lib.stride_tricks.as_strided(
                    np.frombuffer(buf, dtype=dtype), shape,
                    [s * dtype.itemsize for s in d.strides[:rank]])
                outs.append(view.copy())
            if d.allocated and d.allocated not in inputs:
                owned.add(d.allocated)
        for p in owned:
            self._free(p)
        return tuple(outs)

    def _call_gpu(self, values):
        if not gpu_available():
            raise NoGPUError("this is a GPU network and no CUDA GPU is usable here (from "
                             "PyTorch or CuPy)")
        lib = None
        for a in self.args:
            if a.name not in values:
                continue
            v = values[a.name]
            kind, v = _as_cuda(v, a.name)
            if lib is None:
                lib = kind
            elif kind != lib:
                raise CallError(f"{a.name}: a {kind} tensor among {lib} tensors")
            values[a.name] = v
        if lib is None:
            raise CallError("no GPU tensors given")
        ops = _TENSOR_LIBS[lib]
        dims = {}
        views = {}
        for a in self.args:
            if a.name in values:
                view = _CudaArray(values[a.name], a.name)
                self._check(a, view.shape, view.dtype, dims)
                views[a.name] = view
        for n in ("T", "B"):
            if dims.get(n, 1) < 1:
                raise CallError(f"{n} = {dims[n]}: sequences and batches must not be empty")
        keep = []
        descs = []
        for a in self.args:
            view = views.get(a.name)
            if view is None:
                z = ops.zeros(self._shape_of(a, dims), a.dtype)
                keep.append(z)
                view = _CudaArray(z, a.name)
            descs.append(_descriptor(view.ptr, view.shape, view.strides))
        stream = ops.current_stream()
        if self._set_stream is not None:
            self._set_stream(stream)
        else:
            # The runtime has its own stream: the inputs must be ready.
            ops.synchronize()
        results = self._results_struct()
        self.lib.lstmRuntimeClearError()
        self.fn(ctypes.byref(results), *[ctypes.byref(d) for d in descs])
        err = self.lib.lstmRuntimeLastError()
        if err is not None:
            raise RuntimeError("CUDA runtime: " + err.decode())
        inputs = {v.ptr for v in views.values()} | {_CudaArray(z, "").ptr for z in keep}
        outs, owned = [], set()
        for k, r in enumerate(self.results):
            d = getattr(results, f"r{k}")
            rank = len(r.shape)
            shape = tuple(d.sizes[:rank])
            item = np.dtype(_NP[r.dtype]).itemsize
            if 0 in shape:
                outs.append(ops.zeros(shape, r.dtype))
            else:
                outs.append(ops.copy_of(d.aligned + d.offset * item, shape,
                                        tuple(d.strides[:rank]), r.dtype))
            if d.allocated and d.allocated not in inputs:
                owned.add(d.allocated)
        # The copies are queued on the caller's stream: done before freeing.
        ops.synchronize()
        for p in owned:
            self.lib.lstmRuntimeFree(p)
        return tuple(outs)


class _Interface:
    """__cuda_array_interface__ of a buffer the library returned."""

    def __init__(self, ptr, shape, strides, dtype):
        item = np.dtype(_NP[dtype]).itemsize
        self.__cuda_array_interface__ = {
            "data": (ptr, False), "shape": tuple(shape), "typestr": _TYPESTR[dtype],
            "strides": tuple(s * item for s in strides), "version": 3}


class _Torch:
    @staticmethod
    def zeros(shape, dtype):
        import torch
        return torch.zeros(shape, dtype=getattr(torch, dtype), device="cuda")

    @staticmethod
    def current_stream():
        import torch
        # The default stream's handle is 0, which lstmRuntimeSetStream takes
        # for "none" (the runtime's own stream, not ordered with the
        # caller's work): name it CU_STREAM_LEGACY instead.
        return torch.cuda.current_stream().cuda_stream or _CU_STREAM_LEGACY

    @staticmethod
    def synchronize():
        import torch
        torch.cuda.current_stream().synchronize()

    @staticmethod
    def copy_of(ptr, shape, strides, dtype):
        import torch
        view = torch.as_tensor(_Interface(ptr, shape, strides, dtype), device="cuda")
        return view.clone(memory_format=torch.contiguous_format)


class _CuPy:
    @staticmethod
    def zeros(shape, dtype):
        import cupy
        return cupy.zeros(shape, dtype=dtype)

    @staticmethod
    def current_stream():
        import cupy
        return cupy.cuda.get_current_stream().ptr or _CU_STREAM_LEGACY

    @staticmethod
    def synchronize():
        import cupy
        cupy.cuda.get_current_stream().synchronize()

    @staticmethod
    def copy_of(ptr, shape, strides, dtype):
        import cupy
        return cupy.ascontiguousarray(cupy.asarray(_Interface(ptr, shape, strides, dtype))).copy()


_TENSOR_LIBS = {"torch": _Torch, "cupy": _CuPy}


def _as_cuda(v, name):
    """(library, object with __cuda_array_interface__) for a GPU tensor."""
    if isinstance(v, np.ndarray):
        raise CallError(f"{name}: a GPU network takes CUDA tensors (PyTorch or CuPy), "
                        "got a numpy array")
    module = type(v).__module__.split(".")[0]
    if module == "torch":
        if not v.is_cuda:
            raise CallError(f"{name}: a GPU network takes CUDA tensors, got one on {v.device}")
        return "torch", v
    if module == "cupy":
        return "cupy", v
    if hasattr(v, "__cuda_array_interface__"):
        # e.g. Numba device arrays: seen through CuPy, without a copy.
        import cupy
        return "cupy", cupy.asarray(v)
    if hasattr(v, "__dlpack__"):
        try:
            import torch
            t = torch.from_dlpack(v)
        except ImportError:
            import cupy
            return "cupy", cupy.from_dlpack(v)
        if not t.is_cuda:
            raise CallError(f"{name}: a GPU network takes CUDA tensors (DLPack device {t.device})")
        return "torch", t
    raise CallError(f"{name}: a GPU network takes CUDA tensors, got {type(v).__name__}")


def load(path):
    """Loads a network saved by CompiledNetwork.save (no compiler needed).
    A GPU network needs the CUDA driver; calling it needs a GPU."""
    if not os.path.isfile(os.path.join(path, META)):
        raise FileNotFoundError(f"{path}: not a saved network (no {META})")
    return CompiledNetwork(path)


def gpu_available():
    """Whether a CUDA GPU is usable from torch or CuPy."""
    try:
        import torch
        if torch.cuda.is_available():
            return True
    except ImportError:
        pass
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False
