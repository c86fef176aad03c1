# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""PyTorch interop: networks and parameters from nn.LSTM / nn.GRU / nn.RNN,
their one-step cells (nn.LSTMCell / nn.GRUCell / nn.RNNCell), or the
state_dict of any of them (also inside a whole model's checkpoint, through
`prefix`).

nn.LSTM stacks its gates i, f, g, o and nn.GRU r, z, n, which is the order
of lstmc.cells.lstm and lstmc.cells.gru; an importer still maps every block
explicitly (GATE_ORDER) rather than assume it, so a cell with another order
only changes that table. bias=False becomes zero biases; proj_size, layers
and bidirectional map to the network's options. A cell module becomes a
one-layer network called with T = 1.

Weights in float16 or bfloat16 are converted to float32 (exactly: every
half value is a float32 value) and the network computes in float32; float64
stays float64 (docs/python.md, "Importing models").
"""
import re

import numpy as np

from . import cells
from .network import Network

#: For each kind, the torch gate order and the cell's (the stacking of W, R, b).
GATE_ORDER = {"LSTM": ("ifgo", "ifgo"), "GRU": ("rzn", "rzn"), "RNN": ("h", "h")}

#: The torch classes from_torch takes: kind, and whether it is a one-step cell.
MODULES = {"LSTM": ("LSTM", False), "GRU": ("GRU", False), "RNN": ("RNN", False),
           "LSTMCell": ("LSTM", True), "GRUCell": ("GRU", True), "RNNCell": ("RNN", True)}
_EXPECTED_MODULES = ("nn.LSTM or nn.GRU or nn.RNN (or their one-step cells nn.LSTMCell, "
                     "nn.GRUCell, nn.RNNCell)")

_LAYER_KEY = re.compile(r"^(weight_ih|weight_hh|bias_ih|bias_hh|weight_hr)_l(\d+)(_reverse)?$")
_CELL_KEYS = ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
_HALF = ("float16", "bfloat16")


def _reorder(a, torch_order, cell_order):
    blocks = dict(zip(torch_order, np.split(a, len(torch_order), axis=0)))
    return np.concatenate([blocks[g] for g in cell_order], axis=0)


def _numpy(name, v):
    """A float array of a state_dict entry (torch tensor or array-like);
    float16 / bfloat16 become float32 (exactly)."""
    if hasattr(v, "detach"):  # a torch tensor; numpy has no bfloat16
        v = v.detach().cpu()
        if str(v.dtype) in ("torch.float16", "torch.bfloat16"):
            v = v.float()
        v = v.numpy()
    a = np.asarray(v)
    if a.dtype.name in _HALF:  # numpy float16, ml_dtypes.bfloat16
        a = a.astype(np.float32)
    if a.dtype not in (np.float32, np.float64):
        raise ValueError(f"state_dict[{name!r}]: dtype {a.dtype}, expected floating-point "
                         "weights (float16, bfloat16, float32 or float64)")
    return a


def _candidate_prefixes(keys):
    """Prefixes under which `keys` hold an RNN's weights ('lstm.' for
    'lstm.weight_ih_l0')."""
    found = set()
    for k in keys:
        m = re.match(r"^(.+?)(weight_ih_l0|weight_ih)$", str(k))
        if m:
            found.add(m.group(1))
    return sorted(found)


def _shape(a):
    return "[" + ", ".join(map(str, a.shape)) + "]"


def _looks_like(ws, kind):
    """' (these look like an nn.GRU's weights ...)' when weight_hh's shape
    [G·H, H] says another kind, else ''."""
    hh = ws.get("weight_hh_l0")
    if hh is None or hh.ndim != 2 or not hh.shape[1] or hh.shape[0] % hh.shape[1] \
            or "weight_hr_l0" in ws:
        return ""
    other = {4: "LSTM", 3: "GRU", 1: "RNN"}.get(hh.shape[0] // hh.shape[1])
    return (f" (these look like an nn.{other}'s weights: pass kind={other!r})"
            if other and other != kind else "")


def _layers_of(sd, kind, what):
    """The weights of each layer and direction: {(k, reverse): {name: array}},
    and whether the keys were a cell's (weight_ih, ...) rather than a
    layer's (weight_ih_l0, ...). Raises ValueError naming what was expected."""
    keys = list(sd)
    expected = (f"the keys of an nn.{kind}'s state_dict: weight_ih_l<k>, weight_hh_l<k>, "
                f"bias_ih_l<k>, bias_hh_l<k> (with _reverse for the second direction"
                + (", weight_hr_l<k> for proj_size" if kind == "LSTM" else "")
                + f"), or those of an nn.{kind}Cell: weight_ih, weight_hh, bias_ih, bias_hh")
    if "weight_ih" in sd or "weight_hh" in sd:
        extra = [k for k in keys if k not in _CELL_KEYS]
        if extra:
            raise ValueError(f"{what}: unexpected keys {extra[:8]} beside a cell's weight_ih; "
                             f"expected {expected}")
        return {(0, False): {k + "_l0": sd[k] for k in keys}}, True
    layers, extra = {}, []
    for k in keys:
        m = _LAYER_KEY.match(str(k))
        if not m:
            extra.append(k)
            continue
        layers.setdefault((int(m.group(2)), bool(m.group(3))), {})[f"{m.group(1)}_l0"] = sd[k]
    if not layers:
        hint = ""
        prefixes = _candidate_prefixes(keys)
        if prefixes:
            hint = (" The keys look like a whole model's checkpoint: pass the RNN's prefix, "
                    + " or ".join(f"prefix={p!r}" for p in prefixes) + ".")
        got = (f"got keys {keys[:8]}" + (f" and {len(keys) - 8} more" if len(keys) > 8 else "")
               if keys else "the state_dict is empty")
        raise ValueError(f"{what}: no weights of an nn.{kind}: expected {expected}; {got}.{hint}")
    if extra:
        raise ValueError(f"{what}: unexpected keys {extra[:8]}; expected {expected}")
    return layers, False


