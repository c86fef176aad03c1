#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# On a machine with an NVIDIA GPU, without lit or MLIR's tools: what
# test/Runner/cuda-examples-*.test check, every example JIT-compiled and run
# by `lstm-run --device=cuda` against the float64 reference, for each
# variant (fp32, optimize-fp32, optimize-tf32, optimize-bf16, kernels; and,
# asked for by name, persistent: lstm-run --persistent). Needs Python with
# numpy, lstm-run with its shared libraries (LD_LIBRARY_PATH) and the CUDA
# runtime in ../lib next to it (or LSTM_CUDA_RUNTIME), and a CUDA toolkit
# with ptxas, fatbinary and libdevice: CUDA_PATH, else the one lstm-run was
# configured with.
# JOBS examples run at once (default: the number of CPUs).
#   [LSTM_RUN=build/bin/lstm-run] [CUDA_PATH=DIR] [JOBS=N] scripts/gpu-check-run.sh [VARIANT...]
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
LSTM_RUN=${LSTM_RUN:-build/bin/lstm-run}
SIZES=${SIZES:-1:1,1:4,5:1,7:3,12:5,9:300}
variants=${*:-fp32 optimize-fp32 optimize-tf32 optimize-bf16 kernels}
cuda_path=""
[ -n "${CUDA_PATH:-}" ] && cuda_path="--cuda-path=$CUDA_PATH"
JOBS=${JOBS:-$(nproc)}
log=$(mktemp -d)
status=0
for variant in $variants; do
  tol=1e-5
  case $variant in
    fp32) flags="" ;;
    optimize-fp32) flags="--pre-passes=lstm-optimize --compute-type=fp32" ;;
    optimize-tf32) flags="--pre-passes=lstm-optimize --compute-type=tf32"; tol=2e-3 ;;
    optimize-bf16) flags="--pre-passes=lstm-optimize --compute-type=bf16"; tol=2e-2 ;;
    kernels) flags="--cublas=false" ;;
    persistent) flags="--pre-passes=lstm-optimize{persistent=true} --persistent" ;;
    *) echo "unknown variant $variant" >&2; exit 2 ;;
  esac
  echo "== $variant (${flags:-no extra flags}, tolerance $tol)"
  for f in examples/*.mlir; do
    cell=$(basename "$f" .mlir)
    # Each example is one process (one compilation per size); their
    # reports are printed in order once all have finished.
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    ( "$PYTHON" test/Integration/check_example.py --lstm-run "$LSTM_RUN" "$f" \
        --cell "$cell" --device cuda --tol $tol --sizes "$SIZES" \
        --lstm-run-args="$flags $cuda_path" > "$log/$variant.$cell" 2>&1
      echo $? > "$log/$variant.$cell.rc" ) &
  done
  wait
  for f in examples/*.mlir; do
    cell=$(basename "$f" .mlir)
    grep -v ' OK$' "$log/$variant.$cell"
    [ "$(cat "$log/$variant.$cell.rc")" = 0 ] || status=1
  done
done
rm -rf "$log"
exit $status
