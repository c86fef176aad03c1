# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Calling compiled networks: ctypes and memref descriptors, no compiler.

A compiled network is a shared library exporting ``_mlir_ciface_<entry>``
(lstm-compile's C interface: every argument and result a ranked memref
descriptor {allocated, aligned, offset, sizes[r], strides[r]}) plus a JSON
description of its arguments and results. This module needs only numpy (and
torch or CuPy for GPU networks): :func:`load` runs a saved network where the
compiler is not installed.

CPU networks take numpy arrays or PyTorch CPU tensors (used in place when
contiguous and of the network's dtype, copied when not contiguous) and
return numpy arrays, or tensors when a tensor was among the arguments of the
call. A call's checks and descriptor layout are worked out once per
signature (:class:`_Plan`), so its overhead is a few microseconds
(docs/python.md, "Call overhead"). GPU networks take CUDA tensors of
PyTorch or CuPy (anything with ``__cuda_array_interface__``, or ``__dlpack__``
through torch/CuPy) without copying them, run on the caller's current stream
(``lstmRuntimeSetStream`` where the library's runtime has it) and return
tensors of the same library.

The CPU call is _cpu_call.py's, the GPU call _gpu_call.py's (mixins of
CompiledNetwork), the descriptors _descriptors.py's; this module loads
libraries, binds parameters and checks arguments.
"""
import ctypes
import json
import os
import shutil

import numpy as np

from ._call_errors import CallError, NoGPUError
from ._cpu_call import _CpuCalls, _Plan, _address
from ._gpu_call import _GpuCalls, gpu_available

META = "network.json"
LIBRARY = "network.so"

__all__ = ["CallError", "CompiledNetwork", "NoGPUError", "PerStepFallback", "gpu_available", "load"]


class PerStepFallback:
    """The complete library of a persistent network compiled without the
    per-step lowering beside its kernels (lstmc.compile's
    per_step_fallback="on-demand"): `compile_complete` (a callable that
    returns it as a CompiledNetwork) runs on the first call that needs it,
    once for the network, its gradient functions and their bound copies."""

    def __init__(self, compile_complete):
        self._compile_complete = compile_complete
        self.network = None

    def complete(self):
        if self.network is None:
            self.network = self._compile_complete()
        return self.network


class CompiledNetwork(_CpuCalls, _GpuCalls):
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
        #: Whether lstmc.compile found this network in its compile cache.
        self.from_cache = False
        self._tmp = _owned_tmp
        # The complete library where this one was compiled without the
        # per-step fallback (PerStepFallback), and this function's name in
        # it (None: the network's own function).
        self._fallback = None
        self._function = None
        self._load_library(directory)
        self._bound = {}
        # The gradient functions (compiled with gradients=True): callables
        # of the same library, named after what lstm-differentiate adds.
        for name, fmeta in meta.get("functions", {}).items():
            function = CompiledNetwork(directory, dict(meta, **fmeta, functions={}))
            function._function = name
            setattr(self, name, function)
        self._bind_slots()

    def _load_library(self, directory):
        """Loads the library of `directory` and this function of it."""
        self.directory = directory
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
        if self.target == "cuda":
            self.lib.lstmRuntimeLastError.restype = ctypes.c_char_p
            self.lib.lstmRuntimeFree.argtypes = [ctypes.c_void_p]
            self._set_stream = getattr(self.lib, "lstmRuntimeSetStream", None)
            if self._set_stream is not None:
                self._set_stream.argtypes = [ctypes.c_void_p]
        else:
            # Result buffers go back through the library's allocator, which
            # keeps large blocks for the next call (lib/Runtime/CpuMemory.cpp);
            # libc's free where a library predates it.
            release = getattr(self.lib, "_mlir_memref_to_llvm_free", None)
            if release is None:
                release = ctypes.CDLL(None).free
            release.argtypes = [ctypes.c_void_p]
            release.restype = None
            self._release = release
            self._plan = _Plan(self.lib["_mlir_ciface_" + self.entry], self.args, self.results,
                               self._guard())

    def _guard(self):
        """(guarded call, packed entry point, last failure) of the CPU
        runtime, where the library has them."""
        guarded = getattr(self.lib, "lstmRuntimeCpuGuardedCall", None)
        packed = getattr(self.lib, "_lstm_packed_" + self.entry, None)
        last = getattr(self.lib, "lstmRuntimeCpuLastFailure", None)
        if guarded is None or packed is None or last is None:
            return None
        guarded.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
        guarded.restype = ctypes.c_int32
        last.argtypes = []
        last.restype = ctypes.c_char_p
        return guarded, ctypes.cast(packed, ctypes.c_void_p).value, last

    def _attach_per_step_fallback(self, fallback):
        """Makes this network and its gradient functions switch to
        `fallback`'s complete library when a call needs it."""
        self._fallback = fallback
        for name in self.meta.get("functions", {}):
            getattr(self, name)._attach_per_step_fallback(fallback)

    def _needs_per_step_fallback(self):
        """Whether the failed call needs the per-step lowering that this
        library was compiled without, and lstmc can compile it."""
        needs = getattr(self.lib, "lstmRuntimeNeedsPerStepFallback", None)
        return self._fallback is not None and needs is not None and needs() != 0

    def _use_per_step_fallback(self):
        """Switches to the complete library (compiled now if it is not
        yet); this library stays loaded for what it returned."""
        complete = self._fallback.complete()
        if self._function is not None:
            complete = getattr(complete, self._function)
        self.meta = complete.meta
        self._load_library(complete.directory)
        self._fallback = None

    def __repr__(self):
        return (f"CompiledNetwork({self.entry}, target={self.target}, args=[" +
                ", ".join(map(repr, self.args)) + "])")

    def __del__(self):
        if getattr(self, "_tmp", None):
            shutil.rmtree(self._tmp, ignore_errors=True)

    # ------------------------------------------------------------------
    @property
    def threads(self):
        """The threads a CPU network's products run on (its library's
        runtime: oneDNN and OpenBLAS); None for a GPU network."""
        if self.target != "cpu":
            return None
        get = self.lib.lstmRuntimeCpuGetThreads
        get.restype = ctypes.c_int32
        return int(get())

    def set_threads(self, threads):
        """Sets the threads of a CPU network's products: an int >= 1, or 0
        for one per core (until set: OMP_NUM_THREADS, else one per core). It applies to every network loaded
        from this library, on whichever thread calls them; in a child
        process forked after the products ran on several threads, one
        thread (GNU's OpenMP runtime cannot start threads there)."""
        if self.target != "cpu":
            raise ValueError(f"set_threads: {self.entry} is a {self.target} network; "
                             "the thread count is the CPU's")
        if isinstance(threads, bool) or not isinstance(threads, int) or threads < 0:
            raise ValueError(f"set_threads: threads must be an int >= 0 (0: one per "
                             f"core), got {threads!r}")
        if threads > 2 ** 31 - 1:
            raise ValueError(f"set_threads: threads {threads} does not fit a 32-bit int")
        self.lib.lstmRuntimeCpuSetThreads(ctypes.c_int32(threads))

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
        # A parameter's shape is static: a wrong one is refused here, not at
        # the first call.
        for a in self.args:
            shape = getattr(params.get(a.name), "shape", None)
            if a.kind == "param" and shape is not None and tuple(shape) != tuple(a.shape):
                raise CallError(f"bind: {a.name}: shape {list(shape)}, expected {list(a.shape)}")
        out = CompiledNetwork.__new__(CompiledNetwork)
        out.__dict__.update(self.__dict__)
        out._tmp = None  # the original owns the directory
        out._owner = self
        out._bound = dict(self._bound, **params)
        out._bind_slots()
        for name in self.meta.get("functions", {}):
            setattr(out, name, getattr(self, name).bind(params))
        return out

    def _bind_slots(self):
        # The call's argument list before the call's own arguments go in:
        # the bound values in their places, None elsewhere; and the places
        # the positional arguments fill.
        self._slots_bound = [self._bound.get(a.name) for a in self.args]
        self._slots_free = [k for k, a in enumerate(self.args) if a.name not in self._bound]
        self._index = {a.name: k for k, a in enumerate(self.args)}
        self._required = [k for k, a in enumerate(self.args)
                          if a.kind not in ("state", "cotangent") and a.name not in self._bound]
        plan = self.__dict__.get("_plan")
        if plan is None:
            return
        # Bound numpy arrays of the right dtype and shape, contiguous, are
        # checked here once and their descriptors written into the template
        # that every call's argument buffer starts from. They stay in place:
        # a call reads their values as they are then (what bind always
        # did); other bound values are checked at every call.
        template = plan.Args()
        self._cached = [None] * len(self.args)
        self._cached_ptrs = set()
        for spec, v in zip(plan.args, self._slots_bound):
            if (type(v) is np.ndarray and v.dtype == spec.np_dtype and spec.shape is not None
                    and v.shape == spec.shape and v.flags.c_contiguous):
                ptr = _address(v)
                spec.pack(template, spec.offset, ptr, ptr, *spec.tail)
                self._cached[spec.index] = v
                self._cached_ptrs.add(ptr)
        self._template = bytes(template)

    # ------------------------------------------------------------------
    def _slots(self, args, kwargs):
        """The call's arguments in signature order, None for those left out
        (initial states and cotangents: zeros)."""
        free = self._slots_free
        if len(args) > len(free):
            raise CallError(f"{len(args)} positional arguments for {len(free)} "
                            f"({', '.join(self.args[k].name for k in free)})")
        slots = self._slots_bound.copy()
        for k, v in zip(free, args):
            slots[k] = v
        if kwargs:
            index = self._index
            positional = set(free[:len(args)])
            for name, v in kwargs.items():
                k = index.get(name)
                if k is None:
                    raise CallError(f"unknown argument {name!r} (arguments: "
                                    f"{', '.join(a.name for a in self.args)})")
                if k in positional:
                    raise CallError(f"argument {name!r} given twice")
                slots[k] = v
        for k in self._required:
            if slots[k] is None:
                missing = [a.name for a, v in zip(self.args, slots)
                           if v is None and a.kind not in ("state", "cotangent")]
                raise CallError(f"missing arguments: {', '.join(missing)}")
        return slots

    def _collect(self, args, kwargs):
        return {a.name: v for a, v in zip(self.args, self._slots(args, kwargs))
                if v is not None}

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

    def _reject(self, arg, shape, dtype, dims):
        """Raises _check's error for an argument the fast checks refused."""
        self._check(arg, shape, dtype, dims)
        raise CallError(f"{arg.name}: shape {list(shape)} {dtype}, expected "
                        f"{list(arg.shape)} {arg.dtype}")

    def _shape_of(self, arg, dims):
        return tuple(dims[d] if isinstance(d, str) else d for d in arg.shape)

    def __call__(self, *args, **kwargs):
        if self.target == "cuda":
            return self._call_gpu(self._collect(args, kwargs))
        return self._call_cpu(self._slots(args, kwargs))


def load(path):
    """Loads a network saved by CompiledNetwork.save (no compiler needed).
    A GPU network needs the CUDA driver; calling it needs a GPU."""
    if not os.path.isfile(os.path.join(path, META)):
        raise FileNotFoundError(f"{path}: not a saved network (no {META})")
    return CompiledNetwork(path)
