# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The RNN nodes of an ONNX model (LSTM, GRU, RNN) as the layers of the
network: their attributes and weights checked and put in the cells' gate
order, and their inputs X, sequence_lens and initial states bound to the
graph's inputs (or constants); the _rnn handler of OnnxImport and what it
uses, a mixin separate from the graph walk (onnx_import.py), the network
built from the layers (_onnx_network.py) and the glue ops (_onnx_glue.py)."""
import numpy as np

from ._onnx_cells import _ACT_DEFAULTS, _ACT_PARAMS, _ACT_UNSUPPORTED, _DEFAULT_ACTS, _Spec
from ._onnx_values import (_FLOAT_BITS, OnnxImportError, _Axis, _Const, _Fill, _group_size,
                           _significant, _Source, _View)


_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_ATTRS = {"activation_alpha", "activation_beta", "activations", "clip", "direction",
          "hidden_size", "layout", "output_sequence"}
_KIND_ATTRS = {"LSTM": {"input_forget"}, "GRU": {"linear_before_reset"}, "RNN": set()}
#: ONNX's gate stacking and the cells' (lstmc.cells.lstm: i f g o, gru: r z n).
_ONNX_ORDER = {"LSTM": "iofg", "GRU": "zrn", "RNN": "h"}
_CELL_ORDER = {"LSTM": "ifgo", "GRU": "rzn", "RNN": "h"}


class _Layer:
    def __init__(self, node, where, kind, direction, hidden, input_size, specs, params,
                 layout):
        self.node, self.where, self.kind, self.direction = node, where, kind, direction
        self.hidden, self.input_size, self.specs, self.params = hidden, input_size, specs, params
        self.layout = layout
        self.D = 2 if direction == "bidirectional" else 1
        self.states = {}  # 'h'/'c' -> plan of the initial state
        self.lengths = None


class _LayerOps:
    """OnnxImport's handling of the RNN nodes (a mixin: it uses its values,
    sources and layers)."""

    # ---------------------------------------------------------- RNN nodes
    def _rnn(self, node, where, ins):
        kind = node.op_type
        attrs = self._attrs(node)
        unknown = set(attrs) - _ATTRS - _KIND_ATTRS[kind]
        if unknown:
            raise OnnxImportError(f"{where}: unknown attribute(s) {sorted(unknown)}")
        G = _GATES[kind]
        names = ["X", "W", "R", "B", "sequence_lens", "initial_h"] + \
            (["initial_c", "P"] if kind == "LSTM" else [])
        ins = (ins + [None] * len(names))[:len(names)]
        if len(node.input) > len(names):
            raise OnnxImportError(f"{where}: {len(node.input)} inputs, at most {len(names)}")
        v = dict(zip(names, ins))
        direction = attrs.get("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise OnnxImportError(f"{where}: direction {direction!r}: expected forward, reverse "
                                  "or bidirectional")
        D = 2 if direction == "bidirectional" else 1
        layout = attrs.get("layout", 0)
        if layout not in (0, 1):
            raise OnnxImportError(f"{where}: layout {layout}: expected 0 or 1")
        for name in ("W", "R", "B", "P"):
            if v.get(name) is not None and not isinstance(v[name], _Const):
                raise OnnxImportError(f"{where}: input {name} must be an initializer or a "
                                      "constant (the weights are the network's parameters)")
        if v["W"] is None or v["R"] is None:
            raise OnnxImportError(f"{where}: inputs W and R are required")
        W, R = v["W"].value, v["R"].value
        dtype = str(W.dtype)
        if dtype not in ("float32", "float64"):
            raise OnnxImportError(f"{where}: W has dtype {dtype}: from_onnx imports float32 and "
                                  "float64 networks")
        if W.ndim != 3 or W.shape[0] != D or W.shape[1] % G:
            raise OnnxImportError(f"{where}: W has shape {list(W.shape)}, expected "
                                  f"[num_directions={D}, {G}·hidden_size, input_size]")
        H = W.shape[1] // G
        I = W.shape[2]
        if attrs.get("hidden_size", H) != H:
            raise OnnxImportError(f"{where}: hidden_size {attrs['hidden_size']} but W has "
                                  f"{W.shape[1]} rows ({G}·{H})")
        expect = {"R": (D, G * H, H), "B": (D, 2 * G * H), "P": (D, 3 * H)}
        for name, shape in expect.items():
            a = v.get(name)
            if a is not None and tuple(a.value.shape) != shape:
                raise OnnxImportError(f"{where}: {name} has shape {list(a.value.shape)}, "
                                      f"expected {list(shape)}")
        clip = attrs.get("clip")
        if clip is not None and not clip > 0:
            raise OnnxImportError(f"{where}: clip {clip}: expected a positive threshold")
        input_forget = bool(attrs.get("input_forget", 0))
        lbr = bool(attrs.get("linear_before_reset", 0))
        acts = self._activations(where, kind, attrs, D)
        peephole = v.get("P") is not None
        # Parameters, per direction, in the cells' gate order.
        params, specs = [], []
        for d in range(D):
            bias = v["B"].value[d] if v["B"] is not None else np.zeros(2 * G * H, W.dtype)
            p = {"W": W[d], "R": R[d], "bW": bias[:G * H], "bR": bias[G * H:]}
            p = {n: _reorder(a, _ONNX_ORDER[kind], _CELL_ORDER[kind]) for n, a in p.items()}
            if kind == "LSTM" and input_forget:
                p = {n: _drop_block(a, 4, 1) for n, a in p.items()}  # no f
            if peephole:
                rows = dict(zip("iof", np.split(v["P"].value[d], 3)))
                p["P"] = np.stack([rows[g] for g in ("io" if input_forget else "ifo")])
            params.append({n: np.ascontiguousarray(a, dtype) for n, a in p.items()})
            specs.append(_Spec(kind, H, acts[d], clip, peephole, input_forget, lbr))
        layer = _Layer(node, where, kind, direction, H, I, specs, params, layout)
        layer.dtype = dtype
        self._bind_input(layer, v["X"])
        k = len(self.layers)
        self.layers.append(layer)
        layer.lengths = self._bind_lengths(layer, v["sequence_lens"])
        for s, name in (("h", "initial_h"), ("c", "initial_c")):
            if kind == "LSTM" or s == "h":
                layer.states[s] = self._bind_state(layer, v.get(name), name)
        # The outputs: Y [T, D, B, H] (layout 1: [B, T, D, H]), Y_h, Y_c.
        Dax, Hax = _Axis(f"D{k}", D), _Axis(f"H{k}", H)
        ysrc = _Source("y", f"Y of {where}", [self.T, self.B, Dax, Hax], layer=k)
        ydims = ([(self.T,), (Dax,), (self.B,), (Hax,)] if layout == 0 else
                 [(self.B,), (self.T,), (Dax,), (Hax,)])
        outs = [_View(ysrc, ydims, dtype, layer.perms)]
        layer.y_axes = (Dax, Hax)
        for s in ("h", "c") if kind == "LSTM" else ("h",):
            src = self._state_source(s, H)
            rows = src.axes[0].sub(k * D, D)
            dims = ([(rows,), (self.B,), (src.axes[2],)] if layout == 0 else
                    [(self.B,), (rows,), (src.axes[2],)])
            outs.append(_View(src, dims, dtype, layer.perms))
        return outs

    def _state_source(self, s, H):
        key = "state:" + s
        if key not in self.sources:
            self.sources[key] = _Source("state", s, [_Axis("L·D", None), self.B, _Axis("H", H)])
        src = self.sources[key]
        if src.axes[2].size != H:
            raise OnnxImportError(f"{self.layers[-1].where}: hidden_size {H}, but an earlier "
                                  f"node of the stack has {src.axes[2].size}: a network has "
                                  "one hidden size")
        return src

    def _activations(self, where, kind, attrs, D):
        n = len(_DEFAULT_ACTS[kind])
        names = attrs.get("activations")
        if names is None:
            names = list(_DEFAULT_ACTS[kind]) * D
        names = list(names)
        if kind == "RNN" and D == 1 and len(names) == 2:
            names = names[:1]  # the spec's default ["Tanh", "Tanh"]; onnxruntime uses the first
        if len(names) != n * D:
            raise OnnxImportError(f"{where}: attribute activations has {len(names)} functions; "
                                  f"expected {n * D} ({n} per direction: "
                                  f"{', '.join('fgh'[:n])})")
        alphas = list(attrs.get("activation_alpha", []))
        betas = list(attrs.get("activation_beta", []))
        canon = {a.lower(): a for a in _ACT_PARAMS}
        out = []
        for name in names:
            c = canon.get(str(name).lower())
            if c is None:
                raise OnnxImportError(f"{where}: attribute activations: unknown function "
                                      f"{name!r} (the spec's: {', '.join(_ACT_PARAMS)})")
            if c in _ACT_UNSUPPORTED:
                raise OnnxImportError(f"{where}: attribute activations: {c} cannot be expressed "
                                      f"in the lstm dialect: {_ACT_UNSUPPORTED[c]}")
            vals = {}
            for p, lst in (("alpha", alphas), ("beta", betas)):
                if p not in _ACT_PARAMS[c]:
                    continue
                if lst:
                    vals[p] = float(lst.pop(0))
                elif (c, p) in _ACT_DEFAULTS:
                    vals[p] = _ACT_DEFAULTS[c, p]
                else:
                    raise OnnxImportError(f"{where}: attribute activation_{p}: {c} needs a "
                                          f"value (the spec gives it no default)")
            out.append((c, vals.get("alpha"), vals.get("beta")))
        for p, lst in (("alpha", alphas), ("beta", betas)):
            if lst:
                raise OnnxImportError(f"{where}: attribute activation_{p} has {len(lst)} "
                                      f"value(s) that no activation of {names} takes")
        return [out[d * n:(d + 1) * n] for d in range(D)]

    def _bind_input(self, layer, X):
        """The node's input sequence: a graph input (the first layer) or the
        previous layer's output, [T, B, I] (layout 1: [B, T, I])."""
        where = layer.where
        if not isinstance(X, _View) or len(X.dims) != 3:
            raise OnnxImportError(f"{where}: input X must be a [T, B, I] tensor computed by "
                                  "layout glue from a graph input or from the previous "
                                  "RNN node's output")
        tdim, bdim, idim = X.dims if layer.layout == 0 else (X.dims[1], X.dims[0], X.dims[2])
        if X.narrowed or _FLOAT_BITS.get(X.dtype, 0) < _FLOAT_BITS[layer.dtype] or \
                X.dtype != layer.dtype:
            raise OnnxImportError(f"{where}: input X is {X.dtype}"
                                  + (" after a rounding cast" if X.narrowed else "")
                                  + f", W is {layer.dtype}")
        if X.src.kind == "input":
            if self.layers:
                raise OnnxImportError(
                    f"{where}: its input X comes from graph input {X.src.name!r}, but "
                    f"{self.layers[0].where} already starts a stack: from_onnx imports one "
                    "chain of RNN nodes")

            def axis(group, name):
                sig = [a for a in group if a.size != 1]
                if len(sig) > 1:
                    raise OnnxImportError(f"{where}: the {name} extent of X merges several "
                                          "extents of the graph input")
                return sig[0] if sig else _Axis(name, 1)
            self.T, self.B = axis(tdim, "T"), axis(bdim, "B")
            size = _group_size(idim)
            if size.known() not in (None, layer.input_size) or (size.syms and size.coef != 1):
                raise OnnxImportError(f"{where}: X has {size.coef} features, W expects "
                                      f"{layer.input_size}")
            self.x_plan = (X.src, [tdim, bdim, idim])
        elif X.src.kind == "y":
            prev = self.layers[-1] if self.layers else None
            if prev is None or X.src.layer != len(self.layers) - 1:
                raise OnnxImportError(f"{where}: its input X is the output of an earlier node "
                                      "that another node already continues: from_onnx "
                                      "imports one chain, not a branching graph")
            Dax, Hax = prev.y_axes
            want = [(self.T,), (self.B,), (Dax, Hax)]
            if [_significant(g) for g in (tdim, bdim, idim)] != [_significant(g) for g in want]:
                raise OnnxImportError(
                    f"{where}: its input X is the output Y of {prev.where} rearranged as "
                    f"[{self._dims_text(X.dims)}], not as the sequence [T, B, D·H]"
                    + (" ([B, T, D·H] for layout 1)" if layer.layout else ""))
        else:
            raise OnnxImportError(f"{where}: input X is a final state, not a sequence")
        for pid, inv, key in X.perms:
            if key != (_significant(bdim) or (None,))[0]:
                raise OnnxImportError(f"{where}: input X is permuted along another axis than "
                                      "the batch")
        layer.perms = X.perms

    @staticmethod
    def _dims_text(dims):
        return ", ".join("·".join(map(repr, g)) or "1" for g in dims)

    def _check_perms(self, layer, v, bgroup, name):
        if [(p, i) for p, i, _ in v.perms] != [(p, i) for p, i, _ in layer.perms]:
            raise OnnxImportError(f"{layer.where}: input {name} is not in the batch order of "
                                  "input X (a different permutation of the batch)")
        key = (_significant(bgroup) or (None,))[0]
        if any(k != key for _, _, k in v.perms):
            raise OnnxImportError(f"{layer.where}: input {name} is permuted along another "
                                  "axis than the batch")

    def _bind_lengths(self, layer, v):
        where = layer.where
        if v is None:
            plan = None
        elif isinstance(v, _Const):
            if v.value.ndim != 1:
                raise OnnxImportError(f"{where}: sequence_lens must be [B]")
            plan = ("const", v.value.astype(np.int32))
        elif isinstance(v, _View) and len(v.dims) == 1:
            if v.src.kind != "input" or _FLOAT_BITS.get(v.dtype):
                raise OnnxImportError(f"{where}: sequence_lens must be integers from a graph "
                                      "input or a constant")
            self._check_perms(layer, v, v.dims[0], "sequence_lens")
            plan = ("input", v.src, v.dims)
        else:
            raise OnnxImportError(f"{where}: sequence_lens must be [B], from a graph input or "
                                  "a constant")
        if self.layers[:-1]:
            first = self.layers[0].lengths
            same = (first is None and plan is None) or (
                first is not None and plan is not None and first[0] == plan[0] and
                (first[1] is plan[1] if plan[0] == "input" else np.array_equal(first[1], plan[1])))
            if not same:
                raise OnnxImportError(f"{where}: sequence_lens differs from that of "
                                      f"{self.layers[0].where}: the nodes of a stack share "
                                      "one sequence_lens")
        return plan

    def _bind_state(self, layer, v, name):
        where, D, H = layer.where, layer.D, layer.hidden
        if v is None:
            return ("fill", 0.0)
        if isinstance(v, _Fill):
            return ("fill", v.value)
        if isinstance(v, _Const):
            a = v.value if layer.layout == 0 else np.swapaxes(v.value, 0, 1)
            if a.ndim != 3 or a.shape[0] != D or a.shape[2] != H:
                raise OnnxImportError(f"{where}: {name} has shape {list(v.value.shape)}, "
                                      f"expected [{D}, B, {H}]")
            return ("const", a)
        if isinstance(v, _View) and v.src.kind == "input" and len(v.dims) == 3:
            rows, b, h = v.dims if layer.layout == 0 else (v.dims[1], v.dims[0], v.dims[2])
            for g, n, what in ((rows, D, "num_directions"), (h, H, "hidden_size")):
                if _group_size(g).known() not in (None, n):
                    raise OnnxImportError(f"{where}: {name} has {_group_size(g).coef} rows "
                                          f"along {what}, expected {n}")
            if v.narrowed or v.dtype != layer.dtype:
                raise OnnxImportError(f"{where}: {name} is {v.dtype}, W is {layer.dtype}")
            self._check_perms(layer, v, b, name)
            return ("input", v.src, [rows, b, h])
        if isinstance(v, _View) and v.src.kind == "state":
            raise OnnxImportError(f"{where}: {name} is the final state of another node: a "
                                  "stack's layers start from their own initial states")
        raise OnnxImportError(f"{where}: {name} must be a graph input (or a slice of one), a "
                              "constant or zeros")


def _reorder(a, onnx_order, cell_order):
    blocks = dict(zip(onnx_order, np.split(a, len(onnx_order), axis=0)))
    return np.concatenate([blocks[g] for g in cell_order], axis=0)


def _drop_block(a, n, k):
    blocks = np.split(a, n, axis=0)
    return np.concatenate(blocks[:k] + blocks[k + 1:], axis=0)
