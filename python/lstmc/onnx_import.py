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

Parsing uses the `onnx` package (the maintained parser of the format and
its reference evaluator, which folds the constant subgraphs); it is imported
on first use, so `import lstmc` does not need it.
"""
import argparse
import sys

import numpy as np

from .dsl import Affine, CellError, Value, exp, linear, one_minus, relu, sigmoid, tanh
from .dsl import _unary
from .network import Network
from .runtime import CallError


class OnnxImportError(ValueError):
    """A model (or part of it) that from_onnx cannot import: names the node,
    its op and the attribute or input."""


RNN_OPS = ("LSTM", "GRU", "RNN")
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
_ATTRS = {"activation_alpha", "activation_beta", "activations", "clip", "direction",
          "hidden_size", "layout", "output_sequence"}
_KIND_ATTRS = {"LSTM": {"input_forget"}, "GRU": {"linear_before_reset"}, "RNN": set()}
#: ONNX's gate stacking and the cells' (lstmc.cells.lstm: i f g o, gru: r z n).
_ONNX_ORDER = {"LSTM": "iofg", "GRU": "zrn", "RNN": "h"}
_CELL_ORDER = {"LSTM": "ifgo", "GRU": "rzn", "RNN": "h"}

# ---------------------------------------------------------------- activations
#: Activation functions of the spec, the parameters each consumes from
#: activation_alpha / activation_beta, and the defaults the spec gives.
_ACT_PARAMS = {"Relu": (), "Tanh": (), "Sigmoid": (), "Affine": ("alpha", "beta"),
               "LeakyRelu": ("alpha",), "ThresholdedRelu": ("alpha",),
               "ScaledTanh": ("alpha", "beta"), "HardSigmoid": ("alpha", "beta"),
               "Elu": ("alpha",), "Softsign": (), "Softplus": ()}
_ACT_DEFAULTS = {("LeakyRelu", "alpha"): 0.01, ("HardSigmoid", "alpha"): 0.2,
                 ("HardSigmoid", "beta"): 0.5, ("Elu", "alpha"): 1.0}
_ACT_UNSUPPORTED = {
    "ThresholdedRelu": "x if x > alpha else 0 is a step, and every op of the dialect's cells "
                       "(sigmoid, tanh, relu and identity gates; add, sub, mul, tanh, exp, "
                       "rsqrt) is continuous",
    "Softplus": "log(1 + e^x) needs a logarithm, which the dialect's cells do not have "
                "(sigmoid, tanh, relu and identity gates; add, sub, mul, tanh, exp, rsqrt)",
}
_DEFAULT_ACTS = {"LSTM": ("Sigmoid", "Tanh", "Tanh"), "GRU": ("Sigmoid", "Tanh"),
                 "RNN": ("Tanh",)}


class _CellOps:
    """The spec's activations and clip from the DSL's primitives, on one
    cell's emitter (constants are function-level arith.constant)."""

    def __init__(self, c):
        self.em = c.em
        self.consts = {}

    def const(self, value, n):
        from .dsl import Param
        key = (float(value), n)
        if key not in self.consts:
            em = self.em
            p = Param(em, em.fresh("onnx_const"), (n,))
            em.emit(f"{p.name} = arith.constant dense<{float(value):.17e}> : {p.type}",
                    "onnx constant", top=True)
            self.consts[key] = p
        return self.consts[key]

    def scaled(self, u, alpha=1.0, beta=0.0):
        """alpha * u + beta as a pre-activation (u + (alpha - 1) ⊙ u + beta)."""
        n = u.size
        return Affine(self.em, addends=[u],
                      biases=[self.const(beta, n)] if beta else [],
                      peephole=(self.const(alpha - 1.0, n), u) if alpha != 1.0 else None)

    def clip(self, pre, t):
        """min(max(pre, -t), t) = u - relu(u - t) + relu(-u - t): exact
        inside the range."""
        u = _materialise(pre)
        above = relu(Affine(self.em, addends=[u], biases=[self.const(-t, u.size)]))
        below = relu(Affine(self.em, addends=[u], biases=[self.const(-t, u.size)],
                            peephole=(self.const(-2.0, u.size), u)))
        return (u - above) + below

    def activate(self, act, pre, clip=None):
        name, alpha, beta = act
        if clip is not None:
            pre = self.clip(pre, clip)
        if name == "Sigmoid":
            return sigmoid(pre)
        if name == "Tanh":
            return tanh(pre)
        if name == "Relu":
            return relu(pre)
        u = _materialise(pre)
        if name == "Affine":
            return linear(self.scaled(u, alpha, beta))
        if name == "LeakyRelu":  # relu(u) + alpha * min(u, 0)
            r = relu(u)
            return linear(Affine(self.em, addends=[r], peephole=(self.const(alpha, u.size),
                                                                 u - r)))
        if name == "ScaledTanh":
            t = tanh(self.scaled(u, beta))
            return t if alpha == 1.0 else linear(self.scaled(t, alpha))
        if name == "HardSigmoid":  # clamp(s, 0, 1) = relu(s) - relu(s - 1)
            return relu(self.scaled(u, alpha, beta)) - relu(self.scaled(u, alpha, beta - 1.0))
        if name == "Elu":  # relu(u) - alpha * (1 - exp(min(u, 0)))
            r = relu(u)
            e = one_minus(exp(u - r))
            return linear(Affine(self.em, addends=[r], peephole=(self.const(-alpha, u.size), e)))
        if name == "Softsign":  # u / (1 + |u|), 1/y = rsqrt(y)^2
            r = relu(u)
            y = linear(Affine(self.em, addends=[r + (r - u)], biases=[self.const(1.0, u.size)]))
            q = _unary("math.rsqrt", y, "softsign")
            return u * (q * q)
        raise CellError(f"activation {name!r}")  # parsed before: unreachable


