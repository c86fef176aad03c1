#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sets up and builds the project, then compiles and runs a real network: the
# 3-layer PyTorch-layout LSTM of examples/stack3.mlir at T=50, B=32, checked
# against the float64 numpy reference and timed. Runs on the GPU when there
# is one and the GPU path is built, on the CPU otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
PYTHON=$(grep '^config.python_executable' build/test/lit.site.cfg.py | cut -d'"' -f2)

# The GPU path: compiled ahead of time (lstm-compile, --lstm-optimize, GEMMs in
# cuBLAS) and called on PyTorch CUDA tensors; it needs a GPU and PyTorch.
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 &&
   "$PYTHON" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  mkdir -p build/network
  build/bin/lstm-compile examples/stack3.mlir --target=cuda \
    --pre-passes=lstm-optimize -o build/network/stack3.so
  echo "== examples/stack3.mlir on the GPU (--lstm-optimize, cuBLAS fp32):" \
    "correctness against numpy (float64), T=50, B=32"
  "$PYTHON" test/GPU/check_compiled.py build/network/stack3.so --cell stack3 \
    --sizes 50:32
  exit 0
fi

echo "== no GPU with PyTorch here: running on the CPU"
device=cpu
echo "== examples/stack3.mlir on $device: correctness against numpy (float64)"
"$PYTHON" test/Integration/check_example.py --lstm-run build/bin/lstm-run \
  examples/stack3.mlir --cell stack3 --sizes 50:32 --device "$device"
echo "== examples/stack3.mlir on $device: timing (T=50, B=32, I=64, H=128, 3 layers)"
build/bin/lstm-run examples/stack3.mlir --entry=forward --device="$device" \
  --random-inputs --seed=1 --shapes=50x32x64,3x32x128,3x32x128 --repeat=5
