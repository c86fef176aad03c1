# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The three functions of a compiled network (forward, training forward,
backward) called on torch tensors (_Runner), and the network as one
autograd node over them (_Apply): what lstmc.torch_module's CompiledRNN
calls, separate from the module, its construction and the CUDA graphs of a
training step (torch_module.py)."""
import collections

import torch
from torch.autograd.function import once_differentiable

from ._torch_cuda import (_TORCH_DTYPES, _CudaFunction, _owning_tensor, _Saved,
                          _saved_tensors_hooks_active, _stream_handle)
from .runtime import CallError


# ---------------------------------------------------------------------------
# The three functions of a network, on torch tensors
# ---------------------------------------------------------------------------

class _Runner:
    """forward / train / backward of one compiled network on torch tensors of
    one device. `call(which, values)` takes a dict name -> tensor (initial
    states and cotangents may be left out: zeros) and returns a tuple."""

    def __init__(self, compiled, device):
        self.compiled = compiled
        self.device = device
        self.cuda = compiled.target == "cuda"
        self.has_gradients = all(hasattr(compiled, n) for n in ("train", "backward"))
        self.fns = {"forward": compiled}
        if self.has_gradients:
            self.fns.update(train=compiled.train, backward=compiled.backward)
        self.n_results = len(compiled.results)
        self._cuda = {}
        self._zero_cache = {}
        self._dim_sources = {}

    def call(self, which, values, saved_from=None):
        """Runs `which` on `values`; on the GPU, results from index
        `saved_from` on may come back as _Saved (see _CudaFunction)."""
        fn = self.fns[which]
        if not self.cuda:
            # CPU tensors go to the library in place and come back as
            # tensors (the runtime takes and returns torch tensors).
            return fn(**{k: v.detach() for k, v in values.items()})
        cf = self._cuda.get(which)
        if cf is None:
            cf = self._cuda[which] = _CudaFunction(fn)
        tensors, missing = [], []
        for a in fn.args:
            v = values.get(a.name)
            if v is None:  # an initial state or a cotangent left out
                missing.append(len(tensors))
            elif isinstance(v, torch.Tensor) and (not v.is_contiguous() or v.is_neg()):
                # (A negative view's storage holds -v: resolve_neg copies.
                # The training forward's saved activations, _Saved, are the
                # library's own contiguous buffers.)
                v = v.resolve_neg().contiguous()
            tensors.append(v)
        if missing:
            self._zeros(fn, tensors, missing)
        return cf(tensors, self.device, saved_from)

    def _zeros(self, fn, tensors, missing):
        """Zeros for the arguments left out (`missing`: their indices). On
        the GPU, one tensor per shape, device and stream is kept and passed
        to every call that needs it (the library does not write its
        arguments), so that a step does not fill new ones each time; not one
        made while a CUDA graph is captured (its fill runs only in the
        replays)."""
        sources = self._dim_sources.get(id(fn))
        if sources is None:  # each named size: the (argument, axis) pairs that have it
            sources = collections.defaultdict(list)
            for k, a in enumerate(fn.args):
                for j, d in enumerate(a.shape):
                    if isinstance(d, str):
                        sources[d].append((k, j))
            self._dim_sources[id(fn)] = sources

        def size(d):
            if not isinstance(d, str):
                return d
            for k, j in sources[d]:
                if tensors[k] is not None:
                    return tensors[k].shape[j]
            raise CallError(f"no argument given has the size {d}")

        stream = _stream_handle(self.device)
        for k in missing:
            a = fn.args[k]
            shape = tuple(size(d) for d in a.shape)
            dtype = _TORCH_DTYPES[a.dtype]
            # (The device too: the default stream's handle is the same on
            # every GPU, and a module may move to another.)
            key = (shape, dtype, self.device, stream)
            zeros = self._zero_cache.get(key)
            if zeros is None:
                zeros = torch.zeros(shape, dtype=dtype, device=self.device)
                if (len(self._zero_cache) < _ZERO_CACHE_ENTRIES
                        and zeros.numel() * zeros.element_size() <= _ZERO_CACHE_BYTES
                        and not torch.cuda.is_current_stream_capturing()):
                    self._zero_cache[key] = zeros
            tensors[k] = zeros


# The zero tensors a _Runner keeps: a few shapes (initial states and
# cotangents of final states), small.
_ZERO_CACHE_ENTRIES = 16
_ZERO_CACHE_BYTES = 16 << 20


class _Apply(torch.autograd.Function):
    """The network as one autograd node: @f_train forward (its saved
    activations kept for the backward), @f_backward backward."""

    @staticmethod
    def forward(ctx, runner, names, *tensors):
        # (A cotangent autograd has none for stays None: the runner passes
        # zeros it keeps, rather than autograd filling new ones.)
        ctx.set_materialize_grads(False)
        values = dict(zip(names, tensors))
        n = runner.n_results
        # The saved activations come back as the library's buffers (_Saved)
        # unless saved-tensor hooks (save_on_cpu, checkpointing) must see
        # them as tensors.
        outs = runner.call("train", values,
                           saved_from=None if _saved_tensors_hooks_active() else n)
        ctx.runner, ctx.names, ctx.n_args = runner, names, len(tensors)
        ctx.saved_names = [r.name for r in runner.fns["train"].results]
        kept = [o for o in outs if isinstance(o, torch.Tensor)]
        raw = [o for o in outs if isinstance(o, _Saved)]
        if raw:
            # One small tensor owns the buffers and goes through
            # save_for_backward: autograd frees it after the backward
            # (unless the graph is retained), and the buffers with it.
            kept.append(_owning_tensor(raw, runner.device))
        ctx.save_for_backward(*tensors, *kept)
        ctx.saved_raw = [(o.ptr, o.shape) if isinstance(o, _Saved) else None for o in outs]
        return outs[:n]

    @staticmethod
    def backward(ctx, *cotangents):
        # With create_graph=True (a gradient penalty, a Hessian-vector
        # product) grad mode is on here: the gradients would come back
        # without a graph and the penalty would add nothing, silently.
        if torch.is_grad_enabled():
            raise RuntimeError("lstmc: the gradients of a compiled network are computed "
                               "once, without a graph: backward with create_graph=True "
                               "(double backward) is not supported")
        return _Apply._backward(ctx, *cotangents)

    @staticmethod
    @once_differentiable
    def _backward(ctx, *cotangents):
        runner = ctx.runner
        stored = ctx.saved_tensors  # (raises once autograd freed them)
        values = dict(zip(ctx.names, stored[:ctx.n_args]))
        kept = iter(stored[ctx.n_args:])
        for name, raw in zip(ctx.saved_names, ctx.saved_raw):
            values[name] = _Saved(None, *raw) if raw is not None else next(kept)
        for r, g in zip(runner.compiled.results, cotangents):
            if g is not None:
                values["d" + r.name] = g
        grads = runner.call("backward", values)
        by_name = dict(zip((r.name for r in runner.fns["backward"].results), grads))
        return (None, None) + tuple(
            by_name.get("d" + name) if need else None
            for name, need in zip(ctx.names, ctx.needs_input_grad[2:]))
