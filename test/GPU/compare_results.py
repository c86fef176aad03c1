#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Compares two directories of results written by lstm-run --outputs (one
.npy per result): the same files, the same shapes, finite values, and the
largest relative error (max |a - b| / max |a| per result) under --tol.

  compare_results.py REFERENCE_DIR RESULTS_DIR [--tol 1e-5]

Prints "NAME: N results, largest relative error E PASSED" (or FAILED) and
exits non-zero on a failure.
"""
import argparse
import glob
import os
import sys

import numpy as np


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("reference")
    p.add_argument("results")
    p.add_argument("--tol", type=float, default=1e-5)
    args = p.parse_args()
    files = sorted(glob.glob(os.path.join(args.reference, "*.npy")))
    worst, problems = 0.0, []
    for f in files:
        name = os.path.basename(f)
        other = os.path.join(args.results, name)
        if not os.path.isfile(other):
            problems.append(f"{name}: missing")
            continue
        a = np.load(f).astype(np.float64)
        b = np.load(other).astype(np.float64)
        if a.shape != b.shape:
            problems.append(f"{name}: shape {b.shape}, expected {a.shape}")
            continue
        if not np.isfinite(b).all():
            problems.append(f"{name}: NaN or Inf")
            continue
        scale = max(np.abs(a).max(initial=0.0), 1e-30)
        worst = max(worst, np.abs(a - b).max(initial=0.0) / scale)
    ok = files and not problems and worst <= args.tol
    for problem in problems:
        print(problem)
    label = os.path.basename(os.path.normpath(args.reference))
    print(f"{label}: {len(files)} results, largest relative error {worst:.2e} "
          f"{'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
