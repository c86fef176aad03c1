#!/usr/bin/env python3
"""Checks the gradient functions of an example against finite differences.

  check_gradients.py --tools DIR EXAMPLE.mlir --cell NAME [--sizes T:B,...]
                     [--pipeline P] [--compare-pipeline Q] [--seed N] [--threads N]

The example is made float64 (every f32 becomes f64), transformed with
`lstm-opt --pass-pipeline=builtin.module(P)` (P contains lstm-differentiate)
and compiled for the CPU. For each (T, B), on fresh random inputs
(reference.make_inputs) and random cotangents c_j of the results:

- the gradient g = @forward_grad(args, c) is compared with central finite
  differences of L(args) = sum_j <c_j, forward_j(args)> along a random
  direction of every float argument (and of three of its elements);
- @forward_train returns @forward's results, and @forward_backward applied to
  what it returned gives g again;
- with --compare-pipeline Q, the example compiled with Q gives the same
  gradients as with P;
- with --reference (lstm, gru, peephole), the gradients equal those of the
  hand-written numpy backward of reference_grad.py.

With --dtype f32 the example is compiled as it is (float32) and only the
comparison with the numpy reference is made (finite differences need
float64).

Tolerances (float64 throughout): a central difference with step h has a
truncation error O(h^2 L''') and a rounding error O(eps sum|terms of L| / h).
The rounding bound (with a margin of 100) is allowed on top of 1e-6 of
the derivative's scale (the norms of gradient and direction); with
h = 1e-5 the measured errors are near 1e-10 of the scale for these smooth
cells, so a wrong term of any size fails. Two pipelines reorder float64
sums only: 1e-11.
"""
import argparse
import os
import sys
import tempfile

import numpy as np

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "Integration"))
import gradcheck  # noqa: E402
import reference  # noqa: E402
import reference_grad  # noqa: E402

FD_TOL = 1e-6
PIPELINE_TOL = 1e-11
# Against the hand-written numpy backward (reference_grad.py): float64 agrees
# to rounding; float32 rounds every op to 6e-8 relative, and the recurrence
# carries it through T steps of both passes while the weight gradients sum
# T·B products: measured 2e-7 to 3e-7 (T = 7), held to VARIANTS.md's fp32
# bound, 1e-5.
REFERENCE_TOL = {"f64": 1e-10, "f32": 1e-5}


def loss(lib, args, cots):
    outs = lib.call("forward", *args)
    return sum(float(np.sum(o * c)) for o, c in zip(outs, cots))


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-300)


