#!/usr/bin/env python3
"""The gradients of random cells against finite differences.

  random_cells_grad.py --tools DIR [--seeds 1,2,...] [--jobs N]

Each seed's cell comes from the forward generator of
test/Transforms-Integration/random_cells.py (random gates, activations,
products on inputs, states and computed values, addends, biases, peepholes,
one_minus, arith/math, several states and inputs, forward or reverse,
lengths). It is made float64 and compiled twice: with lstm-differentiate
alone and with lstm-optimize{differentiate=true}. On random inputs and
cotangents, every float argument's gradient must match central finite
differences along a random direction (1e-6 of the scale, as in
check_gradients.py), and both pipelines must give the same gradients
(1e-11).

With --layers N, each seed's cell is stacked N deep (random_cells.build),
and the optimised pipeline runs the stacks' training forward and backward
as wavefronts where they qualify (lstm-optimize's side-output-max-product
and product-links); the report says which ran so.
"""
import argparse
import concurrent.futures
import os
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "Transforms-Integration"))
import gradcheck  # noqa: E402
import random_cells  # noqa: E402

FD_TOL = 1e-6
PIPELINE_TOL = 1e-11
STEP = 1e-6


def inputs(lib, shapes, rng):
    """Random arguments: the leading ones with the generator's --shapes,
    weights from their static types."""
    args, _ = gradcheck.signature(lib.ir, "forward")
    given = [tuple(int(d) for d in s.split("x")) for s in shapes.split(",")]
    T = given[0][0]
    values = []
    for k, (shape, dtype) in enumerate(args):
        dims = given[k] if k < len(given) else tuple(shape)
        if dtype.kind == "i":
            values.append(rng.integers(1, T + 1, size=dims).astype(dtype))
        else:
            scale = 1.0 if k < len(given) else 1.0 / np.sqrt(dims[-1])
            values.append(rng.uniform(-scale, scale, size=dims))
    return values


STACK_PIPELINE = ("lstm-optimize{differentiate=true side-output-max-product=268435456 "
                  "product-links=true}")


def check(tools, seed, tmp, layers=1):
    text, shapes, desc = random_cells.build(seed, layers)
    text = gradcheck.to_f64(text)
    report = [f"seed {seed}: {desc}"]
    base = os.path.join(tmp, f"cell{seed}")
    try:
        libs = []
        optimize = STACK_PIPELINE if layers > 1 else "lstm-optimize{differentiate=true}"
        # The optimised layers' hoisted input projections as they are (3
        # threads) for odd seeds, in their steps (1 thread) for even ones
        # (lstm-hoist-by-threads).
        for name, pipeline in (("plain", "lstm-differentiate"), ("optimize", optimize)):
            os.makedirs(f"{base}.{name}", exist_ok=True)
            libs.append(gradcheck.Library(text, tools, f"{base}.{name}", pipeline,
                                          threads=3 if seed % 2 else 1))
    except RuntimeError as e:
        return False, report + [f"  {e}"]
    lib, optimized = libs
    rng = np.random.default_rng(seed)
    args = inputs(lib, shapes, rng)
    outs = lib.call("forward", *args)
    cots = [rng.standard_normal(o.shape) for o in outs]
    grads = lib.call("forward_grad", *args, *cots)
    floats = [k for k, a in enumerate(args) if a.dtype.kind == "f"]
    ok = len(grads) == len(floats)
    if not ok:
        return False, report + [f"  {len(grads)} gradients for {len(floats)} float arguments"]

    def loss(a):
        return sum(float(np.sum(o * c)) for o, c in zip(lib.call("forward", *a), cots))

    # The rounding error of a central difference: about eps · |terms of L| / h.
    rounding = 1e-8 * sum(float(np.sum(np.abs(o * c))) for o, c in zip(outs, cots))

    worst = 0.0
    for g, k in zip(grads, floats):
        if g.shape != args[k].shape or not np.isfinite(g).all():
            ok = False
            report.append(f"  argument #{k}: gradient of shape {g.shape} or not finite")
            continue
        v = rng.standard_normal(args[k].shape)
        plus, minus = list(args), list(args)
        plus[k], minus[k] = args[k] + STEP * v, args[k] - STEP * v
        fd = (loss(plus) - loss(minus)) / (2 * STEP)
        an = float(np.sum(g * v))
        scale = max(np.linalg.norm(g) * np.linalg.norm(v), 1e-300)
        err = max(abs(fd - an) - rounding, 0.0) / scale
        worst = max(worst, err)
        if not err <= FD_TOL:
            ok = False
            report.append(f"  argument #{k}: <g, v> = {an:.10e}, finite difference "
                          f"{fd:.10e} (error {err:.2e})")
    for k, (a, b) in enumerate(zip(grads, optimized.call("forward_grad", *args, *cots))):
        err = np.linalg.norm(a - b) / max(np.linalg.norm(a), 1e-300)
        if a.shape != b.shape or not err <= PIPELINE_TOL:
            ok = False
            report.append(f"  gradient {k}: the optimised pipeline differs by {err:.2e}")
    report.append(f"  max directional error {worst:.1e}")
    if layers > 1:
        loops = {d: optimized.ir.count(f'lstm.wavefront_direction = "{d}"')
                 for d in ("forward", "reverse")}
        report.append(f"  wavefronts: {loops['forward']} forward, {loops['reverse']} reverse")
    return ok, report


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tools", required=True)
    p.add_argument("--seeds", default=random_cells.DEFAULT_SEEDS)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--layers", type=int, default=1)
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    with tempfile.TemporaryDirectory(prefix="random_cells_grad_") as tmp:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = list(pool.map(lambda s: check(args.tools, s, tmp, args.layers), seeds))
    failed = 0
    for ok, report in results:
        print("\n".join(report))
        failed += not ok
    what = f"random {args.layers}-layer stacks" if args.layers > 1 else "random cells"
    print(f"{len(seeds) - failed} of {len(seeds)} {what} have correct gradients")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