def _materialise(pre):
    return pre if isinstance(pre, Value) else linear(pre)


def _stacked(c, x, h, gates, hidden):
    G = len(gates)
    W, R = c.param("W", G * hidden, x.size), c.param("R", G * hidden, h.size)
    bW, bR = c.param("bW", G * hidden), c.param("bR", G * hidden)
    return dict(zip(gates, zip(W.split(G), R.split(G), bW.split(G), bR.split(G))))


def _lstm_cell(c, x, spec):
    """ONNX LSTM (VARIANTS.md's peephole LSTM with the gates i, f, g, o of
    lstmc.cells.lstm; input_forget: f = 1 - i; the peephole of o reads c_t)."""
    ops, H = _CellOps(c), spec.hidden
    h, cs = c.state("h", H), c.state("c", H)
    gates = "igo" if spec.input_forget else "ifgo"
    p = _stacked(c, x, h, gates, H)
    peeps = [g for g in gates if g != "g"] if spec.peephole else []
    P = dict(zip(peeps, c.param("P", len(peeps), H).rows())) if peeps else {}

    def pre(g, cell=None):
        W, R, bW, bR = p[g]
        a = x @ W + h @ R + bW + bR
        return a + P[g] * cell if g in P else a

    f_act, g_act, h_act = spec.acts
    i = ops.activate(f_act, pre("i", cs), spec.clip)
    f = one_minus(i) if spec.input_forget else ops.activate(f_act, pre("f", cs), spec.clip)
    g = ops.activate(g_act, pre("g"), spec.clip)
    ig = i * g
    fc = f * cs
    c_new = fc + ig
    o = ops.activate(f_act, pre("o", c_new), spec.clip)
    h_new = o * ops.activate(h_act, c_new)
    return h_new, {"h": h_new, "c": c_new}


def _gru_cell(c, x, spec):
    """ONNX GRU: linear_before_reset=1 is nn.GRU (lstmc.cells.gru), 0 Cho's
    GRU (lstmc.cells.cho_gru); gates r, z, n."""
    ops, H = _CellOps(c), spec.hidden
    h = c.state("h", H)
    p = _stacked(c, x, h, "rzn", H)
    (Wr, Rr, bWr, bRr), (Wz, Rz, bWz, bRz), (Wn, Rn, bWn, bRn) = p["r"], p["z"], p["n"]
    f_act, g_act = spec.acts
    r = ops.activate(f_act, x @ Wr + h @ Rr + bWr + bRr, spec.clip)
    z = ops.activate(f_act, x @ Wz + h @ Rz + bWz + bRz, spec.clip)
    if spec.linear_before_reset:
        xn, hn = linear(x @ Wn + bWn), linear(h @ Rn + bRn)
        n = ops.activate(g_act, xn + r * hn, spec.clip)
    else:
        n = ops.activate(g_act, x @ Wn + (r * h) @ Rn + bWn + bRn, spec.clip)
    h_new = one_minus(z) * n + z * h
    return h_new, {"h": h_new}