def _infer(sd, kind, what):
    """Layers, direction, sizes, bias, projection and the weights per layer
    and direction, every shape checked against the kind."""
    layers, is_cell = _layers_of(sd, kind, what)
    G = len(GATE_ORDER[kind][0])
    num_layers = 1 + max(k for k, _ in layers)
    bidir = any(rev for _, rev in layers)
    for k in range(num_layers):
        for rev in ([False, True] if bidir else [False]):
            if (k, rev) not in layers:
                raise ValueError(f"{what}: no weights for layer {k}"
                                 + (" (reverse direction)" if rev else "")
                                 + f" (expected weight_ih_l{k}{'_reverse' if rev else ''}, ...)")
    first = layers[0, False]
    for name in ("weight_ih_l0", "weight_hh_l0"):
        if name not in first:
            raise ValueError(f"{what}: missing {name[:-3] if is_cell else name}; expected "
                             "weight_ih and weight_hh for every layer and direction")
    w = first["weight_ih_l0"]
    if w.ndim != 2 or w.shape[0] % G or first["weight_hh_l0"].ndim != 2:
        raise ValueError(f"{what}: weight_ih of layer 0 has shape {_shape(w)}; expected "
                         f"[{G}·hidden_size, input_size] for an nn.{kind} ({G} gates)"
                         + _looks_like(first, kind))
    hidden, input_size = w.shape[0] // G, w.shape[1]
    proj = first["weight_hr_l0"].shape[0] if "weight_hr_l0" in first else None
    if proj and kind != "LSTM":
        raise ValueError(f"{what}: weight_hr (proj_size) exists only for an LSTM")
    bias = "bias_ih_l0" in first
    out = proj or hidden
    D = 2 if bidir else 1
    for (k, rev), ws in sorted(layers.items()):
        sfx = "" if is_cell else f"_l{k}" + ("_reverse" if rev else "")
        names = ({"weight_ih_l0", "weight_hh_l0"}
                 | ({"bias_ih_l0", "bias_hh_l0"} if bias else set())
                 | ({"weight_hr_l0"} if proj else set()))
        if set(ws) != names:
            missing = sorted(n.replace("_l0", sfx) for n in names - set(ws))
            extra = sorted(n.replace("_l0", sfx) for n in set(ws) - names)
            raise ValueError(f"{what}: layer {k}{' reverse' if rev else ''}: "
                             + (f"missing {missing}" if missing else "")
                             + ("; " if missing and extra else "")
                             + (f"unexpected {extra}" if extra else "")
                             + " (every layer and direction needs the same weights as layer 0)")
        inp = input_size if k == 0 else D * out
        expect = {"weight_ih_l0": (G * hidden, inp), "weight_hh_l0": (G * hidden, out),
                  "bias_ih_l0": (G * hidden,), "bias_hh_l0": (G * hidden,),
                  "weight_hr_l0": (proj, hidden)}
        for n in ws:
            if ws[n].shape != expect[n]:
                raise ValueError(
                    f"{what}: {n.replace('_l0', sfx)} has shape {_shape(ws[n])}, expected "
                    f"[{', '.join(map(str, expect[n]))}] for an nn.{kind} with {G} "
                    f"gate{'s' if G > 1 else ''}, hidden_size {hidden}" + _looks_like(ws, kind))
    return num_layers, bidir, hidden, input_size, proj, bias, is_cell, layers


