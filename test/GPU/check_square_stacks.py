#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""Stacks whose layers all read as many features as they have (I = H, as
appleyard's), trained on the GPU: the whole stack is one wavefront with
every layer's input product batched, which under the TF32 and bf16
compute types lstm-concat-summed-products computes together with the
recurrent product (one product of depth 2H a diagonal). Three-layer
LSTM, peephole LSTM and Cho's GRU at H = I = 64, compiled as
bench/compile_train.sh compiles the benchmark (lstm-optimize with product
links) under fp32, tf32 and bf16; the forward's outputs and every gradient
of forward_grad against float64 eager autograd (bench/train_gpu.py's
cells) on fresh random inputs. Also, in fp32, the LSTM and the peephole
LSTM at H = I = 128, whose backward link product (depth 4H = 512) is
split at the four gates' gradients where the batch reaches 8 rows
(lstm-split-batched-gemms), and whose forward products run as one batch
of 2L matrices (lstm-concat-summed-products' stack-batches).

  # where MLIR is, for each CELL in lstm peephole cho_gru and P in fp32 tf32 bf16:
  python3 bench/make_network.py --cell CELL --layers 3 --hidden 64 --input 64 -o DIR/CELL_l3_h64.mlir
  python3 test/GPU/signature.py --tools build/bin --gradients --pre-passes=lstm-optimize \\
      DIR/CELL_l3_h64.mlir -o DIR/CELL_l3_h64_P.sig.json
  lstm-compile DIR/CELL_l3_h64.mlir --target=cuda --gradients \\
      '--pre-passes=lstm-optimize{product-links=true}' --compute-type=P -o DIR/CELL_l3_h64_P.so
  # where the GPU is:
  # and for CELL in lstm peephole, fp32 only, the same at H = I = 128 (CELL_l3_h128)
  # with '--pre-passes=lstm-optimize{side-output-max-product=268435456 product-links=true}'
  python3 test/GPU/check_square_stacks.py DIR [SEED]

Tolerances (outputs, gradients): VARIANTS.md's forward bounds (1e-5, 2e-3,
2e-2) and scripts/gpu-check-grad.sh's gradient bounds (1e-4, 1e-2, 5e-2).
Prints a line per case and "PASSED" or "FAILED" last; exits non-zero on a
failure.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from check_wide_layers import check_networks  # noqa: E402

TOLERANCES = {'fp32': (1e-5, 1e-4), 'tf32': (2e-3, 1e-2), 'bf16': (2e-2, 5e-2)}


def main():
    directory = sys.argv[1]
    seed = int(sys.argv[2]) if len(sys.argv) > 2 else int.from_bytes(os.urandom(4), 'little')
    print(f'seed {seed}')
    # T = 1 (fewer steps than layers), T < L + B, B = 1 and B not a multiple
    # of anything.
    sizes = ((1, 1), (2, 5), (7, 3), (5, 1), (9, 17))
    ok, worst = True, 0.0
    for precision, tolerances in TOLERANCES.items():
        passed, err = check_networks(
            directory, [(3, 64, cell, sizes) for cell in ('lstm', 'peephole', 'cho_gru')],
            seed, input_size=64, tolerances=tolerances, suffix='_' + precision)
        ok &= passed
        print(f'{precision}: largest relative error {err:.1e}', flush=True)
    passed, err = check_networks(
        directory, [(3, 128, cell, sizes) for cell in ('lstm', 'peephole')],
        seed, input_size=128, tolerances=TOLERANCES['fp32'], suffix='_fp32')
    ok &= passed
    print(f'fp32, H = 128: largest relative error {err:.1e}', flush=True)
    print(('PASSED' if ok else 'FAILED') + ': square stacks')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
