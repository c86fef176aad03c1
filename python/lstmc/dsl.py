# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The cell DSL: primitives that build lstm-dialect IR.

A cell is a Python function ``cell(c, x)`` of a :class:`CellBuilder` ``c`` and
the step input ``x`` (``[B, I]``). It declares its parameters
(``c.param``) and recurrent state (``c.state``), computes with the
primitives below and returns ``(output, new_state)``::

    def rnn_tanh(c, x, hidden=128):
        h = c.state("h", hidden)
        W, R = c.param("W", hidden, x.size), c.param("R", hidden, hidden)
        bW, bR = c.param("bW", hidden), c.param("bR", hidden)
        h_new = tanh(x @ W + h @ R + bW + bR)
        return h_new, {"h": h_new}

``x @ W`` is ``x · W^T`` (PyTorch's layout, W is ``[H, K]``). Sums of
products, ``[B, H]`` addends, ``[H]`` biases and one peephole ``p * s``
(``p`` an ``[H]`` parameter, ``s`` a ``[B, H]`` value) stay symbolic
(:class:`Affine`) until an activation makes them one ``lstm.gate``:
``sigmoid(x @ Wi + h @ Ri + bi + pi * c)`` is one gate. Everything else is
upstream ``arith``/``math`` on tensors and ``lstm.one_minus``.

Shapes are checked here, before any IR is written, and the errors name the
primitive and the shapes (:class:`CellError`); the IR is then parsed and
verified by the compiler, whose diagnostics point back at the line of the
cell that made the failing op.
"""
import inspect
import os

ACTIVATIONS = ("sigmoid", "tanh", "relu", "identity")
DTYPES = {"float32": "f32", "float64": "f64"}


class CellError(ValueError):
    """A cell that does not type-check: names the primitive and the shapes."""


def _where():
    """file:line of the first caller outside this package, for locations."""
    here = os.path.dirname(os.path.abspath(__file__))
    frame = inspect.currentframe()
    try:
        while frame is not None:
            path = os.path.abspath(frame.f_code.co_filename)
            if os.path.dirname(path) != here:
                # Inside an MLIR string literal: no quotes or backslashes.
                name = os.path.basename(path).replace('"', "'").replace("\\", "/")
                return name, frame.f_lineno
            frame = frame.f_back
    finally:
        del frame
    return "<cell>", 0


def _fmt(shape):
    return "[" + ", ".join("B" if d is None else str(d) for d in shape) + "]"


class Emitter:
    """Writes the ops of one function: a prologue at function level and the
    bodies of the layers' regions. SSA names are unique per function."""

    def __init__(self, dtype="float32"):
        if dtype not in DTYPES:
            raise CellError(f"dtype {dtype!r}: expected one of {sorted(DTYPES)}")
        self.elt = DTYPES[dtype]
        self.dtype = dtype
        self.counter = {}
        self.names = set()  # the SSA names fresh gave out
        self.reserved = set()  # function arguments' names, kept from fresh
        self.lines = []  # function-level ops
        self.region = None  # the lines of the region being built, if any

    def fresh(self, hint):
        hint = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in hint) or "v"
        while True:
            n = self.counter.get(hint, 0)
            self.counter[hint] = n + 1
            name = f"%{hint}" if n == 0 else f"%{hint}_{n}"
            if name not in self.names and name not in self.reserved:
                self.names.add(name)
                return name

    def reserve(self, name):
        """Keeps `%name` (a function argument) from the names fresh gives."""
        self.reserved.add("%" + name)

    def type(self, shape, elt=None):
        dims = "x".join("?" if d is None else str(d) for d in shape)
        return f"tensor<{dims}x{elt or self.elt}>"

    def emit(self, text, primitive, top=False):
        """Appends one op, located at the caller's line and primitive."""
        file, line = _where()
        loc = f' loc("{primitive} at {file}:{line}")'
        target = self.lines if top or self.region is None else self.region
        target.append(text + loc)


