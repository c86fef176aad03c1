# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""ONNX import: the LSTM, GRU and RNN nodes of an ONNX model as an lstmc
Network (lstm-dialect IR) and its parameters.

    net, params = lstmc.from_onnx("model.onnx")        # like lstmc.from_torch
    sess = lstmc.onnx_import.OnnxLike("model.onnx")    # called like onnxruntime
    y, y_h, y_c = sess.run(None, {"X": x})

    lstm-import-onnx model.onnx -o net.mlir [--params params.npz]
    python -m lstmc.onnx_import model.onnx -o net.mlir

What is accepted (docs/onnx.md has the details):

- One chain of LSTM, GRU and RNN nodes (opsets 1 to 22), each taking the
  previous one's output sequence: a stack, in one direction for all (forward,
  reverse or bidirectional), with one hidden size. Every attribute of the
  operators: direction, hidden_size, layout, clip, LSTM's input_forget and
  peepholes P, GRU's linear_before_reset, the activations and their
  activation_alpha / activation_beta (Sigmoid, Tanh, Relu, Affine,
  LeakyRelu, ScaledTanh, HardSigmoid, Elu and Softsign are built from the
  dialect's gates; ThresholdedRelu and Softplus cannot be and are refused
  naming the attribute); sequence_lens and initial states as graph inputs,
  slices of them, constants or zeros.
