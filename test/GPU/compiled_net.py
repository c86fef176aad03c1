"""Calls a network compiled by `lstm-compile --target=cuda` on GPU tensors.

The library exports the C interface of each function, `_mlir_ciface_NAME(
results*, arg0*, arg1*, ...)`, where every argument and result is a ranked
memref descriptor {allocated, aligned, offset, sizes[r], strides[r]} whose
pointers are device pointers (docs/aot.md). The network runs on PyTorch's
current stream (lstmRuntimeSetStream). Inputs are PyTorch CUDA tensors,
passed without copies; results come back as PyTorch tensors viewing the
library's buffers, which are freed with lstmRuntimeFree once no tensor
views them.
"""
import ctypes

import torch


def _descriptor_type(rank):
    class Descriptor(ctypes.Structure):
        _fields_ = [('allocated', ctypes.c_void_p), ('aligned', ctypes.c_void_p),
                    ('offset', ctypes.c_int64), ('sizes', ctypes.c_int64 * rank),
                    ('strides', ctypes.c_int64 * rank)]
    return Descriptor


def _descriptor(t):
    """A descriptor of the contiguous CUDA tensor `t`, sharing its memory."""
    d = _descriptor_type(t.dim())()
    d.allocated = d.aligned = t.data_ptr()
    d.offset = 0
    for i, (n, s) in enumerate(zip(t.shape, t.stride())):
        d.sizes[i] = n
        d.strides[i] = s
    return d


class _Buffer:
    """Owns one device allocation returned by the library; frees it (on the
    run's stream) when the last tensor viewing it is gone."""

    def __init__(self, lib, ptr):
        self.lib, self.ptr = lib, ptr

    def __del__(self):
        self.lib.lstmRuntimeSetStream(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        self.lib.lstmRuntimeFree(self.ptr)


class _View:
    """A result as __cuda_array_interface__; holds its _Buffer alive."""

    def __init__(self, owner, ptr, shape, strides, dtype):
        self.owner = owner
        item = torch.empty((), dtype=dtype).element_size()
        typestr = {torch.float32: '<f4', torch.float64: '<f8',
                   torch.int32: '<i4', torch.int64: '<i8'}[dtype]
        self.__cuda_array_interface__ = {
            'data': (ptr, False), 'shape': tuple(shape), 'typestr': typestr,
            'strides': tuple(s * item for s in strides), 'version': 3,
            'stream': None}


class CompiledNet:
    def __init__(self, path, entry='forward'):
        self.lib = ctypes.CDLL(path)
        self.fn = getattr(self.lib, '_mlir_ciface_' + entry)
        self.fn.restype = None
        self.lib.lstmRuntimeLastError.restype = ctypes.c_char_p
        self.lib.lstmRuntimeFree.argtypes = [ctypes.c_void_p]
        self.lib.lstmRuntimeSetStream.argtypes = [ctypes.c_void_p]
        self.lib.lstmRuntimeSynchronize.restype = ctypes.c_int

    def __call__(self, inputs, result_ranks, result_dtype=torch.float32, check=True):
        """Runs on PyTorch's current stream, asynchronously like any CUDA
        op; with `check`, waits for it and raises on a recorded failure."""
        inputs = [t.contiguous() for t in inputs]
        for t in inputs:
            if not t.is_cuda:
                raise ValueError('inputs must be CUDA tensors')
        descs = [_descriptor(t) for t in inputs]

        class Results(ctypes.Structure):
            _fields_ = [(f'r{k}', _descriptor_type(r)) for k, r in enumerate(result_ranks)]

        results = Results()
        self.lib.lstmRuntimeClearError()
        self.lib.lstmRuntimeSetStream(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream))
        self.fn(ctypes.byref(results), *[ctypes.byref(d) for d in descs])
        if check:
            self.lib.lstmRuntimeSynchronize()
        err = self.lib.lstmRuntimeLastError()
        if err is not None:
            raise RuntimeError('CUDA runtime: ' + err.decode())

        # A result may be an input passed through (then the input owns it).
        input_of = {t.data_ptr(): t for t in inputs}
        owners, outs = {}, []
        item = torch.empty((), dtype=result_dtype).element_size()
        for k, rank in enumerate(result_ranks):
            d = getattr(results, f'r{k}')
            shape = list(d.sizes[:rank])
            owner = input_of.get(d.allocated)
            if owner is None and d.allocated:
                if d.allocated not in owners:
                    owners[d.allocated] = _Buffer(self.lib, d.allocated)
                owner = owners[d.allocated]
            if 0 in shape:
                outs.append(torch.empty(shape, dtype=result_dtype, device='cuda'))
                continue
            ptr = d.aligned + d.offset * item
            outs.append(torch.as_tensor(
                _View(owner, ptr, shape, list(d.strides[:rank]), result_dtype), device='cuda'))
        return outs