class Value:
    """A ``[B, N]`` tensor inside a cell (B is the dynamic batch)."""

    def __init__(self, em, name, size):
        self.em, self.name, self.size = em, name, size

    @property
    def shape(self):
        return (None, self.size)

    @property
    def type(self):
        return self.em.type(self.shape)

    def __repr__(self):
        return f"Value({self.name}: {_fmt(self.shape)})"

    # x @ W: a product, kept symbolic until a gate takes it.
    def __matmul__(self, weight):
        if not isinstance(weight, Param) or len(weight.shape) != 2:
            raise CellError(f"matmul: {self!r} @ {weight!r}: the right operand must be "
                            "a 2-D parameter [H, K]")
        if weight.shape[1] != self.size:
            raise CellError(f"matmul: input {_fmt(self.shape)} @ weight {_fmt(weight.shape)}^T: "
                            f"the weight must have {self.size} columns (x · W^T, W is [H, K])")
        return Affine(self.em, products=[(self, weight)])

    def __add__(self, other):
        if isinstance(other, (Affine, Param)):
            return _affine(self, "add") + other
        return _binary("addf", self, other, "add")

    __radd__ = __add__

    def __sub__(self, other):
        return _binary("subf", self, _value(other, "sub"), "sub")

    def __mul__(self, other):
        if isinstance(other, Param):
            return other * self
        return _binary("mulf", self, _value(other, "mul"), "mul")

    def __rmul__(self, other):
        return self.__mul__(other)

    def __rsub__(self, other):
        if other == 1 or other == 1.0:
            return one_minus(self)
        raise CellError(f"sub: {other!r} - {self!r}: only 1 - x is a primitive (one_minus)")


