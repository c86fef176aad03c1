#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Installs what the project needs on a fresh Debian 12 machine and builds it
# into build/. Safe to run again: installs are skipped when present and the
# build is incremental.
set -euo pipefail
cd "$(dirname "$0")/.."

LLVM_PREFIX=/usr/lib/llvm-22
# zlib1g-dev, libzstd-dev: the static libz.a and libzstd.a that LLVM's
# Support needs when the Python package links MLIR statically, lld to link
# it in seconds (python/CMakeLists.txt).
APT_PACKAGES="libmlir-22-dev mlir-22-tools llvm-22-dev llvm-22-tools cmake ninja-build g++ libopenblas-dev libdnnl-dev zlib1g-dev libzstd-dev lld"

missing=""
for p in $APT_PACKAGES; do
  dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "== installing:$missing"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $missing >/dev/null
fi

PYTHON=${PYTHON:-$(command -v python3)}
PYTHON=$("$PYTHON" -c 'import sys; print(sys.executable)')
if ! "$PYTHON" -c 'import numpy' 2>/dev/null; then
  echo "== installing numpy"
  "$PYTHON" -m pip install -q numpy
fi

if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DPython3_EXECUTABLE="$PYTHON"
fi
start=$(date +%s)
# LSTMPlugin and lstm-capi-test (with the C API libraries) are what the tests
# need besides the tools; test/Embed installs all of these.
ninja -C build lstm-opt lstm-run lstm-compile mlir-doc LSTMPlugin lstm-capi-test lstm-capi-text-test \
  lstm-capi-compiler-test lstm-cpu-runtime-test lstm-cpu-runtime-blocks-test
echo "== build finished in $(( $(date +%s) - start )) s"

# The Python package (python/, docs/python.md) against this build, with what
# its tests need. torch is optional: its interop tests skip without it.
if ! "$PYTHON" -c 'import pytest, scikit_build_core' 2>/dev/null; then
  echo "== installing pytest, scikit-build-core"
  "$PYTHON" -m pip install -q pytest scikit-build-core
fi
if [ "${LSTM_SKIP_TORCH:-0}" != 1 ] && ! "$PYTHON" -c 'import torch' 2>/dev/null; then
  echo "== installing torch (for the interop tests; LSTM_SKIP_TORCH=1 skips)"
  "$PYTHON" -m pip install -q torch ||
    echo "== torch could not be installed: its tests will be skipped"
fi
# The import tests: onnx (parser, used by lstmc.from_onnx), onnxruntime (their
# reference) and g2pM (a trained LSTM checkpoint, python/tests/test_g2pm.py),
# all from PyPI; without them those tests skip.
if ! "$PYTHON" -c 'import onnx, onnxruntime, g2pM' 2>/dev/null; then
  echo "== installing onnx, onnxruntime, g2pM==0.1.2.5 (for the import tests)"
  "$PYTHON" -m pip install -q onnx onnxruntime g2pM==0.1.2.5 ||
    echo "== onnx/onnxruntime/g2pM could not be installed: their tests will be skipped"
fi
# python/examples/charrnn.py's progress bar and loss plot (it runs without them).
if ! "$PYTHON" -c 'import tqdm, matplotlib' 2>/dev/null; then
  echo "== installing tqdm, matplotlib (for python/examples/charrnn.py)"
  "$PYTHON" -m pip install -q tqdm matplotlib ||
    echo "== tqdm/matplotlib could not be installed: charrnn.py prints plain progress, no plot"
fi
# The package builds its native part (target lstmc-bundle: liblstmc.so and
# the tools with MLIR linked statically, python/CMakeLists.txt) in build/,
# reusing the objects compiled above: the project is compiled once.
echo "== pip install ./python (lstmc-bundle in build/)"
start=$(date +%s)
"$PYTHON" -m pip install -q --no-build-isolation -C build-dir="$PWD/build" ./python
echo "== package built and installed in $(( $(date +%s) - start )) s"
