# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch interop: networks and parameters from nn.LSTM / nn.GRU or their
state_dict.

nn.LSTM stacks its gates i, f, g, o and nn.GRU r, z, n, which is the order
of lstmc.cells.lstm and lstmc.cells.gru; an importer still maps every block
explicitly (GATE_ORDER) rather than assume it, so a cell with another order
only changes that table. bias=False becomes zero biases; proj_size, layers
and bidirectional map to the network's options.
"""
import re

import numpy as np

from . import cells
from .network import Network

#: For each kind, the torch gate order and the cell's (the stacking of W, R, b).
GATE_ORDER = {"LSTM": ("ifgo", "ifgo"), "GRU": ("rzn", "rzn")}


def _reorder(a, torch_order, cell_order):
    blocks = dict(zip(torch_order, np.split(a, len(torch_order), axis=0)))
    return np.concatenate([blocks[g] for g in cell_order], axis=0)


def _infer(state_dict, kind):
    """Layers, direction, sizes and bias from the names and shapes."""
    keys = state_dict.keys()
    layers = 1 + max(int(m.group(1)) for k in keys
                     for m in [re.match(r"weight_ih_l(\d+)", k)] if m)
    bidirectional = any(k.endswith("_reverse") for k in keys)
    G = 4 if kind == "LSTM" else 3
    w = state_dict["weight_ih_l0"]
    hidden, input_size = w.shape[0] // G, w.shape[1]
    proj = state_dict["weight_hr_l0"].shape[0] if "weight_hr_l0" in keys else None
    bias = "bias_ih_l0" in keys
    return layers, bidirectional, hidden, input_size, proj, bias


def _numpy(v):
    if hasattr(v, "detach"):
        v = v.detach().cpu().numpy()
    return np.asarray(v)


def from_state_dict(state_dict, kind="LSTM", lengths=False, dtype="float32"):
    """(Network, params) for the state_dict of an nn.LSTM or nn.GRU
    (batch_first is a property of the call, not of the weights)."""
    if kind not in GATE_ORDER:
        raise ValueError(f"kind {kind!r}: expected 'LSTM' or 'GRU'")
    sd = {k: _numpy(v) for k, v in state_dict.items()}
    layers, bidir, hidden, input_size, proj, bias = _infer(sd, kind)
    if proj and kind != "LSTM":
        raise ValueError("proj_size exists only for LSTM")
    cell_opts = {"proj_size": proj} if proj else {}
    net = Network(cells.lstm if kind == "LSTM" else cells.gru, input_size=input_size,
                  num_layers=layers, direction="bidirectional" if bidir else "forward",
                  lengths=lengths, dtype=dtype, hidden=hidden, **cell_opts)
    torch_order, cell_order = GATE_ORDER[kind]
    params = {}
    for k in range(layers):
        for rev in ([False, True] if bidir else [False]):
            tsfx = f"_l{k}" + ("_reverse" if rev else "")
            sfx = (str(k) if layers > 1 else "") + ("_rev" if rev else "")
            W, R = sd["weight_ih" + tsfx], sd["weight_hh" + tsfx]
            G = len(torch_order)
            bW = sd["bias_ih" + tsfx] if bias else np.zeros(G * hidden, W.dtype)
            bR = sd["bias_hh" + tsfx] if bias else np.zeros(G * hidden, W.dtype)
            for name, a in (("W", W), ("R", R), ("bW", bW), ("bR", bR)):
                params[name + sfx] = _reorder(a, torch_order, cell_order).astype(dtype)
            if proj:
                params["Whr" + sfx] = sd["weight_hr" + tsfx].astype(dtype)
    missing = set(net.param_shapes()) - set(params)
    if missing:
        raise ValueError(f"state_dict lacks parameters for {sorted(missing)}")
    return net, params


def from_torch(module, lengths=False):
    """(Network, params) of an nn.LSTM or nn.GRU module."""
    kind = type(module).__name__
    if kind not in GATE_ORDER:
        raise TypeError(f"from_torch: expected nn.LSTM or nn.GRU, got {kind}")
    if getattr(module, "dropout", 0) and module.training:
        raise ValueError("from_torch: dropout between layers is not supported (call .eval())")
    dtype = {"torch.float32": "float32", "torch.float64": "float64"}[
        str(next(module.parameters()).dtype)]
    return from_state_dict(module.state_dict(), kind, lengths=lengths, dtype=dtype)


class TorchLike:
    """A compiled network called like the torch module it came from:
    f(x, hx=None) -> (y, h_n) for GRU, (y, (h_n, c_n)) for LSTM, with
    PyTorch's shapes ([L·D, B, H] states, batch_first if the module had it).
    Inputs and outputs are numpy arrays (CPU) or CUDA tensors (GPU)."""

    def __init__(self, module, target="cpu", **compile_options):
        net, params = from_torch(module)
        self.kind = type(module).__name__
        self.batch_first = module.batch_first
        self.stacked = module.num_layers * (2 if module.bidirectional else 1) > 1
        compiled = net.compile(target=target, **compile_options)
        if target == "cuda":
            # A GPU network takes its parameters as CUDA tensors too.
            import torch
            params = {k: torch.from_numpy(v).cuda() for k, v in params.items()}
        self.fn = compiled.bind(params)
        self.network = net

    def __call__(self, x, hx=None):
        swap = (lambda a: a.transpose(1, 0, 2) if isinstance(a, np.ndarray)
                else a.transpose(0, 1).contiguous())
        if self.batch_first:
            x = swap(x)
        states = {}
        if hx is not None:
            hs = hx if isinstance(hx, tuple) else (hx,)
            for name, h in zip(("h0", "c0"), hs):
                states[name] = h if self.stacked else h[0]
        outs = self.fn(x, **states)
        y, finals = outs[0], [f if self.stacked else f[None] for f in outs[1:]]
        if self.batch_first:
            y = swap(y)
        return (y, tuple(finals)) if self.kind == "LSTM" else (y, finals[0])
