"""Accuracy of lstm-approximate-math against float64, over the whole f32 range.

Runs Inputs/functions.mlir (tanh, exp, expm1, log, log1p and the sigmoid as the
lowering writes it) through `lstm-run --device=cpu` with the approximations
and without them (libm), on float32 inputs that cover every binade of
both signs, a dense grid where the functions bend, the limits (0, denormals,
the largest finite floats, infinities, NaN), and checks the functions the pass approximates by default (tanh, exp,
expm1, log1p; `log` is left to libm: upstream's polynomial flushes
denormal inputs, log(1e-45) = -87.3 instead of -103.3) and the sigmoid
against numpy in float64 of the same inputs:

- where the float64 value is a finite, normal float32: relative error at most
  `bound` (a few ulp; the fp32 tolerance of VARIANTS.md is 1e-5 on whole
  outputs, and a cell's error is at most a small multiple of these);
- where it overflows float32 or is infinite: the same infinity;
- where it is NaN (log of a negative number, NaN in): NaN;
- tanh and the sigmoid stay within [-1, 1] and [0, 1].

Prints the largest error of each function with and without the
approximations; exits nonzero on any failure.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

# Largest relative error allowed per element, per function: a few ulp
# (measured: at most 2.8e-7, libm's at most 1.4e-7).
BOUNDS = {"tanh": 1e-6, "exp": 1e-6, "expm1": 1e-6, "log": 1e-6, "log1p": 1e-6,
          "sigmoid": 1e-6}
NAMES = ["tanh", "exp", "expm1", "log", "log1p", "sigmoid"]
# What the default pipeline approximates (and the sigmoid built on exp):
# these must meet the bounds; `log` stays libm and is only reported.
CHECKED = ["tanh", "exp", "expm1", "log1p", "sigmoid"]


def inputs():
    rng = np.random.default_rng(20261123)
    finfo = np.finfo(np.float32)
    # Every binade of both signs, a few random mantissas each.
    exps = np.arange(-149, 128)
    mags = np.ldexp(1.0 + rng.random((exps.size, 8)), exps[:, None]).ravel()
    mags = mags[np.isfinite(mags.astype(np.float32))]
    grid = np.linspace(-100.0, 100.0, 200001)
    special = [0.0, -0.0, finfo.tiny, -finfo.tiny, finfo.max, -finfo.max,
               np.inf, -np.inf, np.nan, 88.72, 88.73, -87.3, -103.9, -104.0,
               9.0, -9.0, 1e-30, -1e-30, -0.999999, -1.0, -1.000001]
    x = np.concatenate([mags, -mags, grid, special]).astype(np.float32)
    return x


def reference(name, x):
    x = x.astype(np.float64)
    with np.errstate(all="ignore"):
        return {"tanh": np.tanh, "exp": np.exp, "expm1": np.expm1, "log": np.log,
                "log1p": np.log1p, "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v))}[name](x)


def run(lstm_run, mlir, x, approximate, tmp):
    xin = os.path.join(tmp, "x.npy")
    np.save(xin, x)
    out = os.path.join(tmp, "approx" if approximate else "libm")
    os.makedirs(out, exist_ok=True)
    cmd = [lstm_run, mlir, "--entry=forward", "--device=cpu", "--inputs=" + xin,
           "--outputs=" + out, "--approximate-math=" + ("true" if approximate else "false")]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"lstm-run failed: {' '.join(cmd)}\n{proc.stderr}")
    return [np.load(os.path.join(out, f"{k}.npy")) for k in range(len(NAMES))]


def check(name, x, got, bound):
    ref = reference(name, x)
    failures = []
    f32 = np.finfo(np.float32)
    with np.errstate(all="ignore"):
        finite = np.isfinite(ref) & (np.abs(ref) <= f32.max) & \
            ((np.abs(ref) >= f32.tiny) | (ref == 0))
        overflow = ~np.isnan(ref) & ~finite & (np.abs(ref) > f32.max)
        rel = np.abs(got.astype(np.float64) - ref) / np.maximum(np.abs(ref), f32.tiny)
    worst = float(np.max(rel[finite])) if finite.any() else 0.0
    if worst > bound:
        i = np.flatnonzero(finite)[np.argmax(rel[finite])]
        failures.append(f"{name}({x[i]!r}) = {got[i]!r}, float64 {ref[i]!r}: "
                        f"relative error {worst:.3g} > {bound:g}")
    with np.errstate(invalid="ignore"):
        bad = overflow & (got != np.sign(ref) * np.inf)
    if bad.any():
        i = np.flatnonzero(bad)[0]
        failures.append(f"{name}({x[i]!r}) = {got[i]!r}, expected {np.sign(ref[i]) * np.inf}")
    bad = np.isnan(ref) & ~np.isnan(got)
    if bad.any():
        i = np.flatnonzero(bad)[0]
        failures.append(f"{name}({x[i]!r}) = {got[i]!r}, expected NaN")
    bad = ~np.isnan(ref) & np.isnan(got)
    if bad.any():
        i = np.flatnonzero(bad)[0]
        failures.append(f"{name}({x[i]!r}) = NaN, float64 {ref[i]!r}")
    if name == "tanh" and (np.abs(got[~np.isnan(got)]) > 1).any():
        failures.append("tanh leaves [-1, 1]")
    if name == "sigmoid" and ((got < 0) | (got > 1)).any():
        failures.append("the sigmoid leaves [0, 1]")
    return worst, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lstm-run", required=True)
    ap.add_argument("--mlir", default=os.path.join(os.path.dirname(__file__), "Inputs", "functions.mlir"))
    args = ap.parse_args()
    x = inputs()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        approx = run(args.lstm_run, args.mlir, x, True, tmp)
        libm = run(args.lstm_run, args.mlir, x, False, tmp)
    print(f"{x.size} inputs; largest relative error where the result is a normal float32")
    # The column without the pass: libm, or upstream's math-to-llvm
    # lowering where it has its own (expm1 as exp(x) - 1, which loses all
    # digits for tiny x).
    print(f"{'function':<8} {'approximated':>13} {'without':>10} {'bound':>8}")
    for k, name in enumerate(NAMES):
        worst, fails = check(name, x, approx[k], BOUNDS[name])
        worst_libm, _ = check(name, x, libm[k], BOUNDS[name])
        if name in CHECKED:
            failures += fails
        print(f"{name:<8} {worst:>13.3g} {worst_libm:>10.3g} {BOUNDS[name]:>8g}")
    for f in failures:
        print("FAIL:", f)
    if failures:
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