def _rnn_cell(c, x, spec):
    ops, H = _CellOps(c), spec.hidden
    h = c.state("h", H)
    W, R = c.param("W", H, x.size), c.param("R", H, H)
    bW, bR = c.param("bW", H), c.param("bR", H)
    h_new = ops.activate(spec.acts[0], x @ W + h @ R + bW + bR, spec.clip)
    return h_new, {"h": h_new}


_CELLS = {"LSTM": _lstm_cell, "GRU": _gru_cell, "RNN": _rnn_cell}


class _Spec:
    """One direction of one node: what its cell needs."""

    def __init__(self, kind, hidden, acts, clip, peephole=False, input_forget=False,
                 linear_before_reset=False):
        self.kind, self.hidden, self.acts, self.clip = kind, hidden, acts, clip
        self.peephole, self.input_forget = peephole, input_forget
        self.linear_before_reset = linear_before_reset


# ------------------------------------------------------ the symbolic values
class _Axis:
    """An extent of a source tensor (size an int, or None when dynamic), or
    the rows [start, start + size) of one (`parent`)."""

    def __init__(self, name, size, parent=None, start=0):
        self.name, self.size, self.parent, self.start = name, size, parent, start

    @property
    def root(self):
        return self.parent or self

    def key(self):
        return (id(self.root), self.start, self.size) if self.parent else (id(self), None, None)

    def sub(self, start, size):
        return _Axis(self.root.name, size, self.root, self.start + start)

    def __repr__(self):
        s = self.root.name
        return f"{s}[{self.start}:{self.start + self.size}]" if self.parent else s


class _Source:
    """What a view reads: a graph input ('input'), a layer's output sequence
    ('y', viewed as [T, B, D, H]) or the network's final states ('state',
    [L·D, B, H]); `axes` in memory order."""

    def __init__(self, kind, name, axes, layer=None):
        self.kind, self.name, self.axes, self.layer = kind, name, axes, layer


class _View:
    """A tensor that is a source rearranged: dims are groups of the source's
    axes (a group is one dim, its axes merged in row-major order; () is a
    dim of 1); `perms` the batch permutations applied (TopK sorts);
    `dtype` the element type; `narrowed` if a cast rounded it on the way."""

    def __init__(self, src, dims, dtype, perms=(), narrowed=False):
        self.src, self.dims, self.dtype = src, [tuple(d) for d in dims], dtype
        self.perms, self.narrowed = tuple(perms), narrowed

    def with_dims(self, dims, perms=None):
        return _View(self.src, dims, self.dtype, self.perms if perms is None else perms,
                     self.narrowed)


class _Const:
    def __init__(self, value):
        self.value = np.asarray(value)


class _Size:
    """An extent as a product: an int and the dynamic axes (keys)."""

    def __init__(self, coef, syms=()):
        self.coef, self.syms = int(coef), tuple(sorted(syms))

    def __mul__(self, o):
        return _Size(self.coef * o.coef, self.syms + o.syms)

    def __eq__(self, o):
        return isinstance(o, _Size) and (self.coef, self.syms) == (o.coef, o.syms)

    def __hash__(self):
        return hash((self.coef, self.syms))

    def known(self):
        return None if self.syms else self.coef


class _Ints:
    """A shape-like int vector (or scalar) whose entries may be dynamic
    extents (from Shape of a view)."""

    def __init__(self, entries, scalar=False):
        self.entries, self.scalar = list(entries), scalar


class _Fill:
    """A tensor of one value and unknown shape (ConstantOfShape)."""

    def __init__(self, value):
        self.value = float(value)