def check_size(lib, other, cell, T, B, rng, step, dtype="f64", against_reference=False):
    spec = reference.spec_of(cell)[0]
    if T == 0:
        # reference.make_inputs draws lengths in [1, T]: with no steps, every
        # sequence is empty.
        args = [np.zeros([0 if d == "T" else B if d == "B" else d for d in shape],
                         np.int32 if kind == "lengths" else np.float32)
                for _, shape, kind in spec]
        args = [a if kind == "lengths" else rng.uniform(-1, 1, a.shape)
                for a, (_, _, kind) in zip(args, spec)]
    else:
        args = reference.make_inputs(cell, T, B, rng)
    args = [a.astype(np.float64) if a.dtype.kind == "f" else a for a in args]
    outs = lib.call("forward", *args)
    cots = [rng.standard_normal(o.shape) for o in outs]
    if dtype == "f32":  # what the library sees
        cots = [c.astype(np.float32).astype(np.float64) for c in cots]
    grads = lib.call("forward_grad", *args, *cots)
    floats = [k for k, a in enumerate(args) if a.dtype.kind == "f"]
    fails = []
    if len(grads) != len(floats):
        return [f"@forward_grad returned {len(grads)} gradients for {len(floats)} float "
                "arguments"], ""
    worst = 0.0
    # The rounding error of a central difference: about eps · |terms of L| / h
    # (with a margin of 100).
    rounding = 1e-14 / step * sum(float(np.sum(np.abs(o * c))) for o, c in zip(outs, cots))
    if against_reference:
        expected = reference_grad.GRADIENTS[cell](*args, *cots)
        for g, e, k in zip(grads, expected, floats):
            err = rel(g.astype(np.float64), e)
            worst = max(worst, err)
            if g.shape != e.shape or not err <= REFERENCE_TOL[dtype]:
                fails.append(f"gradient of {spec[k][0]}: relative error {err:.2e} against "
                             f"the numpy backward (tolerance {REFERENCE_TOL[dtype]:g})")
    for g, k in zip(grads, floats if dtype == "f64" else []):
        name = spec[k][0]
        if g.shape != args[k].shape:
            fails.append(f"gradient of {name}: shape {g.shape}, expected {args[k].shape}")
            continue
        if not np.isfinite(g).all():
            fails.append(f"gradient of {name}: NaN/Inf")
            continue
        directions = [rng.standard_normal(args[k].shape)]
        for _ in range(3 if args[k].size else 0):
            e = np.zeros(args[k].shape)
            e.flat[rng.integers(args[k].size)] = 1.0
            directions.append(e)
        for v in directions:
            plus = [a.copy() for a in args]
            minus = [a.copy() for a in args]
            plus[k] = plus[k] + step * v
            minus[k] = minus[k] - step * v
            fd = (loss(lib, plus, cots) - loss(lib, minus, cots)) / (2 * step)
            an = float(np.sum(g * v))
            scale = max(np.linalg.norm(g) * np.linalg.norm(v), 1e-300)
            err = max(abs(fd - an) - rounding, 0.0) / scale
            worst = max(worst, err)
            if not err <= FD_TOL:
                fails.append(f"gradient of {name}: <g, v> = {an:.10e}, finite difference "
                             f"{fd:.10e} (error {err:.2e} of the scale {scale:.2e})")

    # The training forward and the backward give the same.
    trained = lib.call("forward_train", *args)
    for k, (a, b) in enumerate(zip(outs, trained)):
        if a.shape != b.shape or not np.array_equal(a, b):
            fails.append(f"@forward_train result {k} differs from @forward's")
    again = lib.call("forward_backward", *args, *trained, *cots)
    for k, (a, b) in enumerate(zip(grads, again)):
        same = 1e-13 if dtype == "f64" else 1e-6
        if a.shape != b.shape or not np.allclose(a, b, rtol=same, atol=same):
            fails.append(f"@forward_backward gradient {k} differs from @forward_grad's")

    if other is not None:
        for k, (a, b) in enumerate(zip(grads, other.call("forward_grad", *args, *cots))):
            n = max(np.linalg.norm(a), 1e-300)
            err = np.linalg.norm(a - b) / n
            if a.shape != b.shape or not err <= PIPELINE_TOL:
                fails.append(f"gradient {k}: the two pipelines differ by {err:.2e}")
    saved = sum(t.nbytes for t in trained[len(outs):])
    return fails, f"max error {worst:.1e}, saved {saved} bytes"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("example")
    p.add_argument("--tools", required=True, help="directory with lstm-opt and lstm-compile")
    p.add_argument("--cell", required=True, choices=sorted(reference.EXAMPLES) + sorted(reference.NETWORKS))
    p.add_argument("--sizes", default="0:2,1:1,4:3")
    p.add_argument("--pipeline", default="lstm-differentiate")
    p.add_argument("--compare-pipeline", default=None)
    p.add_argument("--step", type=float, default=1e-5)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--dtype", choices=["f64", "f32"], default="f64")
    p.add_argument("--threads", type=int, default=None,
                   help="the CPU runtime's threads (default: one per core); with "
                        "fewer than 3, hoisted input projections run in the steps")
    p.add_argument("--reference", action="store_true",
                   help="compare with the numpy backward of reference_grad.py")
    args = p.parse_args()
    if args.reference and args.cell not in reference_grad.GRADIENTS:
        p.error(f"no numpy backward for {args.cell}")
    seed = args.seed if args.seed is not None else int.from_bytes(os.urandom(4), "little")
    with open(args.example) as f:
        text = f.read()
    if args.dtype == "f64":
        text = gradcheck.to_f64(text)
    print(f"{args.cell}: {args.example} (seed {seed}, pipeline {args.pipeline}"
          + (f", against {args.compare_pipeline}" if args.compare_pipeline else "") + ")")
    rng = np.random.default_rng(seed)
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        os.mkdir(os.path.join(tmp, "a"))
        lib = gradcheck.Library(text, args.tools, os.path.join(tmp, "a"), args.pipeline,
                                threads=args.threads)
        other = None
        if args.compare_pipeline:
            os.mkdir(os.path.join(tmp, "b"))
            other = gradcheck.Library(text, args.tools, os.path.join(tmp, "b"),
                                      args.compare_pipeline, threads=args.threads)
        for size in args.sizes.split(","):
            T, B = (int(v) for v in size.split(":"))
            fails, summary = check_size(lib, other, args.cell, T, B, rng, args.step,
                                        args.dtype, args.reference)
            print(f"{args.cell} T={T} B={B}: {summary} {'FAIL' if fails else 'OK'}")
            for f in fails:
                print("  error: " + f)
            failed |= bool(fails)
    print(("FAILED" if failed else "PASSED") + f": {args.cell} (seed {seed})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
