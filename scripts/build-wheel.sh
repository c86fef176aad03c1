#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Builds the wheel of the Python package (python/, docs/python.md) into DIST
# (default dist/), reports its size, contents and build time, and checks it
# in a fresh virtual environment: the tag is py3-none-linux_x86_64, the
# libraries need no MLIR, a network compiles and runs, the console scripts
# run the tools. What scripts/gpu-wheel-check.sh installs on the GPU machine.
#   [PYTHON=python3] [BUILD_DIR=DIR] scripts/build-wheel.sh [DIST]
# BUILD_DIR: the CMake build directory (default python/build/<wheel tag>,
# reused by the next build; scripts/setup.sh's build/ works too).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
DIST=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
PYTHON=${PYTHON:-python3}
build_dir=()
[ -n "${BUILD_DIR:-}" ] && build_dir=(-C "build-dir=$BUILD_DIR")

rm -f "$DIST"/lstmc-*.whl
start=$(date +%s)
"$PYTHON" -m pip wheel -q --no-build-isolation --no-deps -w "$DIST" "${build_dir[@]}" ./python
echo "== wheel built in $(( $(date +%s) - start )) s"
wheel=$(ls "$DIST"/lstmc-*.whl)
case $wheel in
  *-py3-none-linux_x86_64.whl) ;;
  *) echo "unexpected wheel tag: $wheel" >&2; exit 1 ;;
esac
"$PYTHON" - "$wheel" <<'PY'
import os, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
size = os.path.getsize(sys.argv[1])
print(f"== {os.path.basename(sys.argv[1])}: {size / 2**20:.1f} MiB "
      f"({sum(i.file_size for i in z.infolist()) / 2**20:.1f} MiB unpacked)")
for i in sorted(z.infolist(), key=lambda i: -i.file_size)[:12]:
    print(f"  {i.file_size / 2**20:8.2f} MiB  {i.filename}")
PY

venv=$(mktemp -d)/venv
"$PYTHON" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install -q --no-deps --no-index --ignore-installed "$wheel"
cd /tmp
"$venv/bin/python" - "$venv" <<'PY'
import os, subprocess, sys
import numpy as np
import lstmc
venv = sys.argv[1]
assert lstmc.__file__.startswith(venv), lstmc.__file__
lib = os.path.join(os.path.dirname(lstmc.__file__), "lib", "liblstmc.so")
print(subprocess.run(["ldd", lib], capture_output=True, text=True).stdout)
net = lstmc.Network(lstmc.cells.lstm, input_size=8, hidden=16, num_layers=2)
f = net.compile(target="cpu").bind(net.init_params(seed=1))
y, h, c = f(np.random.default_rng(0).uniform(-1, 1, (5, 3, 8)).astype(np.float32))
assert y.shape == (5, 3, 16) and np.isfinite(y).all()
print("== a network compiled and ran from", os.path.dirname(lstmc.__file__))
PY
"$venv/bin/lstm-compile" --help | head -n 1
"$venv/bin/lstm-run" "$ROOT/examples/lstm.mlir" --random-inputs --seed=1 \
  --shapes=3x2x64,2x128,2x128 | tail -n 1
rm -rf "$(dirname "$venv")"
echo "== $wheel OK"
