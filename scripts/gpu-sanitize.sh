#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# On a machine with an NVIDIA GPU, PyTorch and compute-sanitizer, but no
# MLIR: compute-sanitizer's memcheck, racecheck and synccheck over the
# networks compiled ahead of time into gpu-build/VARIANT/ (made here by
# scripts/gpu-compile.sh, every example of examples/). One sanitized process
# per (tool, variant) checks all the variant's libraries against the float64
# reference (test/GPU/check_all_compiled.py), so PyTorch and CUDA start once
# per process; JOBS of them run at once on the GPU.
#
#   [TOOLS="memcheck racecheck synccheck"] [VARIANTS="fp32 tf32 ..."]
#   [JOBS=N] [CUDA_PATH=DIR] scripts/gpu-sanitize.sh
#
# Sizes: memcheck at T:B = 1:1, 3:5 and 2:300 (300 rows do not fill whole
# 256-thread blocks: the bounds checks of the kernels' last block run);
# racecheck and synccheck at 3:5. Exits non-zero if any check fails or any
# tool reports an error, and prints each process's ERROR SUMMARY.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-4}
tools=${TOOLS:-memcheck racecheck synccheck}
variants=${VARIANTS:-$(cd gpu-build 2>/dev/null && ls -d fp32 tf32 bf16 plain kernels 2>/dev/null)}
if [ -z "$variants" ]; then
  echo "no gpu-build/VARIANT/ here: compile the libraries with scripts/gpu-compile.sh (where MLIR is) and carry gpu-build/" >&2
  exit 2
fi
sanitizer=$(command -v compute-sanitizer || true)
for dir in "${CUDA_PATH:-}" /usr/local/cuda /usr/local/cuda-13 /opt/nvidia/cuda; do
  [ -z "$sanitizer" ] && [ -n "$dir" ] && [ -x "$dir/bin/compute-sanitizer" ] &&
    sanitizer=$dir/bin/compute-sanitizer
done
if [ -z "$sanitizer" ]; then
  echo "compute-sanitizer not found (PATH, CUDA_PATH/bin, /usr/local/cuda/bin)" >&2
  exit 2
fi
tolerance() {
  case $1 in
    tf32) echo 2e-3 ;;
    bf16) echo 2e-2 ;;
    *) echo 1e-5 ;;
  esac
}
log=$(mktemp -d)
start=$(date +%s)
for tool in $tools; do
  sizes=3:5
  [ "$tool" = memcheck ] && sizes=1:1,3:5,2:300
  for variant in $variants; do
    while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
    ( "$sanitizer" --tool "$tool" --error-exitcode 9 \
        "$PYTHON" test/GPU/check_all_compiled.py "gpu-build/$variant" \
        --sizes "$sizes" --tol "$(tolerance "$variant")" \
        > "$log/$tool.$variant" 2>&1
      echo $? > "$log/$tool.$variant.rc" ) &
  done
done
wait
status=0
for tool in $tools; do
  for variant in $variants; do
    rc=$(cat "$log/$tool.$variant.rc")
    summary=$(grep -h "ERROR SUMMARY" "$log/$tool.$variant" | tail -n 1)
    passed=$(grep -h "libraries passed" "$log/$tool.$variant" | tail -n 1)
    echo "== $tool $variant: ${passed:-no result} | ${summary:-no summary} (exit $rc)"
    if [ "$rc" != 0 ]; then
      status=1
      # What failed: the failing checks and the sanitizer's reports.
      grep -E "FAIL|error|Error|=========" "$log/$tool.$variant" | grep -v " OK$" | head -n 60
    fi
  done
done
echo "== compute-sanitizer over $(echo $variants | wc -w) variants, $(echo $tools | wc -w) tools in $(( $(date +%s) - start )) s"
rm -rf "$log"
exit $status