def _network_dtype(dtype, what):
    if dtype not in ("float32", "float64"):
        raise ValueError(f"{what}: dtype {dtype!r}: expected 'float32' or 'float64'")
    return dtype


def from_state_dict(state_dict, kind="LSTM", lengths=False, dtype="float32", prefix="",
                    nonlinearity="tanh"):
    """(Network, params) for the state_dict of an nn.LSTM, nn.GRU or nn.RNN
    (kind 'LSTM', 'GRU', 'RNN') or of its cell (nn.LSTMCell, ...: the keys
    weight_ih, weight_hh, bias_ih, bias_hh; kind 'LSTMCell' is the same as
    'LSTM'). `prefix` selects the RNN's entries of a whole model's
    checkpoint ('lstm.' for 'lstm.weight_ih_l0'); `nonlinearity` is nn.RNN's
    ('tanh' or 'relu'; the state_dict does not say). batch_first is a
    property of the call, not of the weights. Weights of any float dtype are
    converted to `dtype` ('float32' or 'float64')."""
    what = "from_state_dict"
    if kind in MODULES:
        kind = MODULES[kind][0]
    if kind not in GATE_ORDER:
        raise ValueError(f"{what}: kind {kind!r}: expected one of {sorted(MODULES)}")
    if kind == "RNN" and nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"{what}: nonlinearity {nonlinearity!r}: expected 'tanh' or 'relu'")
    dtype = _network_dtype(dtype, what)
    if not hasattr(state_dict, "items") or not hasattr(state_dict, "keys"):
        hint = "; for a module use lstmc.from_torch" if hasattr(state_dict, "state_dict") else ""
        raise TypeError(f"{what}: expected a state_dict (a mapping of names to tensors or "
                        f"arrays), got {type(state_dict).__name__}{hint}")
    if not isinstance(prefix, str):
        raise TypeError(f"{what}: prefix must be a str, got {type(prefix).__name__}")
    if prefix:
        sd = {k[len(prefix):]: v for k, v in state_dict.items()
              if isinstance(k, str) and k.startswith(prefix)}
        if not sd:
            cands = _candidate_prefixes(state_dict.keys())
            raise ValueError(f"{what}: no key starts with prefix {prefix!r}"
                             + (f"; the RNN weights are under {cands}" if cands else
                                f"; keys: {list(state_dict)[:8]}"))
    else:
        sd = dict(state_dict)
    sd = {k: _numpy(prefix + str(k), v) for k, v in sd.items()}
    layers, bidir, hidden, input_size, proj, bias, is_cell, weights = _infer(sd, kind, what)
    if is_cell and kind == "LSTM" and proj:
        raise ValueError(f"{what}: an LSTMCell has no projection")
    cell_opts = {"proj_size": proj} if proj else {}
    if kind == "RNN":
        cell_opts["nonlinearity"] = nonlinearity
    cell = {"LSTM": cells.lstm, "GRU": cells.gru, "RNN": cells.rnn}[kind]
    net = Network(cell, input_size=input_size, num_layers=layers,
                  direction="bidirectional" if bidir else "forward",
                  lengths=lengths, dtype=dtype, hidden=hidden, **cell_opts)
    torch_order, cell_order = GATE_ORDER[kind]
    params = {}
    G = len(torch_order)
    for k in range(layers):
        for rev in ([False, True] if bidir else [False]):
            ws = weights[k, rev]
            sfx = (str(k) if layers > 1 else "") + ("_rev" if rev else "")
            W, R = ws["weight_ih_l0"], ws["weight_hh_l0"]
            bW = ws["bias_ih_l0"] if bias else np.zeros(G * hidden, W.dtype)
            bR = ws["bias_hh_l0"] if bias else np.zeros(G * hidden, W.dtype)
            for name, a in (("W", W), ("R", R), ("bW", bW), ("bR", bR)):
                params[name + sfx] = _reorder(a, torch_order, cell_order).astype(dtype)
            if proj:
                params["Whr" + sfx] = ws["weight_hr_l0"].astype(dtype)
    shapes = net.param_shapes()
    if set(shapes) != set(params):
        raise ValueError(f"{what}: parameters {sorted(params)} do not match the network's "
                         f"{sorted(shapes)}")
    for name, shape in shapes.items():
        if params[name].shape != tuple(shape):
            raise ValueError(f"{what}: parameter {name} has shape {params[name].shape}, "
                             f"the network expects {tuple(shape)}")
    return net, params