class Param:
    """A parameter: a function argument of static shape, or a slice of one
    (made at function level, outside the cell's loop)."""

    def __init__(self, em, name, shape):
        self.em, self.name, self.shape = em, name, tuple(shape)

    @property
    def type(self):
        return self.em.type(self.shape)

    def __repr__(self):
        return f"Param({self.name}: {_fmt(self.shape)})"

    def split(self, n):
        """n equal blocks along the first axis (stacked gates, [n·H, ...])."""
        rows = self.shape[0]
        if rows % n:
            raise CellError(f"split: {self!r} into {n}: {rows} rows do not divide by {n}")
        return [self.block(k * (rows // n), rows // n) for k in range(n)]

    def block(self, row, rows, col=0, cols=None):
        """Rows [row, row + rows) (and columns [col, col + cols) of a matrix)."""
        if len(self.shape) == 1:
            if cols is not None or col:
                raise CellError(f"block: {self!r} is 1-D")
            shape, offsets = (rows,), [row]
        else:
            cols = self.shape[1] - col if cols is None else cols
            shape, offsets = (rows, cols), [row, col]
        if any(o < 0 or o + s > d for o, s, d in zip(offsets, shape, self.shape)):
            raise CellError(f"block: {shape} at {offsets} is outside {self!r}")
        em = self.em
        out = Param(em, em.fresh(self.name[1:] + "_blk"), shape)
        sizes = ", ".join(map(str, shape))
        em.emit(f"{out.name} = tensor.extract_slice {self.name}[{', '.join(map(str, offsets))}] "
                f"[{sizes}] [{', '.join('1' for _ in shape)}] : {self.type} to {out.type}",
                "tensor.extract_slice", top=True)
        return out

    def row(self, k):
        """Row k of a 2-D parameter as a 1-D one (e.g. a peephole of P [3, H])."""
        if len(self.shape) != 2 or not 0 <= k < self.shape[0]:
            raise CellError(f"row: {k} of {self!r}")
        em = self.em
        out = Param(em, em.fresh(self.name[1:] + "_row"), (self.shape[1],))
        em.emit(f"{out.name} = tensor.extract_slice {self.name}[{k}, 0] [1, {self.shape[1]}] [1, 1]"
                f" : {self.type} to {out.type}", "tensor.extract_slice", top=True)
        return out

    def rows(self):
        return [self.row(k) for k in range(self.shape[0])]

    def __add__(self, other):
        return Affine(self.em) + self + other

    __radd__ = __add__

    def __mul__(self, state):
        """p * s: a peephole term (p [H], s [B, H])."""
        if len(self.shape) != 1 or not isinstance(state, Value):
            raise CellError(f"mul: {self!r} * {state!r}: a parameter multiplies a [B, H] "
                            "value only as a peephole, p [H] * s [B, H]")
        if state.size != self.shape[0]:
            raise CellError(f"peephole: p {_fmt(self.shape)} * s {_fmt(state.shape)}: "
                            "sizes differ")
        return Affine(self.em, peephole=(self, state))

    __rmul__ = __mul__


class Affine:
    """Σ x_k · W_k^T + Σ addends + Σ biases + p ⊙ s, not yet emitted."""

    def __init__(self, em, products=(), addends=(), biases=(), peephole=None):
        self.em = em
        self.products, self.addends = list(products), list(addends)
        self.biases, self.peephole = list(biases), peephole

    def size(self):
        sizes = ([w.shape[0] for _, w in self.products] + [a.size for a in self.addends]
                 + [b.shape[0] for b in self.biases]
                 + ([self.peephole[0].shape[0]] if self.peephole else []))
        return sizes[0] if sizes else None

    def __add__(self, other):
        out = Affine(self.em, self.products, self.addends, self.biases, self.peephole)
        if isinstance(other, Affine):
            if other.peephole and out.peephole:
                raise CellError("add: a gate takes one peephole term")
            out.products += other.products
            out.addends += other.addends
            out.biases += other.biases
            out.peephole = out.peephole or other.peephole
        elif isinstance(other, Param):
            if len(other.shape) != 1:
                raise CellError(f"add: {other!r}: only 1-D parameters (biases) are added")
            out.biases.append(other)
        elif isinstance(other, Value):
            out.addends.append(other)
        else:
            raise CellError(f"add: cannot add {other!r} to a gate's pre-activation")
        sizes = {s for s in [w.shape[0] for _, w in out.products] + [a.size for a in out.addends]
                 + [b.shape[0] for b in out.biases]
                 + ([out.peephole[0].shape[0]] if out.peephole else [])}
        if len(sizes) > 1:
            raise CellError("add: terms of different sizes: " + ", ".join(
                [f"x {_fmt(x.shape)} @ W {_fmt(w.shape)}^T" for x, w in out.products]
                + [f"addend {_fmt(a.shape)}" for a in out.addends]
                + [f"bias {_fmt(b.shape)}" for b in out.biases]))
        return out

    __radd__ = __add__

    def __mul__(self, other):
        return _materialise(self) * other

    __rmul__ = __mul__

    def __sub__(self, other):
        return _materialise(self) - other

    def __repr__(self):
        return f"Affine(size={self.size()})"


def _list(values):
    return ", ".join(v.name for v in values), ", ".join(v.type for v in values)


def gate(act, pre):
    """act(pre) as one lstm.gate; `pre` is an Affine or a Value."""
    if act not in ACTIVATIONS:
        raise CellError(f"gate: unknown activation {act!r} (expected one of {ACTIVATIONS})")
    if isinstance(pre, Value):
        pre = Affine(pre.em, addends=[pre])
    if not isinstance(pre, Affine):
        raise CellError(f"{act}: expected a value or a sum of products, got {pre!r}")
    if not pre.products and not pre.addends:
        raise CellError(f"{act}: a gate needs at least one product x @ W or one [B, H] addend")
    em, size = pre.em, pre.size()
    parts = [f"lstm.gate {act}"]
    if pre.products:
        xs, ws = [x for x, _ in pre.products], [w for _, w in pre.products]
        n, t = _list(xs)
        parts.append(f"({n} : {t})")
        n, t = _list(ws)
        parts.append(f"weights({n} : {t})")
    if pre.addends:
        parts.append("add({} : {})".format(*_list(pre.addends)))
    if pre.biases:
        parts.append("bias({} : {})".format(*_list(pre.biases)))
    if pre.peephole:
        p, s = pre.peephole
        parts.append(f"peephole({p.name}, {s.name} : {p.type}, {s.type})")
    out = Value(em, em.fresh(act[0] + "g"), size)
    em.emit(f"{out.name} = " + " ".join(parts) + f" -> {out.type}", f"lstm.gate {act}")
    return out


def _materialise(v):
    return gate("identity", v) if isinstance(v, Affine) else v


def _value(v, primitive):
    v = _materialise(v)
    if not isinstance(v, Value):
        raise CellError(f"{primitive}: expected a [B, H] value, got {v!r}")
    return v


def _affine(v, primitive):
    return Affine(v.em, addends=[_value(v, primitive)])


def _binary(op, a, b, primitive):
    a, b = _value(a, primitive), _value(b, primitive)
    if a.size != b.size:
        raise CellError(f"{primitive}: shapes differ: {_fmt(a.shape)} and {_fmt(b.shape)}")
    out = Value(a.em, a.em.fresh(primitive), a.size)
    a.em.emit(f"{out.name} = arith.{op} {a.name}, {b.name} : {out.type}", f"arith.{op}")
    return out


def _unary(op, v, primitive):
    v = _value(v, primitive)
    out = Value(v.em, v.em.fresh(primitive), v.size)
    v.em.emit(f"{out.name} = {op} {v.name} : {out.type}", op)
    return out


def sigmoid(v):
    """σ(v); on a sum of products, one lstm.gate sigmoid."""
    return gate("sigmoid", v)


def tanh(v):
    """tanh(v); on a sum of products one lstm.gate tanh, else math.tanh."""
    return gate("tanh", v) if isinstance(v, Affine) else _unary("math.tanh", v, "tanh")


def relu(v):
    return gate("relu", v)


def linear(v):
    """The affine map itself (lstm.gate identity): a projection, or a GEMM
    kept apart from the others (nn.GRU's R_n h + b_hn)."""
    return gate("identity", v)


def one_minus(v):
    """1 - v (lstm.one_minus)."""
    return _unary("lstm.one_minus", v, "one_minus")


def exp(v):
    return _unary("math.exp", v, "exp")


def layer_norm(v, gamma=None, beta=None, eps=1e-5):
    """Layer normalisation over the features of a [B, N] value, with optional
    gain `gamma` and shift `beta` ([N] parameters); v may be a sum of
    products. v may also be a list of [B, H] blocks normalised together, as
    the blocks of one [B, k·H] value (the four gate pre-activations of a
    layer-normalised LSTM); gamma and beta are then lists too.

    The mean and the variance are products with the constant H×H matrix 1/N,
    so they stay lstm.gate ops (GEMMs) that the passes and the lowering know."""
    blocks = v if isinstance(v, (list, tuple)) else [v]
    blocks = [_value(b, "layer_norm") for b in blocks]
    gammas = gamma if isinstance(gamma, (list, tuple)) else [gamma] * len(blocks)
    betas = beta if isinstance(beta, (list, tuple)) else [beta] * len(blocks)
    if len(gammas) != len(blocks) or len(betas) != len(blocks):
        raise CellError(f"layer_norm: {len(blocks)} blocks, {len(gammas)} gains, "
                        f"{len(betas)} shifts")
    sizes = {b.size for b in blocks}
    if len(sizes) != 1:
        raise CellError("layer_norm: blocks of different sizes " +
                        ", ".join(_fmt(b.shape) for b in blocks))
    em, n = blocks[0].em, sizes.pop()
    total = n * len(blocks)
    for name, ps in (("gamma", gammas), ("beta", betas)):
        for p in ps:
            if p is not None and (not isinstance(p, Param) or p.shape != (n,)):
                raise CellError(f"layer_norm: {name} {p!r} must be a parameter [{n}] for "
                                f"the input {_fmt(blocks[0].shape)}")
    avg = Param(em, em.fresh("ln_avg"), (n, n))
    em.emit(f"{avg.name} = arith.constant dense<{1.0 / total:.17e}> : {avg.type}", "layer_norm",
            top=True)
    epsilon = Param(em, em.fresh("ln_eps"), (n,))
    em.emit(f"{epsilon.name} = arith.constant dense<{float(eps):.17e}> : {epsilon.type}",
            "layer_norm", top=True)
    mean = linear(Affine(em, products=[(b, avg) for b in blocks]))
    centred = [b - mean for b in blocks]
    var = linear(Affine(em, products=[(d * d, avg) for d in centred], biases=[epsilon]))
    inv = _unary("math.rsqrt", var, "layer_norm")
    outs = []
    for d, g, b in zip(centred, gammas, betas):
        out = d * inv
        if g is not None:
            out = linear(Affine(em, addends=[_broadcast_zero(out)], peephole=(g, out)))
        if b is not None:
            out = linear(Affine(em, addends=[out], biases=[b]))
        outs.append(out)
    return outs if isinstance(v, (list, tuple)) else outs[0]


def _broadcast_zero(like):
    """A [B, N] zero shaped like `like` (x - x): the addend that lets a gate
    be a bare peephole, g ⊙ x."""
    return _binary("subf", like, like, "layer_norm")


class CellBuilder:
    """What a cell function gets: declares parameters and state."""

    def __init__(self, em, suffix=""):
        self.em, self.suffix = em, suffix
        self.params = []  # (name, shape) in declaration order
        self.states = []  # (name, size, returned)
        self._state_values = {}

    def param(self, name, *shape):
        """A parameter of static shape (the function argument NAME+suffix)."""
        if not shape or any(not isinstance(d, int) or d < 1 for d in shape) or len(shape) > 2:
            raise CellError(f"param {name!r}: shape {shape} must be 1 or 2 positive ints")
        if any(n == name for n, _ in self.params):
            raise CellError(f"param {name!r} declared twice")
        self.params.append((name, tuple(shape)))
        return Param(self.em, "%" + name + self.suffix, shape)

    def state(self, name, size, returned=True):
        """Recurrent state [B, size], initial value NAME0; its final value is
        a result of the network unless returned=False."""
        if not isinstance(size, int) or size < 1:
            raise CellError(f"state {name!r}: size {size!r} must be a positive int")
        if any(n == name for n, _, _ in self.states):
            raise CellError(f"state {name!r} declared twice")
        self.states.append((name, size, returned))
        v = Value(self.em, self.em.fresh(name), size)
        self._state_values[name] = v
        return v
