"""Calls the functions of a library compiled with `lstm-compile --gradients`.

  net = GradNet('gpu-build/grad-fp32/lstm.so')          # reads lstm.sig.json
  outs = net.call('forward', args)                      # PyTorch tensors
  grads = net.call('forward_grad', args + cotangents)   # one per float argument
  trained = net.call('forward_train', args)             # results + saved
  results, saved = trained[:net.n_results], trained[net.n_results:]
  again = net.call('forward_backward', args + results + saved + cotangents)

The signatures (how many results each function has, their ranks and element
types) come from NET.sig.json, written beside the library where MLIR is
(test/GPU/signature.py): the C interface does not carry them.

device='cuda' (the default) runs a `--target=cuda` library through
compiled_net.py on PyTorch CUDA tensors (no copies in, results viewing the
library's buffers). device='cpu' runs a `--target=cpu` library on CPU tensors
(results copied out and the library's buffers freed), so the scripts that use
this module can be checked on a machine without a GPU.
"""
import ctypes
import json
import os

import torch

_TORCH = {'f32': torch.float32, 'f64': torch.float64, 'i32': torch.int32, 'i64': torch.int64}
# Checked calls pass this many spare (rank-3) result descriptors after the
# expected ones: a library that returns more results than its .sig.json says
# writes into them, not past the structure, and the call fails.
SPARE = 8


def signature_path(library):
    base = library[:-3] if library.endswith('.so') else library
    return base + '.sig.json'


def _descriptor_type(rank):
    class Descriptor(ctypes.Structure):
        _fields_ = [('allocated', ctypes.c_void_p), ('aligned', ctypes.c_void_p),
                    ('offset', ctypes.c_int64), ('sizes', ctypes.c_int64 * max(rank, 1)),
                    ('strides', ctypes.c_int64 * max(rank, 1))]
    return Descriptor


class _CpuFunction:
    """One function of a `--target=cpu` library, on CPU tensors."""

    def __init__(self, lib, entry, results):
        self.fn = getattr(lib, '_mlir_ciface_' + entry)
        self.fn.restype = None
        self.results = results
        self.free = ctypes.CDLL(None).free
        self.free.argtypes = [ctypes.c_void_p]

    def __call__(self, inputs, spare=0):
        inputs = [t.detach().contiguous() for t in inputs]
        descs = []
        for t in inputs:
            if t.device.type != 'cpu':
                raise ValueError('a cpu library takes CPU tensors')
            d = _descriptor_type(t.dim())()
            d.allocated = d.aligned = t.data_ptr()
            d.offset = 0
            for i, (n, s) in enumerate(zip(t.shape, t.stride())):
                d.sizes[i], d.strides[i] = n, s
            descs.append(d)

        results = self.results + [{'shape': [None] * 3, 'dtype': 'f32'}] * spare

        class Results(ctypes.Structure):
            _fields_ = [(f'r{k}', _descriptor_type(len(r['shape'])))
                        for k, r in enumerate(results)]
        out = Results()
        self.fn(ctypes.byref(out), *[ctypes.byref(d) for d in descs])
        inputs_at = {t.data_ptr() for t in inputs}
        values, owned = [], set()
        for k, r in enumerate(results):
            d = getattr(out, f'r{k}')
            rank, dtype = len(r['shape']), _TORCH[r['dtype']]
            dims = list(d.sizes[:rank])
            strides = list(d.strides[:rank])
            if 0 in dims:
                values.append(torch.zeros(dims, dtype=dtype))
            else:
                item = torch.empty((), dtype=dtype).element_size()
                span = 1 + sum((n - 1) * s for n, s in zip(dims, strides))
                buf = (ctypes.c_char * (span * item)).from_address(d.aligned + d.offset * item)
                flat = torch.frombuffer(bytearray(buf), dtype=dtype)
                values.append(torch.as_strided(flat, dims, strides).clone())
            if d.allocated and d.allocated not in inputs_at:
                owned.add(d.allocated)
        for ptr in owned:
            self.free(ptr)
        return values


