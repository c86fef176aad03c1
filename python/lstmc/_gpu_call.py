# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Calling a GPU library (lstmc.runtime.CompiledNetwork on CUDA): PyTorch
or CuPy tensors seen through __cuda_array_interface__ without copies, the
call on the caller's stream, the results copied into tensors of the same
library and the library's buffers freed."""
import ctypes

import numpy as np

from ._call_errors import CallError, NoGPUError
from ._descriptors import _NP, _TYPESTR, _contiguous_strides, _descriptor, _descriptor_type

#: The CUDA driver's handle of the legacy default stream (cuda.h).
_CU_STREAM_LEGACY = 1


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


class _GpuCalls:
    """CompiledNetwork's call of a GPU library (a mixin: the library, its
    argument checks and its per-step fallback are the network's)."""

    def _results_struct(self):
        Results = self.__dict__.get("_Results")
        if Results is None:
            class Results(ctypes.Structure):
                _fields_ = [(f"r{k}", _descriptor_type(len(r.shape)))
                            for k, r in enumerate(self.results)]
            self._Results = Results
        return Results()

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
