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
"""
import ctypes
import functools
import json
import os
import shutil
import struct
import sys

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
    # The ranks of a network's arguments (1 to 3) spelled out: this runs
    # for every dynamic argument and result of every call.
    rank = len(shape)
    if rank == 3:
        return (shape[1] * shape[2], shape[2], 1)
    if rank == 2:
        return (shape[1], 1)
    if rank == 1:
        return (1,)
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def _descriptor_format(rank):
    """The struct format of a rank-`rank` descriptor, laid out as the C
    struct (native sizes and alignment: what _descriptor_type(rank) is)."""
    return "PPq" + "q" * (2 * rank)


class _Block:
    """A buffer a CPU call returned, owned by the array made on it: freed
    through `release` when that array goes."""
    __slots__ = ("address", "release")

    def __init__(self, address, release):
        self.address, self.release = address, release

    def __del__(self):
        self.release(self.address)


class _BlockView:
    """A contiguous array on a _Block, seen by numpy through the array
    interface: the array keeps it (and so the block) alive."""
    __slots__ = ("block", "__array_interface__")

    def __init__(self, block, address, shape, dtype):
        self.block = block
        self.__array_interface__ = {"version": 3, "shape": tuple(shape),
                                    "typestr": dtype.str, "data": (address, False)}


class _Arg:
    """What a call checks and passes for one argument, worked out once from
    the signature: its dtype, its fixed extents and the symbolic ones (T, B)
    it binds or must agree with, and where its descriptor goes."""
    __slots__ = ("index", "arg", "name", "kind", "dtype", "np_dtype", "rank", "shape",
                 "fixed", "symbolic", "tail", "offset", "pack")

    def __init__(self, index, arg, offset):
        self.index, self.arg, self.name, self.kind = index, arg, arg.name, arg.kind
        self.dtype = arg.dtype
        self.np_dtype = np.dtype(_NP[arg.dtype])
        self.rank = len(arg.shape)
        self.fixed = tuple((k, d) for k, d in enumerate(arg.shape) if not isinstance(d, str))
        self.symbolic = tuple((k, d) for k, d in enumerate(arg.shape) if isinstance(d, str))
        # A static shape is compared as one tuple, and its descriptor's
        # offset, sizes and strides are constants.
        self.shape = None if self.symbolic else tuple(arg.shape)
        self.tail = None if self.symbolic else (
            (0,) + self.shape + _contiguous_strides(self.shape))
        self.offset = offset
        # pack(buffer, offset, allocated, aligned, offset, *sizes, *strides)
        self.pack = struct.Struct("@" + _descriptor_format(self.rank)).pack_into


class _Plan:
    """How to call one function of a CPU library, made once per signature
    (CompiledNetwork.__init__) and shared by its bound copies.

    The argument descriptors are packed (struct) side by side into one
    ctypes buffer, laid out as the C structs, and the function gets their
    addresses as plain integers; the results' descriptors are read back with
    one struct.Struct. This replaces a ctypes Structure object per argument
    and result per call: making and filling those was most of the time of a
    small call."""

    def __init__(self, fn, args, results, guard=None):
        self.args = []
        offset = 0
        for k, a in enumerate(args):
            self.args.append(_Arg(k, a, offset))
            offset += struct.calcsize("@" + _descriptor_format(len(a.shape)))
        self.offsets = tuple(a.offset for a in self.args)
        self.Args = ctypes.c_int64 * -(-offset // 8)
        unpack = struct.Struct("@" + "".join(_descriptor_format(len(r.shape)) for r in results))
        self.unpack = unpack.unpack_from
        self.Results = ctypes.c_int64 * -(-unpack.size // 8)
        # Per result: where its fields, sizes, strides start and end in the
        # unpacked tuple, its numpy dtype and item size.
        self.results, j = [], 0
        for r in results:
            dt = np.dtype(_NP[r.dtype])
            rank = len(r.shape)
            self.results.append((j, j + 3, j + 3 + rank, j + 3 + 2 * rank, dt, dt.itemsize))
            j += 3 + 2 * rank
        # The library's entry point, typed for integer addresses. A function
        # object of its own: self.fn (byref arguments) is the GPU path's.
        self.fn = fn
        self.fn.argtypes = [ctypes.c_void_p] * (1 + len(args))
        self.fn.restype = None
        # Where the library has them, the call goes through the CPU
        # runtime's guard: a failed check or allocation (a batch too large
        # for the memory) returns instead of aborting the process.
        self.guarded = self.packed = self.last_failure = None
        if guard is not None:
            self.guarded, self.packed, self.last_failure = guard
            self.Pointers = ctypes.c_void_p * (1 + len(args))


_addressof, _from_buffer, _memmove = ctypes.addressof, ctypes.c_char.from_buffer, ctypes.memmove


def _address(a):
    """The address of a C-contiguous numpy array's first element; through
    the buffer protocol, several times cheaper than a.ctypes.data."""
    try:
        return _addressof(_from_buffer(a))
    except (TypeError, ValueError, BufferError):  # read-only or empty
        return a.ctypes.data


#: torch dtype -> numpy's name of it, filled as tensors are seen (str() of a
#: torch dtype costs more than the rest of an argument's checks).
_TORCH_NAMES = {}


_Tensor = None


class _NotATensor:
    """What CPU calls test arguments against while torch is not imported."""


def _torch_tensor_type():
    """torch.Tensor where torch is imported (a tensor can exist only then),
    else None: the runtime never imports torch itself on the CPU path."""
    global _Tensor
    if _Tensor is None:
        _Tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    return _Tensor


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

    def _results_struct(self):
        Results = self.__dict__.get("_Results")
        if Results is None:
            class Results(ctypes.Structure):
                _fields_ = [(f"r{k}", _descriptor_type(len(r.shape)))
                            for k, r in enumerate(self.results)]
            self._Results = Results
        return Results()

    def _as_array(self, a, v):
        """An argument that is neither a numpy array nor a usable CPU tensor:
        a numpy array of it, or the error saying why not."""
        if isinstance(v, np.ndarray):  # a subclass (np.memmap, ...)
            return np.asarray(v)
        Tensor = _torch_tensor_type()
        if Tensor is not None and isinstance(v, Tensor):
            if not v.is_cpu:
                raise CallError(f"{a.name}: a CPU network takes numpy arrays or CPU tensors, "
                                f"got a tensor on {v.device}")
            # The results could not carry the gradient: say so rather than
            # drop it.
            raise CallError(f"{a.name}: a tensor that requires grad; a CompiledNetwork has no "
                            "autograd (call it under torch.no_grad(), pass .detach(), or use "
                            "lstmc.torch_module)")
        if hasattr(v, "__cuda_array_interface__") or hasattr(v, "device"):
            raise CallError(f"{a.name}: a CPU network takes numpy arrays or CPU tensors, got "
                            f"{type(v).__name__}")
        return np.asarray(v)

    def _call_cpu(self, slots):
        plan = self._plan
        bound, cached = self._slots_bound, self._cached
        # torch.Tensor where torch is imported; else a class nothing is.
        Tensor = _Tensor or _torch_tensor_type() or _NotATensor
        args = plan.Args.from_buffer_copy(self._template)
        torch_results = False
        dims = {}
        inputs = []  # what the descriptors point to, alive until the call returns
        ptrs = []  # their addresses
        zeros = None  # the specs of initial states left out
        lengths = None
        # One pass: check each argument (dtype, rank, extents; T and B are
        # bound by the first argument that has them) and write its
        # descriptor. Nothing runs before every check has passed.
        for spec, v in zip(plan.args, slots):
            if v is None:
                if zeros is None:
                    zeros = []
                zeros.append(spec)
                continue
            if v is cached[spec.index]:
                continue  # a bound array, checked and written by bind
            if type(v) is not np.ndarray and not (
                    isinstance(v, Tensor) and v.is_cpu and not (
                        v.requires_grad and sys.modules["torch"].is_grad_enabled())):
                v = self._as_array(spec.arg, v)
            if type(v) is np.ndarray:
                shape = v.shape
                if v.dtype is not spec.np_dtype and v.dtype != spec.np_dtype:
                    if v.dtype.name != spec.dtype:
                        self._reject(spec.arg, shape, v.dtype.name, dims)
                    v = v.astype(spec.np_dtype)  # the other byte order: a native copy
            else:  # a torch CPU tensor (torch.Size is a tuple)
                shape = v.shape
                dtype = _TORCH_NAMES.get(v.dtype)
                if dtype is None:
                    dtype = _TORCH_NAMES[v.dtype] = str(v.dtype).replace("torch.", "")
                if dtype != spec.dtype:
                    self._reject(spec.arg, shape, dtype, dims)
                if v is not bound[spec.index]:
                    torch_results = True  # tensors in, tensors out
            if spec.shape is not None:
                if shape != spec.shape:
                    self._reject(spec.arg, shape, spec.dtype, dims)
            elif len(shape) != spec.rank:
                self._reject(spec.arg, shape, spec.dtype, dims)
            else:
                for k, d in spec.symbolic:
                    if dims.setdefault(d, shape[k]) != shape[k]:
                        self._reject(spec.arg, shape, spec.dtype, dims)
                for k, d in spec.fixed:
                    if shape[k] != d:
                        self._reject(spec.arg, shape, spec.dtype, dims)
            if type(v) is np.ndarray:
                if not v.flags.c_contiguous:
                    v = np.ascontiguousarray(v)
                try:  # _address, inline
                    ptr = _addressof(_from_buffer(v))
                except (TypeError, ValueError, BufferError):
                    ptr = v.ctypes.data
            else:  # a torch CPU tensor
                # (A negative view's storage holds -v: resolve_neg copies.)
                if not v.is_contiguous() or v.is_neg():
                    v = v.resolve_neg().contiguous()
                ptr = v.data_ptr()
            if spec.kind == "lengths":
                lengths = v if type(v) is np.ndarray else v.numpy()
            inputs.append(v)
            ptrs.append(ptr)
            if spec.tail is not None:
                spec.pack(args, spec.offset, ptr, ptr, *spec.tail)
            else:
                spec.pack(args, spec.offset, ptr, ptr, 0, *shape, *_contiguous_strides(shape))
        for n in ("T", "B"):
            if dims.get(n, 1) < 1:
                raise CallError(f"{n} = {dims[n]}: sequences and batches must not be empty")
        if lengths is not None and (lengths.min() < 1 or lengths.max() > dims["T"]):
            raise CallError(f"lengths must be in [1, T={dims['T']}], got "
                            f"[{lengths.min()}, {lengths.max()}]")
        if zeros is not None:
            for spec in zeros:
                shape = tuple(dims[d] if isinstance(d, str) else d for d in spec.arg.shape)
                v = np.zeros(shape, spec.np_dtype)
                ptr = _address(v)
                inputs.append(v)
                ptrs.append(ptr)
                spec.pack(args, spec.offset, ptr, ptr, 0, *shape, *_contiguous_strides(shape))
        base = _addressof(args)
        results = plan.Results()
        if plan.guarded is None:
            plan.fn(_addressof(results), *[base + o for o in plan.offsets])
        else:
            pointers = plan.Pointers(_addressof(results), *[base + o for o in plan.offsets])
            if plan.guarded(plan.packed, pointers):
                message = plan.last_failure().decode(errors="replace")
                if message.startswith("lstm: out of memory"):
                    raise MemoryError(message)
                raise CallError(message)
        fields = plan.unpack(results)
        outs, owned, blocks = [], [], {}
        # A buffer that only one result lies in is taken over; results that
        # share one are copied out, each its own array as before.
        allocations = [fields[j] for j, *_ in plan.results]
        for j, at_sizes, at_strides, end, dtype, item in plan.results:
            allocated, aligned, offset = fields[j:at_sizes]
            shape = fields[at_sizes:at_strides]
            strides = fields[at_strides:end]
            contiguous = strides == _contiguous_strides(shape)
            if 0 in shape:
                out = np.zeros(shape, dtype)
            elif (contiguous and allocated and allocated not in ptrs
                    and allocated not in self._cached_ptrs
                    and allocations.count(allocated) == 1):
                # A buffer the call made: the array takes it over, without a
                # copy, and hands it back to the library's allocator (which
                # reuses it for a later call's) when it goes.
                blocks[allocated] = block = _Block(allocated, self._release)
                out = np.asarray(_BlockView(block, aligned + offset * item, shape, dtype))
                outs.append(out)
                continue
            elif contiguous:
                out = np.empty(shape, dtype)
                _memmove(_addressof(_from_buffer(out)), aligned + offset * item, out.nbytes)
            else:
                # A strided view of the library's buffer, copied out.
                span = 1 + sum((n - 1) * s for n, s in zip(shape, strides))
                buf = (ctypes.c_char * (span * item)).from_address(aligned + offset * item)
                out = np.lib.stride_tricks.as_strided(
                    np.frombuffer(buf, dtype=dtype), shape, [s * item for s in strides]).copy()
            outs.append(out)
            # Ours to free, unless it is an input passed through (or another
            # result's buffer, freed once, or one an array took over).
            if allocated and allocated not in ptrs and allocated not in owned:
                owned.append(allocated)
        for p in owned:
            if p not in self._cached_ptrs and p not in blocks:
                self._release(p)
        if torch_results:
            from_numpy = sys.modules["torch"].from_numpy
            return tuple(from_numpy(o) for o in outs)
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
        inputs = {v.ptr for v in views.values()} | {_CudaArray(z, "").ptr for z in keep}
        results, err = self._run_gpu(descs, stream, ops)
        if err is not None and self._needs_per_step_fallback():
            # This library has no per-step lowering, and the call needs it:
            # what the failed call allocated goes back to it, and the call
            # runs again with the complete library.
            self._free_results(results, inputs)
            self._use_per_step_fallback()
            results, err = self._run_gpu(descs, stream, ops)
        if err is not None:
            raise RuntimeError("CUDA runtime: " + err.decode())
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

    def _run_gpu(self, descs, stream, ops):
        """Calls the function on `stream`: its results struct and the
        runtime's error (None on success)."""
        if self._set_stream is not None:
            self._set_stream(stream)
        else:
            # The runtime has its own stream: the inputs must be ready.
            ops.synchronize()
        results = self._results_struct()
        self.lib.lstmRuntimeClearError()
        self.fn(ctypes.byref(results), *[ctypes.byref(d) for d in descs])
        return results, self.lib.lstmRuntimeLastError()

    def _free_results(self, results, inputs):
        """Gives back the buffers of a failed call's results."""
        owned = set()
        for k in range(len(self.results)):
            d = getattr(results, f"r{k}")
            if d.allocated and d.allocated not in inputs:
                owned.add(d.allocated)
        for p in owned:
            self.lib.lstmRuntimeFree(p)


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
