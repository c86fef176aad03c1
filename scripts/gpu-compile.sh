#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Compiles every example for CUDA into gpu-build/VARIANT/NAME.so
# (lstm-compile), to be run where the GPU is (scripts/gpu-check.sh). The
# variants: fp32, tf32 and bf16 (--lstm-optimize, GEMMs in cuBLAS; bf16 GEMM
# operands with fp32 accumulation), plain (no optimisation, cuBLAS),
# kernels (no optimisation, every GEMM a generated kernel) and persistent
# (lstm-optimize{persistent=true}: stacks keep their layers at the batch sizes
# the persistent kernels take, then each layer that lstm-to-persistent
# handles as one persistent kernel; it lists those examples), and
# persistent-tf32 (the same under --compute-type=tf32: the kernels' products
# on TF32 tensor cores from B = 16, fp32 multiply-adds below, the other GEMMs
# in TF32) and persistent-bf16 (under --compute-type=bf16: the kernels'
# products on bf16 tensor cores from B = 4, their operands rounded to bf16
# below, the other GEMMs take bf16 operands), and persistent-split
# (persistent-tf32 with --persistent-split-depth=4: each tensor-core tile's
# depth split among four warps, which the default does not do; on tensor
# cores from B = 16).
# LSTM_COMPILE names the compiler (default build/bin/lstm-compile; the
# wheel's lstmc/bin/lstm-compile on a machine without MLIR,
# scripts/gpu-wheel-check.sh).
#   [LSTM_COMPILE=PATH] scripts/gpu-compile.sh [VARIANT...]
set -euo pipefail
cd "$(dirname "$0")/.."
LSTM_COMPILE=${LSTM_COMPILE:-build/bin/lstm-compile}
variants=${*:-fp32 tf32 bf16 plain kernels persistent persistent-tf32 persistent-bf16}
for variant in $variants; do
  case $variant in
    fp32) flags="--pre-passes=lstm-optimize --compute-type=fp32" ;;
    tf32) flags="--pre-passes=lstm-optimize --compute-type=tf32" ;;
    bf16) flags="--pre-passes=lstm-optimize --compute-type=bf16" ;;
    plain) flags="" ;;
    kernels) flags="--cublas=false" ;;
    persistent) flags="--pre-passes=lstm-optimize{persistent=true} --persistent" ;;
    persistent-tf32) flags="--pre-passes=lstm-optimize{persistent=true} --persistent --compute-type=tf32" ;;
    persistent-bf16) flags="--pre-passes=lstm-optimize{persistent=true} --persistent --compute-type=bf16" ;;
    persistent-split) flags="--pre-passes=lstm-optimize{persistent=true} --persistent --compute-type=tf32 --persistent-split-depth=4" ;;
    *) echo "unknown variant $variant" >&2; exit 2 ;;
  esac
  mkdir -p "gpu-build/$variant"
  for f in examples/*.mlir; do
    "$LSTM_COMPILE" "$f" --target=cuda $flags \
      -o "gpu-build/$variant/$(basename "$f" .mlir).so"
  done
  if [[ "$variant" == persistent* ]]; then
    echo "persistent kernels in: $(cd "gpu-build/$variant" &&
      grep -l lstm_persistent_ ./*.so | sed 's|^./||; s|\.so$||' | tr '\n' ' ')"
  fi
done
