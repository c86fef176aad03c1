#!/usr/bin/env bash
# Sets up and builds the project, then compiles and runs a real network: the
# 3-layer PyTorch-layout LSTM of examples/stack3.mlir at T=50, B=32, checked
# against the float64 numpy reference and timed. Runs on the GPU when there
# is one and the GPU path is built, on the CPU otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
PYTHON=$(grep '^config.python_executable' build/test/lit.site.cfg.py | cut -d'"' -f2)

device=cpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
  if build/bin/lstm-run examples/lstm.mlir --device=cuda --random-inputs >/dev/null 2>&1; then
    device=cuda
  else
    echo "== a GPU is present but this build has no GPU path yet: running on the CPU"
  fi
fi

echo "== examples/stack3.mlir on $device: correctness against numpy (float64)"
"$PYTHON" test/Integration/check_example.py --lstm-run build/bin/lstm-run \
  examples/stack3.mlir --cell stack3 --sizes 50:32 --device "$device"
echo "== examples/stack3.mlir on $device: timing (T=50, B=32, I=64, H=128, 3 layers)"
build/bin/lstm-run examples/stack3.mlir --entry=forward --device="$device" \
  --random-inputs --seed=1 --shapes=50x32x64,3x32x128,3x32x128 --repeat=5
