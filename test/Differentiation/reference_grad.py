"""Float64 numpy backward passes (backpropagation through time) for three
examples, written by hand from docs/VARIANTS.md, independently of the
compiler and of its rules: the nn.LSTM cell (examples/lstm.mlir), nn.GRU
(examples/gru.mlir) and the peephole LSTM (examples/peephole.mlir).

Each function takes the example's arguments (reference.EXAMPLES order) and
the cotangents of its results, and returns the gradient of every float
argument, in order.
"""
import numpy as np


def sigmoid(a):
    return 1.0 / (1.0 + np.exp(-a))


def lstm(x, h0, c0, W, R, bW, bR, dy, dhT, dcT):
    T = x.shape[0]
    H = h0.shape[1]
    h, c, tape = h0, c0, []
    for t in range(T):
        a = x[t] @ W.T + bW + h @ R.T + bR
        i, f = sigmoid(a[:, :H]), sigmoid(a[:, H:2 * H])
        g, o = np.tanh(a[:, 2 * H:3 * H]), sigmoid(a[:, 3 * H:])
        c_new = f * c + i * g
        tc = np.tanh(c_new)
        tape.append((h, c, i, f, g, o, tc))
        h, c = o * tc, c_new
    dW, dR, db = np.zeros_like(W), np.zeros_like(R), np.zeros_like(bW)
    dx = np.zeros_like(x)
    dh, dc = dhT.copy(), dcT.copy()
    for t in reversed(range(T)):
        h_prev, c_prev, i, f, g, o, tc = tape[t]
        dh = dh + dy[t]
        do = dh * tc
        dc = dc + dh * o * (1.0 - tc * tc)
        di, dg, df = dc * g, dc * i, dc * c_prev
        dc = dc * f
        dZ = np.concatenate([di * i * (1 - i), df * f * (1 - f), dg * (1 - g * g),
                             do * o * (1 - o)], axis=1)
        dW += dZ.T @ x[t]
        dR += dZ.T @ h_prev
        db += dZ.sum(0)
        dx[t] = dZ @ W
        dh = dZ @ R
    return [dx, dh, dc, dW, dR, db, db.copy()]


def gru(x, h0, W, R, bW, bR, dy, dhT):
    T = x.shape[0]
    H = h0.shape[1]
    h, tape = h0, []
    for t in range(T):
        gx = x[t] @ W.T + bW
        gh = h @ R.T + bR
        r = sigmoid(gx[:, :H] + gh[:, :H])
        z = sigmoid(gx[:, H:2 * H] + gh[:, H:2 * H])
        hn = gh[:, 2 * H:]
        n = np.tanh(gx[:, 2 * H:] + r * hn)
        tape.append((h, r, z, n, hn))
        h = (1 - z) * n + z * h
    dW, dR = np.zeros_like(W), np.zeros_like(R)
    dbW, dbR = np.zeros_like(bW), np.zeros_like(bR)
    dx = np.zeros_like(x)
    dh = dhT.copy()
    for t in reversed(range(T)):
        h_prev, r, z, n, hn = tape[t]
        dh = dh + dy[t]
        dn = dh * (1 - z)
        dz = dh * (h_prev - n)
        dzn = dn * (1 - n * n)
        dr = dzn * hn
        dzr, dzz = dr * r * (1 - r), dz * z * (1 - z)
        dX = np.concatenate([dzr, dzz, dzn], axis=1)
        dHg = np.concatenate([dzr, dzz, dzn * r], axis=1)
        dW += dX.T @ x[t]
        dbW += dX.sum(0)
        dR += dHg.T @ h_prev
        dbR += dHg.sum(0)
        dx[t] = dX @ W
        dh = dh * z + dHg @ R
    return [dx, dh, dW, dR, dbW, dbR]


def peephole(x, h0, c0, W, R, bW, bR, P, dy, dhT, dcT):
    """Greff's vanilla LSTM: gates stacked i, f, z, o; peepholes i, f, o; the
    output gate peeps at the new cell state."""
    T = x.shape[0]
    H = h0.shape[1]
    pi, pf, po = P
    h, c, tape = h0, c0, []
    for t in range(T):
        a = x[t] @ W.T + h @ R.T + bW + bR
        i = sigmoid(a[:, :H] + pi * c)
        f = sigmoid(a[:, H:2 * H] + pf * c)
        z = np.tanh(a[:, 2 * H:3 * H])
        c_new = z * i + c * f
        o = sigmoid(a[:, 3 * H:] + po * c_new)
        tc = np.tanh(c_new)
        tape.append((h, c, i, f, z, o, c_new, tc))
        h, c = tc * o, c_new
    dW, dR, db = np.zeros_like(W), np.zeros_like(R), np.zeros_like(bW)
    dP = np.zeros_like(P)
    dx = np.zeros_like(x)
    dh, dc = dhT.copy(), dcT.copy()
    for t in reversed(range(T)):
        h_prev, c_prev, i, f, z, o, c_new, tc = tape[t]
        dh = dh + dy[t]
        dao = dh * tc * o * (1 - o)
        dc = dc + dh * o * (1 - tc * tc) + dao * po
        dP[2] += (dao * c_new).sum(0)
        dai = dc * z * i * (1 - i)
        daf = dc * c_prev * f * (1 - f)
        daz = dc * i * (1 - z * z)
        dP[0] += (dai * c_prev).sum(0)
        dP[1] += (daf * c_prev).sum(0)
        dc = dc * f + dai * pi + daf * pf
        dZ = np.concatenate([dai, daf, daz, dao], axis=1)
        dW += dZ.T @ x[t]
        dR += dZ.T @ h_prev
        db += dZ.sum(0)
        dx[t] = dZ @ W
        dh = dZ @ R
    return [dx, dh, dc, dW, dR, db, db.copy(), dP]


GRADIENTS = {"lstm": lstm, "gru": gru, "peephole": peephole}