- Around the nodes, the layout and shape glue an exporter writes
  (Transpose, Reshape, Squeeze, Unsqueeze, Flatten, Slice, Gather, Concat,
  Shape, ConstantOfShape, Expand, Cast, Identity, Dropout in inference,
  constants, and the TopK / Gather / ScatterElements sort of
  torch.onnx.export's packed sequences): it is followed symbolically, so
  the graph inputs and outputs are mapped onto the network's arguments and
  results. Anything that computes on the data (MatMul, Add, Softmax, ...)
  is refused with an error naming the node and its op: run the rest of the
  model with onnxruntime, or cut the model first (onnx.utils.extract_model).

The importer is this module's OnnxImport; the cells are
_onnx_cells.py's, the symbolic values _onnx_values.py's and the handlers
of the glue ops _onnx_glue.py's.

Parsing uses the `onnx` package (the maintained parser of the format and
its reference evaluator, which folds the constant subgraphs); it is imported
on first use, so `import lstmc` does not need it.
"""
import argparse
import sys

import numpy as np

from .dsl import CellError
from ._onnx_cells import _ACT_DEFAULTS, _ACT_PARAMS, _ACT_UNSUPPORTED, _CELLS, _DEFAULT_ACTS, _Spec
from ._onnx_glue import _GlueOps
from ._onnx_values import (_DTYPES, _FLOAT_BITS, OnnxImportError, _Axis, _Const, _Fill,
                           _group_size, _materialise_view, _significant, _Source, _View)
from .network import Network
from .runtime import CallError


RNN_OPS = ("LSTM", "GRU", "RNN")
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_ATTRS = {"activation_alpha", "activation_beta", "activations", "clip", "direction",
          "hidden_size", "layout", "output_sequence"}
_KIND_ATTRS = {"LSTM": {"input_forget"}, "GRU": {"linear_before_reset"}, "RNN": set()}
#: ONNX's gate stacking and the cells' (lstmc.cells.lstm: i f g o, gru: r z n).
_ONNX_ORDER = {"LSTM": "iofg", "GRU": "zrn", "RNN": "h"}
_CELL_ORDER = {"LSTM": "ifgo", "GRU": "rzn", "RNN": "h"}


# ------------------------------------------------------------- the importer
_GLUE_OPS = ("Transpose, Reshape, Squeeze, Unsqueeze, Flatten, Slice, Gather, Concat, "
             "Shape, ConstantOfShape, Expand, Cast, Identity, Dropout, TopK, "
             "ScatterElements, Range, ReduceProd")


class _Layer:
    def __init__(self, node, where, kind, direction, hidden, input_size, specs, params,
                 layout):
        self.node, self.where, self.kind, self.direction = node, where, kind, direction
        self.hidden, self.input_size, self.specs, self.params = hidden, input_size, specs, params
        self.layout = layout
        self.D = 2 if direction == "bidirectional" else 1
        self.states = {}  # 'h'/'c' -> plan of the initial state
        self.lengths = None


class OnnxImport(_GlueOps):
    """The result of importing a model: `network` and `params` (what
    from_onnx returns), and how the model's inputs and outputs map onto the
    network's arguments and results (used by OnnxLike)."""

    def __init__(self, model):
        import onnx
        if isinstance(model, (str, bytes)) or hasattr(model, "__fspath__"):
            model = onnx.load(model) if not isinstance(model, bytes) else \
                onnx.load_from_string(model)
        if not isinstance(model, onnx.ModelProto):
            raise TypeError(f"from_onnx: expected an onnx.ModelProto or the path of an .onnx "
                            f"file, got {type(model).__name__}")
        self.model = model
        self.opset = {imp.domain or "": imp.version for imp in model.opset_import}
        self.values = {}
        self.layers = []
        self.sources = {}
        self.T = self.B = None
        self.x_plan = None
        self._perm_ids = 0
        self._run()

    # ---------------------------------------------------------- the graph
    def _run(self):
        g = self.model.graph
        inits = {t.name for t in g.initializer}
        import onnx.numpy_helper as nh
        for t in g.initializer:
            self.values[t.name] = _Const(nh.to_array(t))
        for vi in g.input:
            if vi.name in inits:
                continue
            self.values[vi.name] = self._graph_input(vi)
        for i, node in enumerate(self._topological(g)):
            self._node(i, node)
        if not self.layers:
            raise OnnxImportError("from_onnx: the model has no LSTM, GRU or RNN node")
        self._network()
        self.outputs = [(o.name, self._output_plan(o.name)) for o in g.output]
        self.input_names = [vi.name for vi in g.input if vi.name not in inits]
        self.output_names = [o.name for o in g.output]

    def _topological(self, g):
        known = set(self.values) | {""}
        pending, order = list(g.node), []
        while pending:
            rest = []
            for node in pending:
                if all(n in known for n in node.input):
                    order.append(node)
                    known.update(node.output)
                else:
                    rest.append(node)
            if len(rest) == len(pending):
                node = rest[0]
                missing = [n for n in node.input if n not in known]
                raise OnnxImportError(f"{self._where(node)}: input {missing[0]!r} is not "
                                      "produced by any node, initializer or graph input")
            pending = rest
        return order

    def _graph_input(self, vi):
        t = vi.type.tensor_type
        if not vi.type.HasField("tensor_type") or not t.HasField("shape"):
            raise OnnxImportError(f"from_onnx: graph input {vi.name!r} has no declared tensor "
                                  "shape")
        axes = [_Axis(f"{vi.name}:{i}", d.dim_value if d.HasField("dim_value") else None)
                for i, d in enumerate(t.shape.dim)]
        src = _Source("input", vi.name, axes)
        self.sources[vi.name] = src
        return _View(src, [(a,) for a in axes], _DTYPES.get(t.elem_type, str(t.elem_type)))

    @staticmethod
    def _where(node):
        name = repr(node.name) if node.name else f"(unnamed, output {node.output[0]!r})"
        return f"node {name} ({node.op_type})"

    def _attrs(self, node):
        from onnx import helper
        out = {}
        for a in node.attribute:
            v = helper.get_attribute_value(a)
            if isinstance(v, bytes):
                v = v.decode()
            elif isinstance(v, list):
                v = [x.decode() if isinstance(x, bytes) else x for x in v]
            out[a.name] = v
        return out

    def _node(self, index, node):
        where = self._where(node)
        if node.domain not in ("", "ai.onnx"):
            raise OnnxImportError(f"{where}: operators of domain {node.domain!r} are not "
                                  "imported")
        ins = [self.values[n] if n else None for n in node.input]
        if node.op_type in RNN_OPS:
            outs = self._rnn(node, where, ins)
        elif all(v is None or isinstance(v, _Const) for v in ins):
            outs = self._fold(node, where, ins)
        else:
            handler = getattr(self, "_op_" + node.op_type, None)
            if handler is None:
                raise OnnxImportError(
                    f"{where}: from_onnx imports LSTM, GRU and RNN nodes and the layout glue "
                    f"around them ({_GLUE_OPS}, constants); {node.op_type} computes on the "
                    "data: run it with onnxruntime, or cut the model to the recurrent part "
                    "(onnx.utils.extract_model)")
            outs = handler(node, where, ins, self._attrs(node))
            outs = outs if isinstance(outs, list) else [outs]
        for name, v in zip(node.output, outs):
            if name:
                self.values[name] = v

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

    # --------------------------------------------------------- the network
    def _network(self):
        first = self.layers[0]
        for layer in self.layers[1:]:
            if layer.direction != first.direction:
                raise OnnxImportError(f"{layer.where}: direction {layer.direction}, but "
                                      f"{first.where} is {first.direction}: a network has one "
                                      "direction")
            if set(layer.states) != set(first.states):
                raise OnnxImportError(f"{layer.where}: an {layer.kind} after an {first.kind}: "
                                      "the layers of a network have the same states")
            if layer.hidden != first.hidden:
                raise OnnxImportError(f"{layer.where}: hidden_size {layer.hidden}, but "
                                      f"{first.where} has {first.hidden}")
        L, D = len(self.layers), first.D
        direction = first.direction
        dirs = ["forward", "reverse"] if D == 2 else [direction]
        specs, params = {}, {}
        for k, layer in enumerate(self.layers):
            for j, d in enumerate(dirs):
                sfx = (str(k) if L > 1 else "") + ("_rev" if D == 2 and d == "reverse" else "")
                specs[sfx] = layer.specs[j]
                for n, a in layer.params[j].items():
                    params[n + sfx] = a

        def cell(c, x):
            spec = specs[c.suffix]
            return _CELLS[spec.kind](c, x, spec)
        cell.__name__ = "onnx_" + "_".join(sorted({layer.kind.lower() for layer in self.layers}))
        self.network = Network(cell, input_size=first.input_size, num_layers=L,
                               direction=direction, lengths=first.lengths is not None,
                               dtype=first.dtype)
        shapes = self.network.param_shapes()
        if set(shapes) != set(params):  # an internal inconsistency, not the model's
            raise OnnxImportError(f"from_onnx: parameters {sorted(params)} do not match the "
                                  f"network's {sorted(shapes)}")
        self.params = params
        self.state_names = [s for s, _ in self.network.state_sizes]

    def _output_plan(self, name):
        v = self.values.get(name)
        if isinstance(v, _Const):
            return ("const", v.value)
        if isinstance(v, _View):
            if v.perms:
                raise OnnxImportError(f"from_onnx: graph output {name!r} stays permuted by a "
                                      "sort of the batch that the graph does not undo")
            if v.src.kind == "y":
                if v.src.layer != len(self.layers) - 1:
                    raise OnnxImportError(
                        f"from_onnx: graph output {name!r} is the output sequence of "
                        f"{self.layers[v.src.layer].where}, which is not the last node of the "
                        "stack: the network returns the last layer's sequence and the final "
                        "states")
                return ("y", v.src, v.dims)
            if v.src.kind == "state":
                return ("state", v.src, v.dims)
            return ("input", v.src, v.dims)
        raise OnnxImportError(f"from_onnx: graph output {name!r} is not computed from the "
                              "RNN nodes by layout glue")

    # ------------------------------------------------------------ calling
    def arguments(self, feeds):
        """The network's arguments (dict) for the model's input feeds."""
        net, first = self.network, self.layers[0]
        dtype = net.dtype

        def feed(src, dims, what):
            if src.name not in feeds:
                raise CallError(f"missing input {src.name!r} ({what})")
            return _materialise_view(feeds[src.name], src.axes, dims, f"input {src.name!r}")
        src, dims = self.x_plan
        x = np.ascontiguousarray(feed(src, dims, "X of the first node"), dtype)
        B = x.shape[1]
        args = {"x": x}
        if first.lengths is not None:
            plan = first.lengths
            lengths = plan[1] if plan[0] == "const" else feed(plan[1], plan[2], "sequence_lens")
            args["lengths"] = np.ascontiguousarray(lengths, np.int32)
        L, D, H = len(self.layers), first.D, first.hidden
        for s in self.state_names:
            pieces, given = [], False
            for layer in self.layers:
                plan = layer.states[s]
                if plan[0] == "fill":
                    given |= plan[1] != 0.0
                    pieces.append(np.full((D, B, H), plan[1], dtype))
                elif plan[0] == "const":
                    given = True
                    if plan[1].shape[1] != B:
                        raise CallError(f"the constant initial state {s} of {layer.where} has "
                                        f"batch {plan[1].shape[1]}, input X has {B}")
                    pieces.append(plan[1].astype(dtype))
                else:
                    given = True
                    pieces.append(feed(plan[1], plan[2], f"initial state {s} of {layer.where}"))
            if given:
                a = np.ascontiguousarray(np.concatenate(pieces, axis=0), dtype)
                args[s + "0"] = a if L * D > 1 else a[0]
        return args

    def outputs_of(self, results, feeds, names=None):
        """The model's outputs (list, in `names`' order or the graph's) from
        the network's results."""
        L, D = len(self.layers), self.layers[0].D
        y = np.asarray(results[0])
        T, B = y.shape[0], y.shape[1]
        ys = y.reshape(T, B, D, -1)
        finals = {}
        for s, r in zip(self.state_names, results[1:]):
            r = np.asarray(r)
            finals[s] = r.reshape(L * D, B, -1)
        plans = dict(self.outputs)
        out = []
        for name in (names or self.output_names):
            if name not in plans:
                raise CallError(f"unknown output {name!r} (the model's: {self.output_names})")
            plan = plans[name]
            if plan[0] == "const":
                out.append(plan[1])
            elif plan[0] == "y":
                out.append(_materialise_view(ys, plan[1].axes, plan[2], f"output {name!r}"))
            elif plan[0] == "state":
                out.append(_materialise_view(finals[plan[1].name], plan[1].axes, plan[2],
                                             f"output {name!r}"))
            else:
                out.append(_materialise_view(feeds[plan[1].name], plan[1].axes, plan[2],
                                             f"output {name!r}"))
        return out


def _reorder(a, onnx_order, cell_order):
    blocks = dict(zip(onnx_order, np.split(a, len(onnx_order), axis=0)))
    return np.concatenate([blocks[g] for g in cell_order], axis=0)


def _drop_block(a, n, k):
    blocks = np.split(a, n, axis=0)
    return np.concatenate(blocks[:k] + blocks[k + 1:], axis=0)


def from_onnx(model):
    """(Network, params) of the LSTM / GRU / RNN stack of an ONNX model (an
    onnx.ModelProto, the path of an .onnx file, or its bytes); see the
    module's docstring and docs/onnx.md for what is accepted. The network's
    arguments are lstmc's (x [T, B, I], lengths, h0 / c0 [L·D, B, H] or
    [B, H], the parameters); OnnxLike calls it with the model's inputs."""
    imp = OnnxImport(model)
    return imp.network, imp.params


class OnnxLike:
    """A compiled ONNX model called like an onnxruntime.InferenceSession:
    run(output_names, input_feed) -> list of numpy arrays, in the model's
    layouts (inputs and outputs as the graph declares them)."""

    def __init__(self, model, target="cpu", **compile_options):
        self.imported = OnnxImport(model)
        self.network = self.imported.network
        self.fn = self.network.compile(target=target, **compile_options).bind(
            self.imported.params)

    def get_inputs(self):
        return list(self.imported.input_names)

    def get_outputs(self):
        return list(self.imported.output_names)

    def run(self, output_names, input_feed):
        unknown = set(input_feed) - set(self.imported.input_names)
        if unknown:
            raise CallError(f"unknown input(s) {sorted(unknown)} (the model's: "
                            f"{self.imported.input_names})")
        feeds = {k: np.asarray(v) for k, v in input_feed.items()}
        args = self.imported.arguments(feeds)
        results = self.fn(**args)
        return self.imported.outputs_of(results, feeds, output_names)


# --------------------------------------------------------------- the tool
def main(argv=None):
    """lstm-import-onnx model.onnx -o net.mlir [--params params.npz]"""
    ap = argparse.ArgumentParser(
        prog="lstm-import-onnx",
        description="Import the LSTM / GRU / RNN stack of an ONNX model as lstm-dialect IR "
                    "(a func.func taking x [T, B, I], lengths, the initial states and the "
                    "parameters; see docs/onnx.md).")
    ap.add_argument("model", help="the .onnx file")
    ap.add_argument("-o", "--output", default="-", help="the .mlir file to write (default: stdout)")
    ap.add_argument("--params", help="also write the parameters to this .npz (one array per "
                                     "parameter argument, by name)")
    ap.add_argument("--npy-dir", help="also write each parameter as DIR/<name>.npy (for "
                                      "lstm-run --inputs)")
    ap.add_argument("--verify", action="store_true",
                    help="parse and verify the IR with the compiler (needs lstmc's extension)")
    args = ap.parse_args(argv)
    try:
        net, params = from_onnx(args.model)
        if args.verify:
            net.verify()
    except (OnnxImportError, CellError, OSError) as e:
        print(f"lstm-import-onnx: error: {e}", file=sys.stderr)
        return 1
    except Exception as e:  # onnx's own parse errors
        if type(e).__name__ in ("DecodeError", "ValidationError"):
            print(f"lstm-import-onnx: error: {args.model}: {e}", file=sys.stderr)
            return 1
        raise
    if args.output == "-":
        sys.stdout.write(net.ir)
    else:
        with open(args.output, "w") as f:
            f.write(net.ir)
    if args.params:
        np.savez(args.params, **params)
    if args.npy_dir:
        import os
        os.makedirs(args.npy_dir, exist_ok=True)
        for name, a in params.items():
            np.save(os.path.join(args.npy_dir, name + ".npy"), a)
    sig = ", ".join(f"{a.name} {list(a.shape)}" for a in net.args)
    res = ", ".join(f"{a.name} {list(a.shape)}" for a in net.results)
    print(f"lstm-import-onnx: @{net.entry}({sig}) -> ({res})", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