class GradNet:
    """A library's forward, forward_grad, forward_train and forward_backward."""

    def __init__(self, library, signature=None, device='cuda'):
        if not os.path.exists(library):
            raise FileNotFoundError(f'no library {library}')
        signature = signature or signature_path(library)
        if not os.path.exists(signature):
            raise FileNotFoundError(
                f'no signature file {signature} beside {library} (written where MLIR is by '
                'test/GPU/signature.py, e.g. through scripts/gpu-compile-grad.sh)')
        with open(signature) as f:
            self.sig = json.load(f)
        self.sig_path = signature
        missing = [e for e in ('forward', 'forward_grad', 'forward_train', 'forward_backward')
                   if e not in self.sig]
        if missing:
            raise KeyError(f'{signature} has no {", ".join(missing)}: was the library '
                           'compiled with --gradients?')
        self.library, self.device = library, device
        self.n_results = len(self.sig['forward']['results'])
        self.n_saved = len(self.sig['forward_train']['results']) - self.n_results
        self._fns = {}
        if device == 'cpu':
            self._lib = ctypes.CDLL(os.path.abspath(library))

    def release(self):
        """Hands the device buffers the library's runtime keeps for reuse back
        to the driver (CUDA; the library's results must be gone)."""
        if self.device == 'cuda':
            lib = ctypes.CDLL(os.path.abspath(self.library))
            if hasattr(lib, 'lstmRuntimeEmptyCache'):
                lib.lstmRuntimeEmptyCache()

    def arg_ranks(self, entry='forward'):
        return [len(a['shape']) for a in self.sig[entry]['args']]

    def result_ranks(self, entry):
        return [len(r['shape']) for r in self.sig[entry]['results']]

    def _fn(self, entry):
        if entry not in self._fns:
            if entry not in self.sig:
                raise KeyError(f'{self.library} has no function {entry}')
            if self.device == 'cpu':
                self._fns[entry] = _CpuFunction(self._lib, entry, self.sig[entry]['results'])
            else:
                from compiled_net import CompiledNet
                dtypes = {r['dtype'] for r in self.sig[entry]['results']}
                if dtypes != {'f32'}:
                    raise ValueError(f'{entry}: results of types {dtypes}; compiled_net.py '
                                     'takes f32 results only')
                self._fns[entry] = CompiledNet(os.path.abspath(self.library), entry)
        return self._fns[entry]

    def call(self, entry, tensors, check=True):
        """Runs `entry` on `tensors` (its arguments in order); its results as
        tensors. On CUDA with check=False the call is not waited for (as
        needed inside a CUDA graph capture)."""
        want = len(self.sig[entry]['args'])
        if len(tensors) != want:
            raise ValueError(f'{entry} takes {want} arguments, got {len(tensors)}')
        # Shapes and types are checked on checked calls only (the unchecked
        # ones are timed or captured).
        for k, (t, a) in enumerate(zip(tensors, self.sig[entry]['args']) if check else ()):
            if t.dim() != len(a['shape']) or any(
                    s is not None and s != n for s, n in zip(a['shape'], t.shape)):
                raise ValueError(f'{entry}: argument {k} has shape {list(t.shape)}, '
                                 f'expected {a["shape"]}')
            if t.dtype != _TORCH[a['dtype']]:
                raise ValueError(f'{entry}: argument {k} is {t.dtype}, expected {a["dtype"]}')
        fn = self._fn(entry)
        spare = SPARE if check else 0
        if self.device == 'cpu':
            outs = fn(tensors, spare)
        else:
            outs = fn(tensors, self.result_ranks(entry) + [3] * spare, check=check)
        if check:
            self._check_results(entry, outs)
        return outs[:len(outs) - spare]

    def _check_results(self, entry, outs):
        """The results match the signature: the spare descriptors are untouched
        and each result has the signature's static extents."""
        expected = self.sig[entry]['results']
        written = [k for k, t in enumerate(outs[len(expected):]) if t.numel() or any(t.shape)]
        wrong = [k for k, (t, r) in enumerate(zip(outs, expected))
                 if t.dim() != len(r['shape'])
                 or any(s is not None and s != n for s, n in zip(r['shape'], t.shape))]
        if written or wrong:
            raise RuntimeError(
                f'{entry} of {self.library} does not return what {self.sig_path} '
                f'says ({len(expected)} results' + (f'; it wrote {len(written)} more' if written else '')
                + (f'; results {wrong} have other shapes' if wrong else '')
                + '): compile the library and its signature with the same build')
