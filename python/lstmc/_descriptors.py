# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Ranked memref descriptors, as lstm-compile's C interface passes every
argument and result ({allocated, aligned, offset, sizes[r], strides[r]}),
for the CPU and the GPU calls of lstmc.runtime."""
import ctypes
import functools

import numpy as np

_NP = {"float32": np.float32, "float64": np.float64, "int32": np.int32}
_TYPESTR = {"float32": "<f4", "float64": "<f8", "int32": "<i4"}


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
