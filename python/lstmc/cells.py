# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The cells of shared/docs/VARIANTS.md, each a few lines of the DSL.

Every function here is a cell: ``cell(c, x, hidden=..., ...)`` declares
its state and parameters on the CellBuilder ``c`` and returns
``(output, new_state)``. Parameter layouts follow examples/*.mlir (and
nn.LSTM / nn.GRU): W [G·H, I], R [G·H, H], bW, bR [G·H] with the gates
stacked in the documented order, peepholes P [#peepholes, H].
python/tests/test_examples.py checks that each produces the IR of its
examples/*.mlir and matches the float64 reference.
"""
from .dsl import linear, one_minus, relu, sigmoid, tanh


def _stacked(c, x, h, gates, hidden):
    """W, R, bW, bR of `gates` stacked gates, split per gate: {g: (W, R, bW, bR)}."""
    G = len(gates)
    W, R = c.param("W", G * hidden, x.size), c.param("R", G * hidden, h.size)
    bW, bR = c.param("bW", G * hidden), c.param("bR", G * hidden)
    return dict(zip(gates, zip(W.split(G), R.split(G), bW.split(G), bR.split(G))))


def lstm(c, x, hidden=128, proj_size=None):
    """nn.LSTM (gates i, f, g, o; two biases); with proj_size, LSTMP
    (nn.LSTM(proj_size=P): h = (o ⊙ tanh(c)) W_hr^T)."""
    h = c.state("h", proj_size or hidden)
    cs = c.state("c", hidden)
    p = _stacked(c, x, h, "ifgo", hidden)

    def pre(g):
        W, R, bW, bR = p[g]
        return x @ W + h @ R + bW + bR

    i, f, g = sigmoid(pre("i")), sigmoid(pre("f")), tanh(pre("g"))
    ig = i * g
    fc = f * cs
    c_new = fc + ig
    o = sigmoid(pre("o"))
    h_new = o * tanh(c_new)
    if proj_size:
        h_new = linear(h_new @ c.param("Whr", proj_size, hidden))
    return h_new, {"h": h_new, "c": c_new}


def greff(c, x, hidden=128, variant="vanilla"):
    """The peephole LSTM of Greff et al. (2015) and its eight variants:
    'vanilla', 'nig', 'nfg', 'nog', 'niaf', 'noaf', 'np', 'cifg', 'fgr', and
    'traditional' (NFG + NP). Stacked gate order i, f, z, o without the
    missing ones; peephole rows P in the order i, f, o."""
    v = set(variant.split("+")) if variant != "traditional" else {"nfg", "np"}
    gates = [g for g in "ifzo" if not ((g == "i" and "nig" in v) or
                                        (g == "f" and v & {"nfg", "cifg"}) or
                                        (g == "o" and "nog" in v))]
    peeps = "" if "np" in v else "".join(g for g in gates if g != "z")
    h, cs = c.state("h", hidden), c.state("c", hidden)
    fgr = "fgr" in v
    if fgr:  # the previous gate activations are state, not returned
        prev = {g: c.state(g, hidden, returned=False) for g in "ifo"}
    p = _stacked(c, x, h, gates, hidden)
    P = dict(zip(peeps, c.param("P", len(peeps), hidden).rows())) if peeps else {}
    if fgr:
        Rg = c.param("Rg", 3 * hidden, 3 * hidden)
        Rgd = {(a, s): Rg.block(ka * hidden, hidden, ks * hidden, hidden)
               for ka, a in enumerate("ifo") for ks, s in enumerate("ifo")}

    def pre(g, cell=None):
        W, R, bW, bR = p[g]
        a = x @ W + h @ R
        if fgr and g != "z":
            for s in "ifo":
                a = a + prev[s] @ Rgd[g, s]
        a = a + bW + bR
        return a + P[g] * cell if g in P else a

    i = sigmoid(pre("i", cs)) if "i" in gates else None
    f = one_minus(i) if "cifg" in v else sigmoid(pre("f", cs)) if "f" in gates else None
    z = (linear if "niaf" in v else tanh)(pre("z"))
    iz = i * z if i is not None else z
    c_new = f * cs + iz if f is not None else cs + iz
    o = sigmoid(pre("o", c_new)) if "o" in gates else None
    act = c_new if "noaf" in v else tanh(c_new)
    h_new = o * act if o is not None else act
    state = {"h": h_new, "c": c_new}
    if fgr:
        state.update(i=i, f=f, o=o)
    return h_new, state


def gru(c, x, hidden=128):
    """nn.GRU (gates r, z, n; the reset applied after the recurrent GEMM)."""
    h = c.state("h", hidden)
    p = _stacked(c, x, h, "rzn", hidden)
    (Wr, Rr, bWr, bRr), (Wz, Rz, bWz, bRz), (Wn, Rn, bWn, bRn) = p["r"], p["z"], p["n"]
    r = sigmoid(x @ Wr + h @ Rr + bWr + bRr)
    z = sigmoid(x @ Wz + h @ Rz + bWz + bRz)
    xn, hn = linear(x @ Wn + bWn), linear(h @ Rn + bRn)
    n = tanh(xn + r * hn)
    h_new = one_minus(z) * n + z * h
    return h_new, {"h": h_new}


def cho_gru(c, x, hidden=128):
    """The GRU of Cho et al. (2014): the reset applied before R_n."""
    h = c.state("h", hidden)
    p = _stacked(c, x, h, "rzn", hidden)
    (Wr, Rr, bWr, bRr), (Wz, Rz, bWz, bRz), (Wn, Rn, bWn, bRn) = p["r"], p["z"], p["n"]
    r = sigmoid(x @ Wr + h @ Rr + bWr + bRr)
    z = sigmoid(x @ Wz + h @ Rz + bWz + bRz)
    n = tanh(x @ Wn + (r * h) @ Rn + bWn + bRn)
    h_new = one_minus(z) * n + z * h
    return h_new, {"h": h_new}


def mgu(c, x, hidden=128):
    """Minimal gated unit (gates f, n)."""
    h = c.state("h", hidden)
    p = _stacked(c, x, h, "fn", hidden)
    (Wf, Rf, bWf, bRf), (Wn, Rn, bWn, bRn) = p["f"], p["n"]
    f = sigmoid(x @ Wf + h @ Rf + bWf + bRf)
    n = tanh(x @ Wn + (f * h) @ Rn + bWn + bRn)
    h_new = one_minus(f) * h + f * n
    return h_new, {"h": h_new}


def rnn(c, x, hidden=128, nonlinearity="tanh"):
    """nn.RNN: h = act(W x + bW + R h + bR), act tanh or relu."""
    h = c.state("h", hidden)
    W, R = c.param("W", hidden, x.size), c.param("R", hidden, hidden)
    bW, bR = c.param("bW", hidden), c.param("bR", hidden)
    act = {"tanh": tanh, "relu": relu}[nonlinearity]
    h_new = act(x @ W + h @ R + bW + bR)
    return h_new, {"h": h_new}


def ln_lstm(c, x, hidden=128):
    """Layer-normalised LSTM (VARIANTS.md): layer norm over the 4H gate
    pre-activations (gain g, shift s [4H], gate order i, f, g, o) and over
    c_t (gain g_c, shift s_c [H]); W [4H, I], R [4H, H], one bias b [4H]."""
    from .dsl import layer_norm
    h, cs = c.state("h", hidden), c.state("c", hidden)
    W, R = c.param("W", 4 * hidden, x.size).split(4), c.param("R", 4 * hidden, hidden).split(4)
    b = c.param("b", 4 * hidden).split(4)
    g, s = c.param("g", 4 * hidden).split(4), c.param("s", 4 * hidden).split(4)
    g_c, s_c = c.param("g_c", hidden), c.param("s_c", hidden)
    pre = [linear(x @ W[k] + h @ R[k] + b[k]) for k in range(4)]
    a_i, a_f, a_g, a_o = layer_norm(pre, g, s)
    i, f, gg, o = sigmoid(a_i), sigmoid(a_f), tanh(a_g), sigmoid(a_o)
    c_new = f * cs + i * gg
    h_new = o * tanh(layer_norm(c_new, g_c, s_c))
    return h_new, {"h": h_new, "c": c_new}
