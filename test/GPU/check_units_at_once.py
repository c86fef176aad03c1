#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The persistent kernels' warps taking one, two or four units at once
(`lstm-to-persistent{units-at-once}`), on the GPU: stacks of two H = 128
layers (one kernel each way; the backward's products have one column a
unit) and single layers of H = 256 and of H = 100 (whose last block's
tile has units past the layer's: 8 a block), for the LSTM, the peephole
LSTM and
Cho's GRU, compiled with gradients under each layout. Checks the forward's
outputs and every gradient of `forward_grad` against float64 eager
autograd (bench/train_gpu.py's cells) on fresh random inputs, at batches
of one row, of rows split unevenly among the tiles and the warps' groups,
and of tiles with none.

  # where MLIR is, for each CELL in lstm peephole cho_gru, (L, H) in
  # (2, 128), (1, 256), (1, 100) (NAME: CELL_lL_hH, or CELL_hH for L = 1),
  # and (SUFFIX, OPTIONS) in (_u1, units-at-once=1), (_u2, units-at-once=2),
  # (_u4b256, units-at-once=4 block-size=256):
  python3 bench/make_network.py --cell CELL --layers L --hidden H --input 24 -o DIR/NAME.mlir
  python3 test/GPU/signature.py --tools build/bin --gradients --pre-passes=lstm-optimize \\
      DIR/NAME.mlir -o DIR/NAMESUFFIX.sig.json
  lstm-compile DIR/NAME.mlir --target=cuda --gradients \\
      '--pre-passes=lstm-optimize{wavefront=false},lstm-to-persistent{shared-memory=229376 OPTIONS}' \\
      -o DIR/NAMESUFFIX.so
  # where the GPU is:
  python3 test/GPU/check_units_at_once.py DIR [SEED]

Tolerances as check_wide_layers.py's. Prints a line per case and "PASSED"
or "FAILED" last; exits non-zero on a failure.
"""

import os
import sys

from check_wide_layers import check_networks

LAYOUTS = ('_u1', '_u2', '_u4b256')


def main():
    directory = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int.from_bytes(os.urandom(4), 'little')
    print(f'seed {seed}')
    stacks = ((1, 1), (7, 3), (50, 1), (5, 50), (4, 77))
    layers = ((1, 1), (7, 3), (5, 17), (4, 33))
    cells = ('lstm', 'peephole', 'cho_gru')
    ok, worst = True, 0.0
    for suffix in LAYOUTS:
        passed, err = check_networks(
            directory, [(2, 128, cell, stacks) for cell in cells]
            + [(1, H, cell, layers) for H in (256, 100) for cell in cells],
            seed, suffix=suffix)
        ok &= passed
        worst = max(worst, err)
    print(('PASSED' if ok else 'FAILED') + f': units at once, largest relative error {worst:.1e}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