class _Perm:
    """A permutation of the batch (TopK's indices, `inverse` for the
    ScatterElements that undoes it)."""

    def __init__(self, pid, inverse, size):
        self.pid, self.inverse, self.size = pid, inverse, size


class _Iota:
    def __init__(self, size):
        self.size = size


def _group_size(group):
    s = _Size(1)
    for a in group:
        s = s * (_Size(a.size) if a.size is not None else _Size(1, (a.key(),)))
    return s


def _drop_dim(dims, i):
    """dims without dim i (of extent 1): its axes that are rows of a source
    (a layer's final state, say) join a neighbouring dim, where an extent of
    1 changes nothing, so that the view still knows which row it reads."""
    dims = list(dims)
    keep = tuple(a for a in dims.pop(i) if a.parent is not None)
    if keep:
        if not dims:
            raise OnnxImportError("a view of a single row reduced to a scalar")
        j = min(i, len(dims) - 1)
        dims[j] = keep + dims[j] if j == i else dims[j] + keep
    return dims


def _rows(group):
    """The single rows of sources in a group (extent 1, but they say which
    row a view reads: they must survive reshapes)."""
    return tuple(a for a in group if a.size == 1 and a.parent is not None)


def _significant(group):
    return tuple(a.key() for a in group if a.size != 1)


def _compose(perms, new):
    """perms followed by `new` (pid, inverse), a permutation and its inverse
    cancelling."""
    if perms and perms[-1][0] == new[0] and perms[-1][1] != new[1]:
        return perms[:-1]
    return perms + (new,)


def _materialise_view(arr, axes, dims, what):
    """The array of a view: `arr` holds the source (axes in memory order)."""
    arr = np.asarray(arr)
    if arr.ndim != len(axes):
        raise CallError(f"{what}: rank {arr.ndim}, expected {len(axes)}")
    flat = [a for g in dims for a in g]
    index, order, unused = [], [], []
    for pos, ax in enumerate(axes):
        uses = [a for a in flat if a.root is ax]
        if not uses:
            if arr.shape[pos] != 1:
                raise CallError(f"{what}: extent {arr.shape[pos]} of axis {pos} where the "
                                "model squeezes or indexes an extent of 1")
            index.append(slice(None))
            unused.append(pos)
            continue
        a = uses[0]
        if a.parent is not None:
            if a.start + a.size > arr.shape[pos]:
                raise CallError(f"{what}: rows {a.start}:{a.start + a.size} of an extent "
                                f"{arr.shape[pos]}")
            index.append(slice(a.start, a.start + a.size))
        else:
            index.append(slice(None))
    arr = arr[tuple(index)]
    pos_of = {id(ax): pos for pos, ax in enumerate(axes)}
    order = [pos_of[id(a.root)] for a in flat]
    arr = arr.transpose(order + unused)
    sizes, i = [], 0
    for g in dims:
        n = 1
        for _ in g:
            n *= arr.shape[i]
            i += 1
        sizes.append(n)
    return arr.reshape(sizes)


# ------------------------------------------------------------- the importer
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 5: "int16", 6: "int32", 7: "int64",
           9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64",
           16: "bfloat16"}
_FLOAT_BITS = {"float16": 16, "bfloat16": 16, "float32": 32, "float64": 64}
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


