#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# On the GPU machine (Python with numpy and PyTorch, an NVIDIA GPU and its
# driver, a CUDA toolkit with ptxas and libdevice, a C++ compiler driver;
# no MLIR, no network): installs the wheel built elsewhere
# (scripts/build-wheel.sh) into a fresh directory and checks that it
# compiles and runs networks there:
#   1. lstmc networks compiled for CUDA in-process, against float64
#      references (numpy, test/Integration/reference.py; PyTorch's nn.LSTM);
#   2. `lstm-run --device=cuda` on examples/lstm.mlir, against the same
#      inputs run by `lstm-run --device=cpu`;
#   3. lstmc's GPU tests (python/tests/test_gpu.py, test_package.py);
#   4. the GPU checks of the examples, compiled there: scripts/gpu-compile.sh
#      with the wheel's lstm-compile then scripts/gpu-check.sh, and
#      scripts/gpu-check-run.sh with its lstm-run (variants: $VARIANTS,
#      default "fp32 kernels"; VARIANTS="" skips them).
# and prints a table. Run from the repository checkout:
#   bash scripts/gpu-wheel-check.sh [WHEEL_OR_DIR]     (default: dist/)
# PYTHON (default python3) is the interpreter to install into; CUDA_HOME or
# CUDA_PATH names the toolkit if its ptxas is not on PATH.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
PYTHON=${PYTHON:-python3}
VARIANTS=${VARIANTS-fp32 kernels}
src=${1:-dist}
if [ -d "$src" ]; then
  wheel=$(ls "$src"/lstmc-*-py3-none-linux_x86_64.whl 2>/dev/null | tail -n 1)
else
  wheel=$src
fi
[ -f "$wheel" ] || { echo "no lstmc wheel in $src" >&2; exit 2; }

work=$(mktemp -d /tmp/lstmc-wheel-check.XXXXXX)
site=$work/site
results=$work/results
: > "$results"
row() { printf '%s\t%s\t%s\n' "$1" "$2" "$3" >> "$results"; }

echo "== installing $wheel into $site"
if ! "$PYTHON" -m pip install -q --no-deps --no-index --target "$site" "$wheel"; then
  echo "== pip failed: unpacking the wheel instead"
  "$PYTHON" - "$wheel" "$site" <<'EOF'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for info in z.infolist():
        path = z.extract(info, sys.argv[2])
        mode = info.external_attr >> 16
        if mode:
            os.chmod(path, mode)
EOF
fi
export PYTHONPATH=$site${PYTHONPATH:+:$PYTHONPATH}
PKG=$site/lstmc
LSTM_RUN=$PKG/bin/lstm-run
LSTM_COMPILE=$PKG/bin/lstm-compile

echo "== machine"
"$PYTHON" -c 'import sys, platform; print("python", sys.version.split()[0], platform.libc_ver())'
"$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available() and torch.cuda.get_device_name(0))' 2>&1 | tail -n 1
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "ptxas: $(command -v ptxas || echo "not on PATH (CUDA_HOME=${CUDA_HOME:-}, CUDA_PATH=${CUDA_PATH:-})")"
echo "c++: $(command -v c++ || echo missing)"
echo "== the wheel's libraries (ldd)"
for f in "$PKG/lib/liblstmc.so" "$LSTM_RUN" "$PKG/lib/liblstm_cuda_runtime.so"; do
  echo "$(basename "$f"):"; ldd "$f" | sed 's/^/  /'
done
du -sh "$PKG" | sed 's/^/installed size: /'

echo "== 1. lstmc networks on CUDA against float64 references"
"$PYTHON" - "$results" <<'EOF'
import os, sys, time
sys.path.insert(0, "python/tests")
sys.path.insert(0, "test/Integration")
import numpy as np
import lstmc as lc
import reference as ref
from cases import network

results = sys.argv[1]
print("lstmc from", os.path.dirname(lc.__file__))
import torch
assert torch.cuda.is_available(), "PyTorch sees no GPU"
TOL = 1e-4
seed = int(time.time()) % 100000
print("seed", seed)
rng = np.random.default_rng(seed)

def record(name, err, tol, secs):
    ok = bool(np.isfinite(err) and err < tol)
    with open(results, "a") as f:
        f.write(f"lstmc {name}\t{'PASS' if ok else 'FAIL'}\t"
                f"rel.err {err:.2e} (tol {tol:g}), compile {secs:.1f} s\n")
    print(f"{name}: rel.err {err:.2e} tol {tol:g} compile {secs:.1f} s", "OK" if ok else "FAIL")

def rel(o, e):
    return float(np.linalg.norm(o - e) / max(np.linalg.norm(e), 1e-30))

# Examples of examples/ from the DSL, against test/Integration/reference.py.
for name, (T, B) in [("lstm", (7, 5)), ("gru", (12, 3)), ("varlen", (9, 4)),
                     ("stack3", (5, 2))]:
    try:
        t0 = time.time()
        f = network(name).compile(target="cuda")
        secs = time.time() - t0
        inputs = ref.make_inputs(name, T, B, rng)
        outs = f(*[torch.from_numpy(a).cuda() for a in inputs])
        torch.cuda.synchronize()
        err = max(rel(o.cpu().numpy().astype(np.float64), e)
                  for o, e in zip(outs, ref.expected(name, inputs)))
        record(f"{name} T={T} B={B}", err, TOL, secs)
    except Exception as e:  # noqa: BLE001
        record(f"{name} T={T} B={B}", float("nan"), TOL, 0.0)
        print(f"{name}: {type(e).__name__}: {e}")

