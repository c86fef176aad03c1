#!/usr/bin/env bash
# Compiles every example for CUDA into gpu-build/VARIANT/NAME.so
# (lstm-compile), to be run where the GPU is (scripts/gpu-check.sh). The
# variants: fp32 (cuBLAS, no TF32), tf32, and kernels (every GEMM a generated
# kernel, no cuBLAS).
#   scripts/gpu-compile.sh [VARIANT...]
set -euo pipefail
cd "$(dirname "$0")/.."
variants=${*:-fp32 tf32 kernels}
for variant in $variants; do
  case $variant in
    fp32) flags="--compute-type=fp32" ;;
    tf32) flags="--compute-type=tf32" ;;
    kernels) flags="--cublas=false" ;;
    *) echo "unknown variant $variant" >&2; exit 2 ;;
  esac
  mkdir -p "gpu-build/$variant"
  for f in examples/*.mlir; do
    build/bin/lstm-compile "$f" --target=cuda $flags \
      -o "gpu-build/$variant/$(basename "$f" .mlir).so"
  done
done