def _module_kind(module):
    """('LSTM'|'GRU'|'RNN', is_cell) of a torch RNN module; TypeError else."""
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        for name, (kind, is_cell) in MODULES.items():
            if isinstance(module, getattr(torch.nn, name)):
                return kind, is_cell
    got = type(module).__name__
    hint = ""
    if torch is not None and isinstance(module, torch.nn.Module):
        subs = [n for n, m in module.named_modules() if n and
                isinstance(m, tuple(getattr(torch.nn, c) for c in MODULES))]
        if subs:
            hint = f" (its RNN submodules: {subs[:6]}; pass one of them)"
    raise TypeError(f"from_torch: expected {_EXPECTED_MODULES}, got {got}{hint}")


def _module_dtype(module, dtype):
    """The network's dtype for a module's parameters (float16/bfloat16 ->
    float32), or `dtype` if given."""
    params = list(module.parameters())
    if not params:
        raise ValueError("from_torch: the module has no parameters")
    got = str(params[0].dtype).replace("torch.", "")
    if got not in ("float16", "bfloat16", "float32", "float64"):
        raise ValueError(f"from_torch: parameters of dtype {got}: expected float16, bfloat16, "
                         "float32 or float64")
    if dtype is not None:
        return _network_dtype(dtype, "from_torch")
    return "float64" if got == "float64" else "float32"


def from_torch(module, lengths=False, dtype=None):
    """(Network, params) of an nn.LSTM, nn.GRU or nn.RNN module, or of an
    nn.LSTMCell / nn.GRUCell / nn.RNNCell (a one-layer network; call it with
    T = 1). The network's dtype is the module's (float64 stays float64,
    float16 and bfloat16 become float32), or `dtype`."""
    kind, is_cell = _module_kind(module)
    if not is_cell and getattr(module, "dropout", 0) and module.training \
            and module.num_layers > 1:
        raise ValueError("from_torch: dropout between layers is not supported (call .eval())")
    dtype = _module_dtype(module, dtype)
    nonlinearity = getattr(module, "nonlinearity", "tanh")
    return from_state_dict(module.state_dict(), kind, lengths=lengths, dtype=dtype,
                           nonlinearity=nonlinearity)


