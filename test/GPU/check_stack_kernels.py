#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Stacks through the persistent kernels on the GPU: two layers of H = 128
(char-rnn's: a kernel of 512-thread blocks whose tiles split the batch's
rows forward, of 256-thread blocks whose warps take four units at once
backward) and three, and two of H = 256 (512-thread blocks whose second layer's
warps take their rows one at a time; under and above the cost model's
batch bound, 32 for the LSTM), for the LSTM, the peephole LSTM and
Cho's GRU, compiled with gradients and `--persistent`. Checks the forward's
outputs and every gradient of `forward_grad` against float64 eager autograd
(bench/train_gpu.py's cells) on fresh random inputs, at batches of one row,
of rows split unevenly among the tiles, and of tiles with no rows.

  # where MLIR is, for each CELL in lstm peephole cho_gru and L, H in
  # (2, 128), (3, 128), (2, 256):
  python3 bench/make_network.py --cell CELL --layers L --hidden H --input 24 -o DIR/CELL_lL_hH.mlir
  python3 test/GPU/signature.py --tools build/bin --gradients --pre-passes=lstm-optimize \\
      DIR/CELL_lL_hH.mlir -o DIR/CELL_lL_hH.sig.json
  lstm-compile DIR/CELL_lL_hH.mlir --target=cuda --gradients \\
      '--pre-passes=lstm-optimize{wavefront=false}' --persistent -o DIR/CELL_lL_hH.so
  # where the GPU is:
  python3 test/GPU/check_stack_kernels.py DIR [SEED] [--small]

--small: only T:B 3:5 (for compute-sanitizer). Tolerances as
check_wide_layers.py's. Prints a line per case and "PASSED" or "FAILED"
last; exits non-zero on a failure.
"""
import os
import sys

from check_wide_layers import check_networks


def main():
    args = [a for a in sys.argv[1:] if a != '--small']
    directory = args[0]
    seed = int(args[1]) if len(args) > 1 else int.from_bytes(os.urandom(4), 'little')
    print(f'seed {seed}')
    small = '--small' in sys.argv
    sizes = ((3, 5),) if small else ((1, 1), (7, 3), (50, 1), (5, 50), (4, 77))
    wide = ((3, 5),) if small else ((1, 1), (7, 3), (50, 1), (5, 17), (4, 32), (3, 40))
    cells = ('lstm', 'peephole', 'cho_gru')
    ok, worst = check_networks(
        directory, [(L, 128, cell, sizes) for L in (2, 3) for cell in cells]
        + [(2, 256, cell, wide) for cell in cells], seed)
    print(('PASSED' if ok else 'FAILED') + f': stack kernels, largest relative error {worst:.1e}')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