# A 2-layer nn.LSTM (float32 on the GPU) against the module in float64.
try:
    torch.manual_seed(seed)
    m = torch.nn.LSTM(16, 32, num_layers=2).eval()
    t0 = time.time()
    f = lc.TorchLike(m, target="cuda")
    secs = time.time() - t0
    x = torch.from_numpy(rng.uniform(-1, 1, (20, 8, 16)).astype(np.float32))
    y, (h, c) = f(x.cuda())
    with torch.no_grad():
        ey, (eh, ec) = m.double()(x.double())
    err = max(rel(a.cpu().double().numpy(), b.numpy()) for a, b in
              [(y, ey), (h, eh), (c, ec)])
    record("nn.LSTM(16, 32, 2) T=20 B=8", err, TOL, secs)
except Exception as e:  # noqa: BLE001
    record("nn.LSTM(16, 32, 2) T=20 B=8", float("nan"), TOL, 0.0)
    print(f"nn.LSTM: {type(e).__name__}: {e}")
EOF
[ $? = 0 ] || row "lstmc networks on CUDA" FAIL "the check stopped: see above"

echo "== 2. lstm-run --device=cuda examples/lstm.mlir"
# The console script of the wheel runs lstmc/bin/lstm-run.
run_tool() { "$PYTHON" -c 'import sys; from lstmc import _tools; _tools.lstm_run()' "$@"; }
args=(examples/lstm.mlir --random-inputs --seed=7 --shapes=20x8x64,8x128,8x128)
mkdir -p "$work/cpu" "$work/cuda"
if run_tool "${args[@]}" --device=cuda --repeat=10 --outputs="$work/cuda" > "$work/run.log" 2>&1 &&
   "$LSTM_RUN" "${args[@]}" --device=cpu --outputs="$work/cpu" >> "$work/run.log" 2>&1; then
  cat "$work/run.log"
  "$PYTHON" - "$work" "$results" <<'EOF'
import glob, os, sys
import numpy as np
work, results = sys.argv[1:]
errs = []
for f in sorted(glob.glob(os.path.join(work, "cuda", "*.npy"))):
    a = np.load(f).astype(np.float64)
    b = np.load(os.path.join(work, "cpu", os.path.basename(f))).astype(np.float64)
    errs.append(np.linalg.norm(a - b) / np.linalg.norm(b))
err = max(errs) if errs else float("nan")
ok = bool(errs) and err < 1e-4
times = [l.split()[1] for l in open(os.path.join(work, "run.log")) if l.startswith("time:")]
with open(results, "a") as f:
    f.write(f"lstm-run --device=cuda lstm.mlir\t{'PASS' if ok else 'FAIL'}\t"
            f"vs --device=cpu rel.err {err:.2e}, {len(errs)} results, time {times[0] if times else '?'} ms\n")
EOF
else
  cat "$work/run.log"
  row "lstm-run --device=cuda lstm.mlir" FAIL "see the log above"
fi

echo "== 3. lstmc's GPU tests (python/tests/test_gpu.py, test_package.py)"
if ! "$PYTHON" -c 'import pytest' 2>/dev/null; then
  row "pytest test_gpu.py test_package.py" SKIP "pytest is not installed"
elif (cd "$work" && "$PYTHON" -m pytest -q -p no:cacheprovider -rs \
      "$ROOT/python/tests/test_gpu.py" "$ROOT/python/tests/test_package.py") \
      > "$work/pytest.log" 2>&1; then
  row "pytest test_gpu.py test_package.py" PASS "$(tail -n 1 "$work/pytest.log")"
else
  row "pytest test_gpu.py test_package.py" FAIL "$(tail -n 1 "$work/pytest.log")"
fi
[ -f "$work/pytest.log" ] && tail -n 30 "$work/pytest.log"

echo "== 4. the examples' GPU checks, compiled here (variants: ${VARIANTS:-none})"
for variant in $VARIANTS; do
  case $variant in
    fp32|tf32|bf16|plain|kernels) ;;
    *) echo "unknown variant $variant" >&2; continue ;;
  esac
  start=$(date +%s)
  if LSTM_COMPILE=$LSTM_COMPILE bash scripts/gpu-compile.sh "$variant" > "$work/compile.$variant" 2>&1 &&
     bash scripts/gpu-check.sh "$variant" > "$work/check.$variant" 2>&1; then
    row "gpu-compile+gpu-check $variant" PASS "$(ls gpu-build/$variant/*.so | wc -l) examples, $(( $(date +%s) - start )) s"
  else
    row "gpu-compile+gpu-check $variant" FAIL "see $work/compile.$variant, $work/check.$variant"
  fi
  tail -n 5 "$work/compile.$variant" "$work/check.$variant"
done
run_variant=""
for variant in $VARIANTS; do
  case $variant in fp32|kernels) run_variant="$run_variant $variant" ;; esac
done
if [ -n "$run_variant" ]; then
  start=$(date +%s)
  if LSTM_RUN=$LSTM_RUN bash scripts/gpu-check-run.sh $run_variant > "$work/check-run.log" 2>&1; then
    row "gpu-check-run (lstm-run)$run_variant" PASS "$(( $(date +%s) - start )) s"
  else
    row "gpu-check-run (lstm-run)$run_variant" FAIL "see $work/check-run.log"
  fi
  tail -n 10 "$work/check-run.log"
fi

echo
echo "== summary (logs in $work)"
column -t -s "$(printf '\t')" "$results" 2>/dev/null || cat "$results"
! grep -q "$(printf '\tFAIL\t')" "$results"
