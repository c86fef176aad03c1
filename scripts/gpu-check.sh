#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# On a machine with an NVIDIA GPU and PyTorch but no MLIR: checks every
# example compiled ahead of time into gpu-build/VARIANT/ (scripts/gpu-compile.sh)
# against the float64 reference with the variant's tolerance (VARIANTS.md),
# and runs compute-sanitizer over one.
#   scripts/gpu-check.sh [VARIANT...]   (default: every variant built)
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
variants=${*:-$(cd gpu-build && ls -d fp32 tf32 bf16 plain kernels persistent persistent-tf32 persistent-bf16 persistent-split 2>/dev/null)}
log=$(mktemp -d)
status=0
tolerance() {
  case $1 in
    tf32|persistent-tf32|persistent-split) echo 2e-3 ;;
    bf16|persistent-bf16) echo 2e-2 ;;
    *) echo 1e-5 ;;
  esac
}
# The variants run at once (one process each, all on the one GPU); their
# reports are printed in order.
for variant in $variants; do
  tol=$(tolerance "$variant")
  ( echo "== $variant (tolerance $tol)"
    rc=0
    sizes=1:1,1:4,5:1,7:3,12:5,9:300
    # The persistent kernels also at long sequences and batches that are no
    # multiple of a block's threads.
    [[ "$variant" == persistent* ]] && sizes=$sizes,50:1,100:64,33:129
    for lib in gpu-build/$variant/*.so; do
      cell=$(basename "$lib" .so)
      "$PYTHON" test/GPU/check_compiled.py "$lib" --cell "$cell" --tol $tol \
        --sizes $sizes | grep -v ' OK$' || rc=1
    done
    echo $rc > "$log/$variant.rc" ) > "$log/$variant" 2>&1 &
done
wait
for variant in $variants; do
  cat "$log/$variant"
  [ "$(cat "$log/$variant.rc")" = 0 ] || status=1
done
rm -rf "$log"
if command -v compute-sanitizer >/dev/null 2>&1; then
  for variant in $variants; do
    echo "== compute-sanitizer (memcheck) over gpu-build/$variant/lstm.so"
    compute-sanitizer --tool memcheck --error-exitcode 9 \
      "$PYTHON" test/GPU/check_compiled.py gpu-build/$variant/lstm.so --cell lstm \
      --sizes 3:5 --tol "$(tolerance "$variant")" 2>&1 | tail -n 3 || status=1
    # A stack's layers in one kernel (lstm-to-persistent{stacks=true});
    # with the depth split, also 33 rows a block: each set of warps takes
    # three tiles, their partial tiles alternating in shared memory.
    if [[ "$variant" == persistent* ]]; then
      sizes=3:5
      [ "$variant" = persistent-split ] && sizes=3:5,3:129
      for tool in racecheck synccheck; do
        echo "== compute-sanitizer ($tool) over gpu-build/$variant/stack3.so"
        compute-sanitizer --tool $tool --error-exitcode 9 \
          "$PYTHON" test/GPU/check_compiled.py gpu-build/$variant/stack3.so --cell stack3 \
          --sizes $sizes --tol "$(tolerance "$variant")" 2>&1 | tail -n 3 || status=1
      done
    fi
  done
fi
exit $status
