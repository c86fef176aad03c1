# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compiled networks as PyTorch modules: ``lstmc.torch_module(network)``.

    m = lstmc.torch_module(lc.Network(lc.cells.greff, input_size=65, hidden=128,
                                      num_layers=2), target="cuda")
    y, hT, cT = m(x)                     # x: [T, B, 65] on the module's device
    loss(y).backward()                   # the compiled backward pass
    torch.optim.Adam(m.parameters()).step()

The module's parameters are ``nn.Parameter`` s named like the network's
parameter arguments (``W0``, ``R0``, ... for stacks). With autograd
recording (some input or parameter requires grad and grad mode is on),
``forward`` calls the training forward ``@f_train`` through a
``torch.autograd.Function`` that saves its activations; the backward calls
``@f_backward`` on them (no second forward). Under ``torch.no_grad()`` (or
``inference_mode``) it calls the plain forward ``@f``, which saves nothing.

CPU networks take CPU tensors (passed to the library in place; results come
back as tensors over the runtime's copies). GPU networks take
CUDA tensors without copies on PyTorch's current stream, and return tensors
viewing the library's buffers; nothing on that path waits for the GPU, so a
whole training step (forward, loss, backward, optimizer) can be captured in
a CUDA graph (:class:`GraphedStep`).

This module imports torch; ``import lstmc`` does not (``lstmc.torch_module``
is imported on first use and is callable: ``lstmc.torch_module(network)``).
The calls of the compiled functions on tensors and the autograd node are
_torch_runner.py's.
"""
import copy
import math
import sys
import types

import numpy as np
import torch
from torch import nn

from . import runtime
from ._torch_cuda import _TORCH_DTYPES
from ._torch_cuda import release_captured  # noqa: F401 (lstmc.torch_module.release_captured)
from ._torch_runner import _Apply, _Runner
from .runtime import CallError


# ---------------------------------------------------------------------------
# The module
# ---------------------------------------------------------------------------

class CompiledRNN(nn.Module):
    """A compiled network as an nn.Module (made by :func:`torch_module`).

    forward(x, *initial_states, lengths=None, **named_states) -> tuple of the
    network's results (``y`` and the final states, e.g. ``(y, hT, cT)``).
    Initial states are given by position in the network's state order or by
    name (``h0=...``), ``[B, N]`` for one layer and direction, ``[L·D, B,
    N]`` otherwise; those left out are zeros. ``lengths`` (networks built with
    ``lengths=True``): per-sequence lengths in [1, T], any integer tensor or
    sequence (no gradient).
    """

    def __init__(self, compiled, params, device):
        super().__init__()
        self.compiled = compiled
        self.target = compiled.target
        self.network_dtype = compiled.meta.get("dtype") or next(
            a.dtype for a in compiled.args if a.kind == "param")
        self._dtype = _TORCH_DTYPES[self.network_dtype]
        self._device = torch.device(device)
        self._runner = _Runner(compiled, self._device)
        self._args = compiled.args
        self._data = [a for a in compiled.args if a.kind in ("data", "lengths")]
        self._states = [a for a in compiled.args if a.kind == "state"]
        self._params = [a for a in compiled.args if a.kind == "param"]
        # Each parameter with its shape where it is static (a torch.Size, to
        # compare with a tensor's at once), None where it has named sizes.
        self._param_shapes = [
            (a, torch.Size(a.shape) if all(isinstance(d, int) for d in a.shape) else None)
            for a in self._params]
        for a in self._params:
            if hasattr(self, a.name) or "." in a.name:
                raise ValueError(f"parameter {a.name!r}: the name is taken by nn.Module "
                                 "(rename the cell's parameter)")
            value = params[a.name]
            self.register_parameter(a.name, nn.Parameter(value))

    def __deepcopy__(self, memo):
        # The parameters are copied; the loaded library is shared (it cannot
        # be copied), each copy with its own runner and device.
        new = self.__class__.__new__(self.__class__)
        memo[id(self)] = new
        for k, v in self.__dict__.items():
            new.__dict__[k] = v if k in ("compiled", "_runner") else copy.deepcopy(v, memo)
        new._runner = _Runner(self.compiled, self._device)
        return new

    def __reduce_ex__(self, protocol):
        raise TypeError("a CompiledRNN holds a loaded library and does not pickle: save its "
                        "state_dict() (and the compiled network's directory, lstmc.load)")

    # -- what the module is -------------------------------------------------
    @property
    def state_names(self):
        """The initial-state arguments, in forward's positional order."""
        return [a.name for a in self._states]

    def extra_repr(self):
        return (f"target={self.target}, dtype={self.network_dtype}, "
                f"states={self.state_names}, results={[r.name for r in self.compiled.results]}")

    def _apply(self, fn, recurse=True):
        # The compiled library runs on one kind of device and in one dtype:
        # refuse a move (.to, .cuda, .cpu, .double, ...) that changes either,
        # before anything is moved.
        probe = fn(torch.empty(0, dtype=self._dtype, device=self._device))
        if probe.dtype != self._dtype:
            raise TypeError(f"this module's network is compiled for {self.network_dtype}: it "
                            f"cannot become {probe.dtype} (build the Network with "
                            f"dtype='{str(probe.dtype).replace('torch.', '')}')")
        if probe.device.type != self._device.type:
            raise RuntimeError(
                f"this module's network is compiled for target={self.target!r} and cannot move "
                f"to {probe.device}: make another module with lstmc.torch_module(network, "
                f"target={'cuda' if probe.device.type == 'cuda' else 'cpu'!r}) and "
                "load_state_dict() into it")
        out = super()._apply(fn, recurse)
        if probe.device != self._device:  # another GPU of the same kind
            self._device = probe.device
            self._runner.device = probe.device
        return out

    # -- checks ---------------------------------------------------------------
    def _check(self, arg, t, dims):
        if not isinstance(t, torch.Tensor):
            raise CallError(f"{arg.name}: expected a torch.Tensor, got {type(t).__name__}")
        if t.device.type != self._device.type or (
                self._device.type == "cuda" and t.device != self._device):
            raise CallError(f"{arg.name}: a tensor on {t.device}, but this module runs on "
                            f"{self._device} (target={self.target!r})")
        if t.dtype != self._dtype:
            raise CallError(f"{arg.name}: dtype {t.dtype}, expected {self._dtype} (the "
                            f"network is {self.network_dtype})")
        if t.dim() != len(arg.shape):
            raise CallError(f"{arg.name}: shape {list(t.shape)} has rank {t.dim()}, expected "
                            f"{list(arg.shape)}")
        for n, d in zip(t.shape, arg.shape):
            if isinstance(d, str):
                if dims.setdefault(d, n) != n:
                    raise CallError(f"{arg.name}: shape {list(t.shape)} does not match "
                                    f"{list(arg.shape)} with {d}={dims[d]} (from x)")
            elif n != d:
                raise CallError(f"{arg.name}: shape {list(t.shape)}, expected {list(arg.shape)}")

    def _lengths(self, lengths, dims):
        if isinstance(lengths, torch.Tensor):
            if lengths.is_floating_point() or lengths.is_complex() or lengths.dtype == torch.bool:
                raise CallError(f"lengths: an integer tensor, got {lengths.dtype}")
        else:
            arr = np.asarray(lengths)
            if arr.dtype.kind not in "iu":
                raise CallError(f"lengths: integers expected, got {arr.dtype}")
            lengths = torch.from_numpy(arr.astype(np.int64))
        if lengths.shape != (dims["B"],):
            raise CallError(f"lengths: shape {list(lengths.shape)}, expected [{dims['B']}] (B "
                            "from x)")
        T = dims["T"]
        if lengths.device.type == "cpu":
            lo, hi = int(lengths.min()), int(lengths.max())
            if lo < 1 or hi > T:
                raise CallError(f"lengths must be in [1, T={T}], got [{lo}, {hi}]")
            return lengths.to(device=self._device, dtype=torch.int32)
        if lengths.device != self._device:
            raise CallError(f"lengths: on {lengths.device}, this module runs on {self._device}")
        lengths = lengths.to(torch.int32)
        # Checked on the device, without waiting for it (capturable).
        torch._assert_async(((lengths >= 1) & (lengths <= T)).all(),
                            f"lengths must be in [1, T={T}]")
        return lengths

    # -- forward --------------------------------------------------------------
    def forward(self, x, *initial_states, lengths=None, **named_states):
        if len(initial_states) > len(self._states):
            raise CallError(f"{len(initial_states)} initial states given, the network has "
                            f"{len(self._states)} ({', '.join(self.state_names)})")
        states = dict(zip(self.state_names, initial_states))
        for k, v in named_states.items():
            if k not in self.state_names:
                raise CallError(f"unknown argument {k!r} (initial states: "
                                f"{', '.join(self.state_names)}; lengths=)")
            if k in states:
                raise CallError(f"initial state {k!r} given twice")
            states[k] = v
        dims = {}
        values = {}
        self._check(self._data[0], x, dims)
        if dims["T"] < 1 or dims["B"] < 1:
            raise CallError(f"x: shape {list(x.shape)}: sequences and batches must not be empty")
        values["x"] = x
        has_lengths = any(a.kind == "lengths" for a in self._data)
        if has_lengths:
            if lengths is None:
                raise CallError("lengths: this network was built with lengths=True; pass "
                                "lengths=[B] integers")
            values["lengths"] = self._lengths(lengths, dims)
        elif lengths is not None:
            raise CallError("lengths: this network was built without lengths (Network(..., "
                            "lengths=True) takes them)")
        for a in self._states:
            v = states.get(a.name)
            if v is not None:
                self._check(a, v, dims)
                values[a.name] = v
        for a, static in self._param_shapes:
            p = self._parameters.get(a.name)
            # (The full check where a parameter is not what it was made as.)
            if p is None or static is None or not (
                    p.dtype == self._dtype and p.shape == static and p.device == self._device):
                p = getattr(self, a.name)
                self._check(a, p, dims)
            values[a.name] = p
        names = tuple(values)
        tensors = tuple(values.values())
        if torch.is_grad_enabled() and any(t.requires_grad for t in tensors):
            if not self._runner.has_gradients:
                raise RuntimeError("this module's network was compiled without gradients "
                                   "(compile(gradients=\"train\")); use it under "
                                   "torch.no_grad()")
            return _Apply.apply(self._runner, names, *tensors)
        return self._runner.call("forward", values)


# ---------------------------------------------------------------------------
# Construction
# ---------------------------------------------------------------------------

def _init_scale(compiled):
    """1/sqrt(H) with H the largest state size (nn.LSTM's hidden_size)."""
    sizes = [a.shape[-1] for a in compiled.args if a.kind == "state"]
    return 1.0 / math.sqrt(max(sizes)) if sizes else 1.0


def torch_module(network, params=None, target=None, device=None,
                 pre_passes="lstm-optimize", path=None, **compile_options):
    """A torch.nn.Module running `network` (:class:`CompiledRNN`).

    network: an lstmc.Network, compiled here with gradients="train" (the
    training forward and the backward, what autograd calls) for
    `target` ('cpu' or 'cuda'; by default 'cuda' where torch sees a GPU) with
    `pre_passes` (default 'lstm-optimize') into `path` (a temporary
    directory by default), compile_options going to Network.compile; or a
    CompiledNetwork (from Network.compile(gradients=True or "train") or lstmc.load,
    where no compiler is installed), used as it is.

    params: a dict name -> array or tensor of every parameter (copied), or
    None: U(-1/sqrt(H), 1/sqrt(H)) from torch's generator, as nn.LSTM does
    (H the largest state size). device: the CUDA device of a GPU module
    (default: the current one).
    """
    from .network import Network
    if isinstance(network, Network):
        if target is None:
            target = "cuda" if torch.cuda.is_available() else "cpu"
        # A training step calls the training forward and the backward only.
        compiled = network.compile(path=path, target=target, pre_passes=pre_passes,
                                   gradients="train", **compile_options)
    elif isinstance(network, runtime.CompiledNetwork):
        if compile_options or path is not None:
            raise ValueError("compile options given for a network that is already compiled")
        compiled = network
        if target is not None and target != compiled.target:
            raise ValueError(f"target {target!r}: the network is compiled for "
                             f"{compiled.target!r}")
        if getattr(compiled, "_bound", None):
            raise ValueError("a network with bound parameters (CompiledNetwork.bind): pass "
                             "the unbound one and params=")
    else:
        raise TypeError(f"network: expected an lstmc.Network or CompiledNetwork, got "
                        f"{type(network).__name__}")
    target = compiled.target
    if compiled.entry != compiled.meta["entry"]:
        raise ValueError(f"network: {compiled.entry} is one of the gradient functions; pass "
                         "the network itself")
    if target == "cuda":
        if not torch.cuda.is_available():
            raise runtime.NoGPUError("a GPU module needs a CUDA GPU usable from PyTorch")
        device = torch.device("cuda", torch.cuda.current_device()) if device is None \
            else torch.device(device)
        if device.type != "cuda":
            raise ValueError(f"device {device}: a GPU network runs on a CUDA device")
        if device.index is None:
            device = torch.device("cuda", torch.cuda.current_device())
    else:
        if device is not None and torch.device(device).type != "cpu":
            raise ValueError(f"device {device}: the network is compiled for the CPU")
        device = torch.device("cpu")
    dtype = _TORCH_DTYPES[compiled.meta.get("dtype") or next(
        a.dtype for a in compiled.args if a.kind == "param")]
    shapes = {a.name: a.shape for a in compiled.args if a.kind == "param"}
    values = {}
    if params is None:
        k = _init_scale(compiled)
        for name, shape in shapes.items():
            values[name] = torch.empty(shape, dtype=dtype).uniform_(-k, k).to(device)
    else:
        unknown = set(params) - set(shapes)
        missing = set(shapes) - set(params)
        if unknown or missing:
            raise ValueError(f"params: unknown {sorted(unknown)}, missing {sorted(missing)} "
                             f"(the network has {sorted(shapes)})")
        for name, shape in shapes.items():
            v = params[name]
            t = (v.detach() if isinstance(v, torch.Tensor) else torch.as_tensor(np.asarray(v)))
            if tuple(t.shape) != tuple(shape):
                raise ValueError(f"params[{name!r}]: shape {list(t.shape)}, expected "
                                 f"{list(shape)}")
            values[name] = t.to(device=device, dtype=dtype, copy=True).contiguous()
    return CompiledRNN(compiled, values, device)


# ---------------------------------------------------------------------------
# A training step in a CUDA graph
# ---------------------------------------------------------------------------

class GraphedStep:
    """A training step replayed from a CUDA graph.

        step = GraphedStep(train_step, x, y, zero_grad=opt.zero_grad)
        for x, y in batches:
            loss = step(x, y)      # the step's outputs (the graph's, after warm-up)

    `train_step(*inputs)` runs forward, loss, backward and the optimizer step
    on its inputs and returns tensors (e.g. the loss); it must not reset the
    gradients (`zero_grad` does, with set_to_none=True, before each eager
    step and before the capture: the captured backward then writes fresh
    gradients on every replay). The optimizer needs `capturable=True`
    (torch.optim.Adam(..., capturable=True)).

    The first `warmup` calls run eagerly on a side stream (`self.stream`),
    which fills the caches of PyTorch and of the compiled libraries; the
    next call captures the step on that stream and replays it; later calls
    copy their inputs into the graph's and replay. Every call is a real
    training step on its inputs. Run other calls of the same compiled
    libraries on `self.stream` too (``with torch.cuda.stream(step.stream)``):
    their buffer cache is per stream, and a call on another stream would
    flush it, freeing buffers the graph uses.
    """

    def __init__(self, train_step, *example_inputs, zero_grad=None, warmup=3):
        self.train_step, self.zero_grad, self.warmup = train_step, zero_grad, warmup
        self.static = [t.clone() for t in example_inputs]
        self.calls = 0
        self.graph = None
        self.outputs = None
        self.stream = torch.cuda.Stream()

    def __call__(self, *inputs):
        if len(inputs) != len(self.static):
            raise CallError(f"{len(inputs)} inputs, the step was made with {len(self.static)}")
        self.stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.stream):
            for s, t in zip(self.static, inputs):
                s.copy_(t, non_blocking=True)
            if self.graph is None and self.calls < self.warmup:
                if self.zero_grad is not None:
                    self.zero_grad(set_to_none=True)
                out = self.train_step(*self.static)
            else:
                if self.graph is None:
                    if self.zero_grad is not None:
                        self.zero_grad(set_to_none=True)
                    self.graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(self.graph, stream=self.stream):
                        self.outputs = self.train_step(*self.static)
                self.graph.replay()
                out = self.outputs
        torch.cuda.current_stream().wait_stream(self.stream)
        self.calls += 1
        return out


# ``lstmc.torch_module(network, ...)``: this module, called, makes a module.
class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return torch_module(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
