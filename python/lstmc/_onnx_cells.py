# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The cells of ONNX's LSTM, GRU and RNN operators (their activations,
clip, peepholes, input_forget and linear_before_reset) from lstmc's DSL, for
onnx_import."""
from .dsl import Affine, CellError, Value, exp, linear, one_minus, relu, sigmoid, tanh
from .dsl import _unary

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
