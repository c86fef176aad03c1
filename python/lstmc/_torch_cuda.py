# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Calling a compiled CUDA library on torch tensors, without copies or
waits, for torch_module: the library's buffers as tensors (freed by the
thread and on the stream that made them), the saved activations kept
between the training forward and the backward, and one function of the
library (_CudaFunction) called on the current stream."""
import collections
import ctypes
import threading

import numpy as np
import torch

from ._descriptors import _NP, _TYPESTR

_TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64, "int32": torch.int32}
# torch's default stream has the handle 0, which lstmRuntimeSetStream takes
# for "no stream" (the runtime's own, unordered with torch's work): the
# driver's handle of the legacy default stream is CU_STREAM_LEGACY.
_CU_STREAM_LEGACY = 1


def _stream_handle(device):
    return torch.cuda.current_stream(device).cuda_stream or _CU_STREAM_LEGACY
# ---------------------------------------------------------------------------
# Calling a CUDA library on torch tensors, without copies or waits
# ---------------------------------------------------------------------------

# Buffers the library returned are freed (lstmRuntimeFree) by the thread that
# allocated them: the runtime's buffer cache is per thread and per stream, and
# autograd releases saved tensors on its own device thread. A buffer whose
# last tensor dies is queued for its thread, which frees it (on the stream it
# was made on) at the start of its next call into the library.
_pending = collections.defaultdict(collections.deque)
# Buffers made while a CUDA graph was being captured: the graph's replays
# write them, so they never go back to the runtime's cache.
_captured_blocks = []


class _Block:
    """One device allocation of the library, owned by the tensors viewing it."""
    __slots__ = ("lib", "ptr", "stream", "thread", "captured", "__weakref__")

    def __init__(self, lib, ptr, stream, captured):
        self.lib, self.ptr, self.stream, self.captured = lib, ptr, stream, captured
        self.thread = threading.get_ident()

    def __del__(self):
        if _pending is None or _captured_blocks is None:  # interpreter shutdown
            return
        if self.captured:
            _captured_blocks.append((self.lib, self.ptr, self.stream, self.thread))
        else:
            _pending[self.thread].append((self.lib, self.ptr, self.stream))


def _release_pending(capturing, stream):
    """Frees this thread's queued buffers; during a capture, only those of
    the capturing stream (host-side cache pushes, nothing captured)."""
    queue = _pending.get(threading.get_ident())
    if not queue:
        return
    keep, by_lib = [], {}
    while queue:
        try:
            lib, ptr, s = queue.popleft()
        except IndexError:
            break
        if capturing and s != stream:
            keep.append((lib, ptr, s))
            continue
        by_lib.setdefault(lib, []).append((ptr, s))
    queue.extend(keep)
    for lib, blocks in by_lib.items():
        free_many = getattr(lib, "lstmRuntimeFreeOnStreams", None)
        if free_many is None:  # a library compiled before it existed
            for ptr, s in blocks:
                lib.lstmRuntimeSetStream(ctypes.c_void_p(s))
                lib.lstmRuntimeFree(ctypes.c_void_p(ptr))
            continue
        # One call for all (a training step gives back about 25 buffers).
        n = len(blocks)
        free_many(n, (ctypes.c_void_p * n)(*(p for p, _ in blocks)),
                  (ctypes.c_void_p * n)(*(s for _, s in blocks)))


class _View:
    """__cuda_array_interface__ of a result; holds its _Block alive."""
    __slots__ = ("owner", "__cuda_array_interface__")

    def __init__(self, interface, ptr):
        self.__cuda_array_interface__ = dict(interface, data=(ptr, False))


class _Saved:
    """A saved activation between the training forward and the backward,
    kept as the library returned it (a contiguous buffer) rather than as a
    torch tensor: nothing but the backward reads it, and a training step
    makes a dozen of them. Holds its _Block alive (in the backward, where
    _Apply's owning tensor does, none)."""
    __slots__ = ("owner", "ptr", "shape")

    def __init__(self, owner, ptr, shape):
        self.owner, self.ptr, self.shape = owner, ptr, shape

    def data_ptr(self):
        return self.ptr

    def is_contiguous(self):
        return True


def _owning_tensor(saved, device):
    """A one-byte tensor over the first of `saved`'s buffers that holds all
    their _Blocks alive."""
    view = _View({"shape": (1,), "typestr": "|u1", "strides": None, "version": 3,
                  "stream": None}, saved[0].ptr)
    view.owner = [s.owner for s in saved]
    return torch.as_tensor(view, device=device)


def _saved_tensors_hooks_active():
    top = getattr(torch._C._autograd, "_top_saved_tensors_default_hooks", None)
    return top is None or top(False) is not None


# The results' array interfaces a _CudaFunction keeps (by result and
# layout), before it starts again.
_INTERFACES_KEPT = 1024

# A pointer read from a c_int64 word is negative above 2**63.
_ADDRESS_MASK = (1 << 64) - 1


class _CudaFunction:
    """One function of a GPU library, called on contiguous CUDA tensors in
    its argument order."""

    def __init__(self, compiled):
        self.compiled = compiled
        self._bind_library()
        self.results = compiled.results
        # The memref descriptors of the arguments, and those of the results,
        # each set as one flat array of 64-bit words (allocated, aligned,
        # offset, sizes, strides: no padding), written and read in one go,
        # as the CPU path's runtime._Plan does, instead of a ctypes
        # structure made and filled field by field for each descriptor
        # (char-rnn's training step passes 40 and gets 25 back).
        self.arg_offsets, words = [], 0
        for a in compiled.args:
            self.arg_offsets.append(8 * words)
            words += 3 + 2 * len(a.shape)
        self.ArgWords = ctypes.c_int64 * max(words, 1)
        self.out_info, words = [], 0
        for r in self.results:
            rank = len(r.shape)
            self.out_info.append((words, rank, _TORCH_DTYPES[r.dtype], _TYPESTR[r.dtype],
                                  np.dtype(_NP[r.dtype]).itemsize))
            words += 3 + 2 * rank
        self.ResultWords = ctypes.c_int64 * max(words, 1)
        # The argument words of the last shapes called with (the tensors are
        # contiguous: their strides follow from their shapes), the pointers
        # written into a copy on each call; and each result's array
        # interface but its pointer, by its shape and strides.
        self._arg_layout = None
        self._pointer_at = [offset // 8 for offset in self.arg_offsets]
        self._interfaces = {}

    def _bind_library(self):
        compiled = self.compiled
        self.lib = compiled.lib
        # The entry point typed for integer addresses: a function object of
        # its own (lib[name] makes a new one; compiled.fn takes byref
        # arguments and has no argument types, so an address passed to it
        # would go as a C int).
        self.fn = self.lib["_mlir_ciface_" + compiled.entry]
        self.fn.argtypes = [ctypes.c_void_p] * (1 + len(compiled.args))
        self.fn.restype = None
        for name in ("lstmRuntimeSetStream", "lstmRuntimeFree"):
            if not hasattr(self.lib, name):
                raise RuntimeError(f"{compiled.library_path} has no {name}: recompile it with "
                                   "this version of the compiler")
        self.lib.lstmRuntimeSetStream.argtypes = [ctypes.c_void_p]
        self.lib.lstmRuntimeFree.argtypes = [ctypes.c_void_p]
        free_many = getattr(self.lib, "lstmRuntimeFreeOnStreams", None)
        if free_many is not None:
            free_many.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
            free_many.restype = None
        self.lib.lstmRuntimeLastError.restype = ctypes.c_char_p

    def _run(self, out, args, stream):
        self.lib.lstmRuntimeSetStream(ctypes.c_void_p(stream))
        self.lib.lstmRuntimeClearError()
        # (The function's parameters are void pointers: the addresses of the
        # result and argument descriptors.)
        base = ctypes.addressof(args)
        self.fn(ctypes.addressof(out), *[base + offset for offset in self.arg_offsets])
        return self.lib.lstmRuntimeLastError()

    def _free_results(self, out, inputs):
        """Gives back the buffers of a failed call's results."""
        words = out[:]
        owned = {words[at] & _ADDRESS_MASK for at, *_ in self.out_info}
        for ptr in owned - set(inputs) - {0}:
            self.lib.lstmRuntimeFree(ctypes.c_void_p(ptr))

    def _argument_words(self, tensors):
        """The arguments' descriptor words, and their pointers."""
        shapes = [t.shape for t in tensors]
        # (One attribute, read and replaced whole: calls on other threads
        # see either layout, never shapes of one with words of the other.)
        layout = self._arg_layout
        if layout is None or layout[0] != shapes:
            words = []
            for shape in shapes:
                words += (0, 0, 0)
                words += shape
                words += _contiguous_strides(shape)
            layout = self._arg_layout = (shapes, words)
        words = layout[1][:]
        pointers = [t.data_ptr() for t in tensors]
        for at, ptr in zip(self._pointer_at, pointers):
            words[at] = words[at + 1] = ptr
        return self.ArgWords(*words), pointers

    def _interface(self, index, layout, typestr, item, rank):
        """The __cuda_array_interface__ of result `index` with `layout` (its
        shape and strides in elements), "data" left to fill, and whether
        the layout is the contiguous one of its shape."""
        key = (index, layout)
        entry = self._interfaces.get(key)
        if entry is None:
            if len(self._interfaces) >= _INTERFACES_KEPT:  # shapes of many calls
                self._interfaces.clear()
            shape, strides = layout[:rank], layout[rank:]
            entry = self._interfaces[key] = ({
                "shape": shape, "typestr": typestr,
                "strides": tuple(st * item for st in strides), "version": 3,
                "stream": None}, list(strides) == _contiguous_strides(shape))
        return entry

    def __call__(self, tensors, device, saved_from=None):
        """Runs the function on `tensors` (contiguous tensors or _Saved, on
        `device`); returns its results as tensors, those from index
        `saved_from` on as _Saved where they can be."""
        capturing = torch.cuda.is_current_stream_capturing()
        stream = _stream_handle(device)
        _release_pending(capturing, stream)
        descs, pointers = self._argument_words(tensors)
        out = self.ResultWords()
        err = self._run(out, descs, stream)
        inputs = dict(zip(pointers, tensors))
        if err is not None and self.compiled._needs_per_step_fallback():
            # The library has no per-step lowering and this call needs it
            # (lstmc.compile's per_step_fallback="on-demand"): the complete
            # library is compiled and the call runs again with it. Not
            # inside a capture, whose graph holds the failed call's work
            # (and where loading a library may not be allowed).
            if capturing:
                raise RuntimeError(
                    "this call needs the per-step lowering that lstmc compiles on demand "
                    "beside the persistent kernels (a batch above their bound, or a GPU "
                    "with fewer SMs than their blocks), which cannot happen within a CUDA "
                    "graph capture: run the step once before capturing (a warm-up call "
                    "compiles it), or compile with per_step_fallback=True")
            self._free_results(out, inputs)
            self.compiled._use_per_step_fallback()
            self._bind_library()
            out = self.ResultWords()
            err = self._run(out, descs, stream)
        if err is not None:
            raise RuntimeError("CUDA runtime: " + err.decode())
        if saved_from is None:
            saved_from = len(self.out_info)
        owners, results = {}, []
        words = out[:]
        for index, (at, rank, dtype, typestr, item) in enumerate(self.out_info):
            allocated, aligned, offset = words[at:at + 3]
            layout = tuple(words[at + 3:at + 3 + 2 * rank])
            if 0 in layout[:rank]:
                results.append(torch.zeros(layout[:rank], dtype=dtype, device=device))
                continue
            # (c_int64 words: the pointers as unsigned.)
            allocated &= _ADDRESS_MASK
            ptr = (aligned & _ADDRESS_MASK) + offset * item
            owner = inputs.get(allocated)
            alias = owner is not None
            if not alias and allocated:
                owner = owners.get(allocated)
                if owner is None:
                    owner = owners[allocated] = _Block(self.lib, allocated, stream, capturing)
            interface, contiguous = self._interface(index, layout, typestr, item, rank)
            if index >= saved_from and contiguous and not alias:
                results.append(_Saved(owner, ptr, interface["shape"]))
                continue
            view = _View(interface, ptr)
            view.owner = owner
            t = torch.as_tensor(view, device=device)
            # A result that is an input passed through is copied: autograd
            # must not see one tensor as both.
            results.append(t.clone() if alias else t)
        return tuple(results)


def _contiguous_strides(shape):
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def release_captured():
    """Gives the library buffers that captured CUDA graphs wrote back to the
    library (each thread frees its own at its next call). Call it only when
    no captured graph that ran a compiled network is alive any more."""
    while _captured_blocks:
        lib, ptr, stream, thread = _captured_blocks.pop()
        _pending[thread].append((lib, ptr, stream))
