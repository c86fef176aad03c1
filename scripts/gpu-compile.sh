#!/usr/bin/env bash
# Compiles every example for CUDA into gpu-build/NAME.so (lstm-compile), to
# be run where the GPU is (scripts/gpu-check.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p gpu-build
for f in examples/*.mlir; do
  build/bin/lstm-compile "$f" --target=cuda "$@" -o "gpu-build/$(basename "$f" .mlir).so"
done
