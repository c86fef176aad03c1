#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and PyTorch but no MLIR: checks every
# example compiled ahead of time into gpu-build/ (scripts/gpu-compile.sh)
# against the float64 reference, and runs compute-sanitizer over one.
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
status=0
for lib in gpu-build/*.so; do
  cell=$(basename "$lib" .so)
  "$PYTHON" test/GPU/check_compiled.py "$lib" --cell "$cell" "$@" || status=1
done
if command -v compute-sanitizer >/dev/null 2>&1; then
  echo "== compute-sanitizer (memcheck) over gpu-build/lstm.so"
  compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$PYTHON" test/GPU/check_compiled.py gpu-build/lstm.so --cell lstm --sizes 3:5 \
    2>&1 | tail -n 4 || status=1
fi
exit $status
