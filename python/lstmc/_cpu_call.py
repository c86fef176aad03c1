# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Calling a CPU library (lstmc.runtime.CompiledNetwork on the CPU): the
checks and descriptor layout of a call worked out once per signature
(_Plan), the argument descriptors packed side by side, and the results'
buffers taken over by the arrays made on them (_Block)."""
import ctypes
import struct
import sys

import numpy as np

from ._call_errors import CallError
from ._descriptors import _NP, _contiguous_strides, _descriptor_format


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


class _CpuCalls:
    """CompiledNetwork's call of a CPU library (a mixin: the network's
    plan, bound arguments and release function are its own)."""

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
