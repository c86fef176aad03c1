"""Calls a network compiled by `lstm-compile --target=cuda` on GPU tensors.

The library exports the C interface of each function, `_mlir_ciface_NAME(
results*, arg0*, arg1*, ...)`, where every argument and result is a ranked
memref descriptor {allocated, aligned, offset, sizes[r], strides[r]} whose
pointers are device pointers (docs/aot.md). Inputs are PyTorch CUDA tensors,
passed without copies; results come back as PyTorch tensors that own a copy
of the library's buffers, which are then freed with lstmRuntimeFree.
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


class _Wrapped:
    """Exposes a result buffer through __cuda_array_interface__."""

    def __init__(self, ptr, shape, strides, dtype):
        item = torch.empty((), dtype=dtype).element_size()
        typestr = {torch.float32: '<f4', torch.float64: '<f8',
                   torch.int32: '<i4', torch.int64: '<i8'}[dtype]
        self.__cuda_array_interface__ = {
            'data': (ptr, False), 'shape': tuple(shape), 'typestr': typestr,
            'strides': tuple(s * item for s in strides), 'version': 3}


class CompiledNet:
    def __init__(self, path, entry='forward'):
        self.lib = ctypes.CDLL(path)
        self.fn = getattr(self.lib, '_mlir_ciface_' + entry)
        self.fn.restype = None
        self.lib.lstmRuntimeLastError.restype = ctypes.c_char_p
        self.lib.lstmRuntimeFree.argtypes = [ctypes.c_void_p]

    def __call__(self, inputs, result_ranks, result_dtype=torch.float32):
        inputs = [t.contiguous() for t in inputs]
        for t in inputs:
            if not t.is_cuda:
                raise ValueError('inputs must be CUDA tensors')
        descs = [_descriptor(t) for t in inputs]

        class Results(ctypes.Structure):
            _fields_ = [(f'r{k}', _descriptor_type(r)) for k, r in enumerate(result_ranks)]

        results = Results()
        torch.cuda.synchronize()
        self.lib.lstmRuntimeClearError()
        self.fn(ctypes.byref(results), *[ctypes.byref(d) for d in descs])
        err = self.lib.lstmRuntimeLastError()
        if err is not None:
            raise RuntimeError('CUDA runtime: ' + err.decode())

        inputs_ptrs = {t.data_ptr() for t in inputs}
        outs, freed = [], set()
        for k, rank in enumerate(result_ranks):
            d = getattr(results, f'r{k}')
            shape = list(d.sizes[:rank])
            ptr = d.aligned + d.offset * torch.empty((), dtype=result_dtype).element_size()
            if 0 in shape:
                outs.append(torch.empty(shape, dtype=result_dtype, device='cuda'))
            else:
                view = torch.as_tensor(_Wrapped(ptr, shape, list(d.strides[:rank]), result_dtype),
                                       device='cuda')
                outs.append(view.clone())
            if d.allocated and d.allocated not in inputs_ptrs and d.allocated not in freed:
                freed.add(d.allocated)
        torch.cuda.synchronize()
        for p in freed:
            self.lib.lstmRuntimeFree(p)
        return outs