class OnnxImport:
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

    def _fold(self, node, where, ins):
        """A node of constants only: evaluated by onnx's reference runtime."""
        from onnx.reference import ReferenceEvaluator
        try:
            ev = ReferenceEvaluator(node, opsets=dict(self.opset))
            feeds = {n: v.value for n, v in zip(node.input, ins) if n}
            res = ev.run(None, feeds)
        except Exception as e:  # noqa: BLE001 (onnx raises many kinds)
            raise OnnxImportError(f"{where}: could not evaluate this constant node: {e}") from e
        return [_Const(r) for r in res]

    # ------------------------------------------------------ glue handlers
    def _unsupported(self, where, ins, what="this use"):
        kinds = ", ".join(type(v).__name__.strip("_") for v in ins if v is not None)
        return OnnxImportError(f"{where}: {what} is not layout glue that from_onnx can follow "
                               f"(operands: {kinds})")

    def _const_ints(self, where, v, what):
        if isinstance(v, _Const):
            return [int(x) for x in np.atleast_1d(v.value).tolist()]
        raise OnnxImportError(f"{where}: {what} must be a constant")

    def _axes_arg(self, node, where, ins, attrs, index):
        if "axes" in attrs:
            return list(attrs["axes"])
        if len(ins) > index and ins[index] is not None:
            return self._const_ints(where, ins[index], "axes")
        return None

    def _op_Identity(self, node, where, ins, attrs):
        return ins[0]

    def _op_Dropout(self, node, where, ins, attrs):
        training = ins[2] if len(ins) > 2 else None
        if attrs.get("is_test", 1) == 0 or (training is not None and (
                not isinstance(training, _Const) or bool(training.value))):
            raise OnnxImportError(f"{where}: Dropout in training mode is not supported")
        return [ins[0], None]

    def _op_Cast(self, node, where, ins, attrs):
        v, to = ins[0], _DTYPES.get(attrs.get("to"), str(attrs.get("to")))
        if isinstance(v, (_Ints, _Perm, _Iota)):
            return v
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _View):
            src_bits, dst_bits = _FLOAT_BITS.get(v.dtype), _FLOAT_BITS.get(to)
            if (src_bits is None) != (dst_bits is None):
                raise OnnxImportError(f"{where}: a cast from {v.dtype} to {to} of the data")
            narrowed = v.narrowed or (src_bits is not None and (
                dst_bits < src_bits or to == "bfloat16" or v.dtype == "bfloat16"))
            out = v.with_dims(v.dims)
            out.dtype, out.narrowed = to, narrowed
            return out
        raise self._unsupported(where, ins)

    def _op_Transpose(self, node, where, ins, attrs):
        v = ins[0]
        if isinstance(v, _Fill):
            return v
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        perm = attrs.get("perm", list(range(len(v.dims)))[::-1])
        if sorted(perm) != list(range(len(v.dims))):
            raise OnnxImportError(f"{where}: perm {perm} for rank {len(v.dims)}")
        return v.with_dims([v.dims[p] for p in perm])

    def _op_Squeeze(self, node, where, ins, attrs):
        v = ins[0]
        axes = self._axes_arg(node, where, ins, attrs, 1)
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _Ints):
            if len(v.entries) != 1 or v.scalar:
                raise self._unsupported(where, ins)
            return _Ints(v.entries, scalar=True)
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        r = len(v.dims)
        if axes is None:
            axes = [i for i, g in enumerate(v.dims) if all(a.size == 1 for a in g)]
            if any(any(a.size is None for a in g) for g in v.dims):
                raise OnnxImportError(f"{where}: Squeeze without axes of a tensor with "
                                      "dynamic extents")
        axes = [a % r for a in axes]
        for a in axes:
            if any(ax.size not in (1, None) for ax in v.dims[a]):
                raise OnnxImportError(f"{where}: squeezes axis {a} of extent "
                                      f"{_group_size(v.dims[a]).coef}")
        dims = list(v.dims)
        for a in sorted(axes, reverse=True):
            dims = _drop_dim(dims, a)
        return v.with_dims(dims)

    def _op_Unsqueeze(self, node, where, ins, attrs):
        v = ins[0]
        axes = self._axes_arg(node, where, ins, attrs, 1)
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _Ints):
            if not v.scalar or axes not in ([0], [-1]):
                raise self._unsupported(where, ins)
            return _Ints(v.entries)
        if not isinstance(v, _View) or axes is None:
            raise self._unsupported(where, ins)
        r = len(v.dims) + len(axes)
        axes = sorted(a % r for a in axes)
        dims = list(v.dims)
        for a in axes:
            dims.insert(a, ())
        return v.with_dims(dims)

    def _op_Flatten(self, node, where, ins, attrs):
        v = ins[0]
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        k = attrs.get("axis", 1) % (len(v.dims) + 1)
        return v.with_dims([sum(v.dims[:k], ()), sum(v.dims[k:], ())])

    def _shape_entries(self, where, v):
        """A shape operand as a list of _Size (None for 0 / -1 given as ints)."""
        if isinstance(v, _Const):
            return [int(x) for x in np.atleast_1d(v.value).tolist()]
        if isinstance(v, _Ints):
            return list(v.entries)
        raise OnnxImportError(f"{where}: the shape must be a constant or computed from shapes")

    def _op_Reshape(self, node, where, ins, attrs):
        v, shape = ins[0], ins[1]
        if isinstance(v, _Fill):
            return v
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        entries = self._shape_entries(where, shape)
        allowzero = attrs.get("allowzero", 0)
        targets = []
        for i, e in enumerate(entries):
            if isinstance(e, int) and e == 0 and not allowzero:
                if i >= len(v.dims):
                    raise OnnxImportError(f"{where}: shape entry {i} copies a missing dim")
                targets.append(_group_size(v.dims[i]))
            elif isinstance(e, int) and e == -1:
                targets.append(None)
            elif isinstance(e, int):
                targets.append(_Size(e))
            else:
                targets.append(e)
        if targets.count(None) > 1:
            raise OnnxImportError(f"{where}: more than one -1 in the shape")
        seq = [a for g in v.dims for a in g if a.size != 1]

        def take(axes, size, rev):
            """Axes from the front (or back) whose product is `size`."""
            got, n = [], _Size(1)
            while n != size:
                if not axes:
                    return None
                a = axes.pop(-1 if rev else 0)
                got.append(a)
                n = n * _group_size((a,))
                if n.coef > size.coef and size.coef and not n.syms:
                    return None
            return got[::-1] if rev else got

        free = targets.index(None) if None in targets else len(targets)
        groups = [None] * len(targets)
        for i in range(free):
            g = take(seq, targets[i], False)
            if g is None:
                raise self._bad_reshape(where, v, entries)
            groups[i] = tuple(g)
        for i in range(len(targets) - 1, free, -1):
            g = take(seq, targets[i], True)
            if g is None:
                raise self._bad_reshape(where, v, entries)
            groups[i] = tuple(g)
        if free < len(targets):
            groups[free] = tuple(seq)
        elif seq:
            raise self._bad_reshape(where, v, entries)
        rows = sum((_rows(g) for g in v.dims), ())
        if rows:
            if not groups:
                raise self._bad_reshape(where, v, entries)
            groups[0] = rows + groups[0]
        return v.with_dims(groups)

    def _bad_reshape(self, where, v, entries):
        dims = " x ".join(("·".join(map(repr, g)) or "1") for g in v.dims)
        shown = [e if isinstance(e, int) else "dynamic" for e in entries]
        return OnnxImportError(f"{where}: a reshape of [{dims}] to {shown} that splits or "
                               "reorders an extent: from_onnx follows only reshapes that "
                               "merge or keep whole extents")

    def _slice_args(self, node, where, ins, attrs):
        if self.opset.get("", 13) < 10 and "starts" in attrs:
            starts, ends = attrs["starts"], attrs["ends"]
            axes, steps = attrs.get("axes"), None
        else:
            starts = self._const_ints(where, ins[1], "starts")
            ends = self._const_ints(where, ins[2], "ends")
            axes = self._const_ints(where, ins[3], "axes") if len(ins) > 3 and ins[3] else None
            steps = self._const_ints(where, ins[4], "steps") if len(ins) > 4 and ins[4] else None
        axes = axes if axes is not None else list(range(len(starts)))
        steps = steps or [1] * len(starts)
        return starts, ends, axes, steps

    @staticmethod
    def _range(start, end, size):
        """[lo, hi) of a slice with step 1 on an extent of `size` (None:
        dynamic: only from 0 or to the end)."""
        big = 2 ** 62
        if size is None:
            if start < 0 or end < 0 or (start > 0 and end < big):
                return None
            return (start, end) if end < big else (start, None)
        start = max(0, min(size, start + size if start < 0 else start))
        end = max(0, min(size, end + size if end < 0 else end))
        return (start, max(start, end))

    def _op_Slice(self, node, where, ins, attrs):
        v = ins[0]
        starts, ends, axes, steps = self._slice_args(node, where, ins, attrs)
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _Ints):
            if len(axes) != 1 or steps[0] != 1 or v.scalar:
                raise self._unsupported(where, ins)
            return _Ints(v.entries[slice(starts[0], ends[0])])
        if not isinstance(v, _View):
            raise self._unsupported(where, ins)
        dims = list(v.dims)
        for s, e, a, st in zip(starts, ends, axes, steps):
            a %= len(dims)
            if st != 1:
                raise OnnxImportError(f"{where}: a slice with step {st}")
            g = [x for x in dims[a] if x.size != 1]
            size = _group_size(dims[a]).known()
            rng = self._range(s, e, size)
            if rng is None:
                raise OnnxImportError(f"{where}: a slice {s}:{e} of a dynamic extent")
            lo, hi = rng
            if lo == 0 and (hi is None or hi == size):
                continue
            if len(g) != 1:
                raise OnnxImportError(f"{where}: a slice of axis {a}, which merges several "
                                      "extents")
            dims[a] = _rows(dims[a]) + (g[0].sub(lo, hi - lo),)
        return v.with_dims(dims)

    def _op_Gather(self, node, where, ins, attrs):
        data, idx = ins[0], ins[1]
        axis = attrs.get("axis", 0)
        if isinstance(data, _Ints) and isinstance(idx, _Const):
            picked = [data.entries[int(i)] for i in np.atleast_1d(idx.value).tolist()]
            return _Ints(picked, scalar=idx.value.ndim == 0)
        if isinstance(data, _Fill):
            return data
        if isinstance(data, _View) and isinstance(idx, _Perm):
            a = axis % len(data.dims)
            if len([x for x in data.dims[a] if x.size != 1]) != 1:
                raise OnnxImportError(f"{where}: a permutation of axis {a}, which merges "
                                      "several extents")
            key = [x for x in data.dims[a] if x.size != 1][0].key()
            return data.with_dims(data.dims, _compose(data.perms, (idx.pid, idx.inverse, key)))
        if isinstance(data, _View) and isinstance(idx, _Const) and idx.value.ndim <= 1:
            a = axis % len(data.dims)
            picks = np.atleast_1d(idx.value).astype(int)
            g = [x for x in data.dims[a] if x.size != 1]
            size = _group_size(data.dims[a]).known()
            if not g and size == 1 and picks.tolist() == [0]:  # an extent of 1
                return data.with_dims(_drop_dim(data.dims, a) if idx.value.ndim == 0
                                      else data.dims)
            if len(g) != 1 or size is None:
                raise OnnxImportError(f"{where}: indexing axis {a}, a dynamic or merged extent")
            picks = [p % size for p in picks.tolist()]
            if picks != list(range(picks[0], picks[0] + len(picks))):
                raise OnnxImportError(f"{where}: indices {picks} are not a contiguous range")
            dims = list(data.dims)
            dims[a] = _rows(dims[a]) + (g[0].sub(picks[0], len(picks)),)
            return data.with_dims(_drop_dim(dims, a) if idx.value.ndim == 0 else dims)
        raise self._unsupported(where, ins)

    def _op_Concat(self, node, where, ins, attrs):
        axis = attrs.get("axis", 0)
        if all(isinstance(v, (_Ints, _Const)) for v in ins):
            entries = []
            for v in ins:
                if isinstance(v, _Ints):
                    entries += v.entries
                else:
                    entries += [_Size(int(x)) if int(x) > 0 else int(x)
                                for x in np.atleast_1d(v.value).tolist()]
            return _Ints(entries)
        if all(isinstance(v, _Fill) for v in ins) and len({v.value for v in ins}) == 1:
            return ins[0]
        if not all(isinstance(v, _View) for v in ins):
            raise self._unsupported(where, ins)
        first = ins[0]
        a = axis % len(first.dims)
        rows = []
        for v in ins:
            same = (v.src is first.src and len(v.dims) == len(first.dims) and v.perms == first.perms
                    and all(_significant(g) == _significant(h)
                            for i, (g, h) in enumerate(zip(v.dims, first.dims)) if i != a))
            g = [x for x in v.dims[a] if x.size != 1 or x.parent is not None]
            if not same or len(g) != 1 or g[0].parent is None:
                raise OnnxImportError(f"{where}: a concatenation that is not of adjacent rows "
                                      "of one tensor (such as the final states of the layers "
                                      "of one stack)")
            rows.append(g[0])
        for prev, nxt in zip(rows, rows[1:]):
            if nxt.root is not prev.root or nxt.start != prev.start + prev.size:
                raise OnnxImportError(f"{where}: concatenates rows {prev!r} and {nxt!r}, which "
                                      "are not adjacent")
        merged = rows[0].sub(0, sum(r.size for r in rows))
        dims = list(first.dims)
        dims[a] = (merged,)
        return first.with_dims(dims)

    def _op_Shape(self, node, where, ins, attrs):
        v = ins[0]
        if isinstance(v, _Perm):
            entries = [v.size]
        elif isinstance(v, _View):
            entries = [_group_size(g) for g in v.dims]
        else:
            raise self._unsupported(where, ins, "the shape of a tensor of unknown shape")
        return _Ints(entries[attrs.get("start", 0):attrs.get("end")])

    def _op_ConstantOfShape(self, node, where, ins, attrs):
        value = attrs.get("value")
        if value is not None:
            from onnx import numpy_helper
            value = float(np.asarray(numpy_helper.to_array(value)).reshape(-1)[0])
        return _Fill(value or 0.0)

    def _op_Expand(self, node, where, ins, attrs):
        v = ins[0]
        if isinstance(v, _Fill):
            return v
        if isinstance(v, _Const) and v.value.size and (v.value == v.value.flat[0]).all():
            return _Fill(v.value.flat[0])  # a constant broadcast to a computed shape
        raise self._unsupported(where, ins)

    def _op_ReduceProd(self, node, where, ins, attrs):
        v = ins[0]
        if not isinstance(v, _Ints) or len(ins) > 1 and ins[1] is not None:
            raise self._unsupported(where, ins)
        n = _Size(1)
        for e in v.entries:
            n = n * (e if isinstance(e, _Size) else _Size(e))
        return _Ints([n], scalar=not attrs.get("keepdims", 1))

    def _op_Range(self, node, where, ins, attrs):
        start, limit, delta = ins
        if not (isinstance(start, _Const) and isinstance(delta, _Const) and
                isinstance(limit, _Ints) and len(limit.entries) == 1 and
                int(start.value) == 0 and int(delta.value) == 1):
            raise self._unsupported(where, ins)
        return _Iota(limit.entries[0])

    def _op_TopK(self, node, where, ins, attrs):
        """Sorting a batch by its lengths: the values are the lengths
        permuted, the indices a permutation of the batch."""
        v, k = ins[0], ins[1]
        if not isinstance(v, _View) or len(v.dims) != 1:
            raise self._unsupported(where, ins)
        size = _group_size(v.dims[0])
        kk = k.entries[0] if isinstance(k, _Ints) and len(k.entries) == 1 else (
            _Size(int(np.asarray(k.value).reshape(-1)[0])) if isinstance(k, _Const) else None)
        if kk != size:
            raise OnnxImportError(f"{where}: a TopK that does not sort the whole batch")
        g = [x for x in v.dims[0] if x.size != 1]
        key = g[0].key() if g else None
        self._perm_ids += 1
        pid = self._perm_ids
        return [v.with_dims(v.dims, _compose(v.perms, (pid, False, key))), _Perm(pid, False, size)]

    def _op_ScatterElements(self, node, where, ins, attrs):
        """ScatterElements(_, σ, iota) = σ⁻¹."""
        data, idx, upd = ins
        if isinstance(upd, _Const) and upd.value.ndim == 1 and \
                np.array_equal(upd.value, np.arange(len(upd.value))):
            upd = _Iota(_Size(len(upd.value)))  # a Range folded for a static batch
        if (isinstance(idx, _Perm) and isinstance(upd, _Iota) and upd.size == idx.size and
                attrs.get("axis", 0) == 0 and attrs.get("reduction", "none") == "none"):
            return _Perm(idx.pid, not idx.inverse, idx.size)
        raise self._unsupported(where, ins)

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