class TorchLike:
    """A compiled network called like the torch module it came from:
    f(x, hx=None) -> (y, h_n) for GRU and RNN, (y, (h_n, c_n)) for LSTM,
    with PyTorch's shapes ([L·D, B, H] states, batch_first if the module had
    it); for a cell, f(x [B, I] or [I], hx=None) -> h' (GRUCell, RNNCell) or
    (h', c') (LSTMCell); an unbatched sequence [T, I] with states
    [L·D, H] gives outputs without the batch dimension, as PyTorch's. Inputs
    and outputs are numpy arrays or CPU tensors (CPU), CUDA tensors (GPU);
    inputs of another float dtype (a float16 module's) are converted to the
    network's dtype, which the outputs have. What the module refuses is
    refused (TypeError, naming the argument): an LSTM's hx that is not a pair,
    another module's that is, integer inputs; a PackedSequence too (padded,
    with lengths, it is taken)."""

    def __init__(self, module, target="cpu", **compile_options):
        net, params = from_torch(module)
        self.kind, self.is_cell = _module_kind(module)
        self.batch_first = getattr(module, "batch_first", False)
        self.stacked = (not self.is_cell and
                        module.num_layers * (2 if module.bidirectional else 1) > 1)
        compiled = net.compile(target=target, **compile_options)
        if target == "cuda":
            # A GPU network takes its parameters as CUDA tensors too.
            import torch
            params = {k: torch.from_numpy(v).cuda() for k, v in params.items()}
        self.fn = compiled.bind(params)
        self.network = net

    def _as_dtype(self, a, what):
        """`a` in the network's dtype, if it is of a floating-point one
        (PyTorch's modules refuse integer inputs too)."""
        dtype = self.network.dtype
        if isinstance(a, np.ndarray):
            if not np.issubdtype(a.dtype, np.floating):
                raise TypeError(f"{what}: dtype {a.dtype}; expected a floating-point array")
            return a if a.dtype == dtype else a.astype(dtype)
        if hasattr(a, "dtype") and hasattr(a, "to"):
            if not getattr(a, "is_floating_point", lambda: True)():
                raise TypeError(f"{what}: dtype {a.dtype}; expected a floating-point tensor")
            if str(a.dtype) != "torch." + dtype:
                import torch
                return a.to(getattr(torch, dtype))
        return a

    def _states(self, hx):
        """hx as the module takes it: (h_0, c_0) for an LSTM, one tensor for
        the others."""
        if self.kind == "LSTM":
            if not (isinstance(hx, (tuple, list)) and len(hx) == 2):
                raise TypeError(f"hx: an LSTM's initial state is a tuple (h_0, c_0), got "
                                f"{type(hx).__name__}")
            return hx
        if isinstance(hx, (tuple, list)):
            raise TypeError(f"hx: a {self.kind}'s initial state is one tensor, got "
                            f"{type(hx).__name__}")
        return (hx,)

    def __call__(self, x, hx=None):
        if type(x).__name__ == "PackedSequence":
            raise TypeError("x: a PackedSequence is not taken; pad it "
                            "(torch.nn.utils.rnn.pad_packed_sequence) and compile the network "
                            "with per-sequence lengths (lstmc.Network(..., lengths=True))")
        x = self._as_dtype(x, "x")
        if self.is_cell:
            return self._call_cell(x, hx)
        # An unbatched sequence [T, I] (and states [L·D, H]), as PyTorch
        # takes it: a batch of one.
        unbatched = len(x.shape) == 2
        swap = (lambda a: a.transpose(1, 0, 2) if isinstance(a, np.ndarray)
                else a.transpose(0, 1).contiguous())
        if unbatched:
            x = x[:, None]
        elif self.batch_first:
            x = swap(x)
        states = {}
        if hx is not None:
            for name, h in zip(("h0", "c0"), self._states(hx)):
                h = self._as_dtype(h, "hx")
                if unbatched:
                    h = h[:, None]
                states[name] = h if self.stacked else h[0]
        outs = self.fn(x, **states)
        y, finals = outs[0], [f if self.stacked else f[None] for f in outs[1:]]
        if unbatched:
            y, finals = y[:, 0], [f[:, 0] for f in finals]
        elif self.batch_first:
            y = swap(y)
        return (y, tuple(finals)) if self.kind == "LSTM" else (y, finals[0])

    def _call_cell(self, x, hx):
        unbatched = len(x.shape) == 1
        x = x[None, None] if unbatched else x[None]
        states = {}
        if hx is not None:
            for name, h in zip(("h0", "c0"), self._states(hx)):
                h = self._as_dtype(h, "hx")
                states[name] = h[None] if unbatched else h
        finals = self.fn(x, **states)[1:]
        finals = [f[0] for f in finals] if unbatched else list(finals)
        return tuple(finals) if self.kind == "LSTM" else finals[0]
