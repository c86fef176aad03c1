# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The tutorial's cell (docs/tutorial.md): a GRU whose update gate peeks at
the state through a peephole and whose candidate is ReLU, not in VARIANTS.md.
Run: python python/examples/peephole_gru.py (checks CPU, and the GPU if any)."""
import numpy as np

import lstmc as lc


def peephole_gru(c, x, hidden=32):
    h = c.state("h", hidden)
    W, R = c.param("W", 2 * hidden, x.size), c.param("R", 2 * hidden, hidden)
    b, p = c.param("b", 2 * hidden), c.param("p", hidden)
    (Wz, Wn), (Rz, Rn), (bz, bn) = W.split(2), R.split(2), b.split(2)
    z = lc.sigmoid(x @ Wz + h @ Rz + bz + p * h)       # one lstm.gate, with a peephole
    n = lc.relu(x @ Wn + (z * h) @ Rn + bn)             # reset by z before R_n
    h_new = (1 - z) * h + z * n
    return h_new, {"h": h_new}


def reference(x, W, R, b, p):
    """float64 numpy: the same equations."""
    H = R.shape[1]
    sig = lambda a: 1 / (1 + np.exp(-a))
    h, ys = np.zeros((x.shape[1], H)), []
    for xt in x:
        z = sig(xt @ W[:H].T + h @ R[:H].T + b[:H] + p * h)
        n = np.maximum(xt @ W[H:].T + (z * h) @ R[H:].T + b[H:], 0)
        h = (1 - z) * h + z * n
        ys.append(h)
    return np.stack(ys), h


if __name__ == "__main__":
    net = lc.Network(peephole_gru, input_size=16, hidden=32, num_layers=1)
    params = net.init_params(seed=0)
    f = net.compile(target="cpu").bind(params)
    x = np.random.default_rng(1).uniform(-1, 1, (20, 8, 16)).astype(np.float32)
    y, hT = f(x)
    ey, eh = reference(x.astype(np.float64), *(params[k].astype(np.float64)
                                               for k in ("W", "R", "b", "p")))
    err = np.linalg.norm(y - ey) / np.linalg.norm(ey)
    print(f"CPU: relative error {err:.2e}")
    assert err < 1e-5
    if lc.gpu_available():
        import torch
        g = net.compile(target="cuda").bind({k: torch.from_numpy(v).cuda()
                                             for k, v in params.items()})
        y_gpu, _ = g(torch.from_numpy(x).cuda())
        err = np.linalg.norm(y_gpu.cpu().numpy() - ey) / np.linalg.norm(ey)
        print(f"GPU: relative error {err:.2e}")
        assert err < 1e-5
