#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# On a machine with an NVIDIA GPU and PyTorch but no MLIR: checks the gradient
# functions of every example compiled by scripts/gpu-compile-grad.sh
# (gpu-build/grad-VARIANT/NAME.so and NAME.sig.json, or gpu-build/grad.tar.xz,
# unpacked here when the directories are missing) against torch.autograd of the
# float64 PyTorch reference (test/GPU/check_gradients_gpu.py), and runs
# compute-sanitizer (memcheck on the fp32, plain and persistent variants of
# lstm, gru and peephole; racecheck and synccheck on two of them; all three on
# the persistent stack3, whose layers run as one kernel forward and backward;
# memcheck on the fp32 stack3, whose training forward is a wavefront;
# racecheck and synccheck on persistent-split's stack3 at 20 rows, where its
# kernels take tensor cores) over the same script. The persistent-split
# variant's checks add sizes of 37 and 129 rows, on tensor cores.
# Prints a summary table (the largest relative error per variant, against its
# tolerance) and exits non-zero on any failure.
#   scripts/gpu-check-grad.sh [VARIANT...]   (default: every variant built)
# Environment: PYTHON (python3), JOBS (checks at once, 8), SIZES (T:B list,
# 1:1,5:3,9:300), LOGDIR (full logs, gpu-build/grad-logs), SANITIZER=0 skips
# compute-sanitizer, CHECK_TIMEOUT / SANITIZER_TIMEOUT (seconds per run: 300 /
# 480).
#
# Tolerances (relative, per gradient): the forward bounds of VARIANTS.md are
# fp32 1e-5, tf32 2e-3, bf16 2e-2. A gradient is a longer chain: the backward
# walks the recurrence again (errors of the forward's saved activations and
# of each backward step accumulate over T steps), and the weight gradients
# sum T*B products in one GEMM. fp32 without TF32 stays near 1e-6 (each
# product rounded to 2^-24): 1e-5 as for the forward. TF32 rounds GEMM
# operands to 2^-11 (~5e-4, about 1e-3 per GEMM on random data) and bf16 to
# 2^-8 (~4e-3): 1e-2 and 5e-2, five times the forward bounds, to be replaced
# by measured figures (the table prints the largest error seen).
set -uo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
cd "$(dirname "$0")/.." || exit 1
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-8}
SIZES=${SIZES:-1:1,5:3,9:300}
LOGDIR=${LOGDIR:-gpu-build/grad-logs}
CHECK_TIMEOUT=${CHECK_TIMEOUT:-300}
SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-480}
export PYTHON SIZES LOGDIR CHECK_TIMEOUT
start=$(date +%s)

if [ -f gpu-build/grad.tar.xz ]; then
  for v in fp32 tf32 bf16 plain persistent persistent-tf32 persistent-bf16 persistent-split; do
    if tar -tJf gpu-build/grad.tar.xz "grad-$v/" > /dev/null 2>&1 && [ ! -d "gpu-build/grad-$v" ]; then
      tar -C gpu-build -xJf gpu-build/grad.tar.xz "grad-$v" || { echo "cannot unpack grad-$v"; exit 1; }
    fi
  done
fi
variants=${*:-$(cd gpu-build 2>/dev/null && ls -d grad-fp32 grad-tf32 grad-bf16 grad-plain grad-persistent grad-persistent-tf32 grad-persistent-bf16 grad-persistent-split 2>/dev/null | sed 's/^grad-//')}
if [ -z "$variants" ]; then
  echo "no gpu-build/grad-VARIANT (compile with scripts/gpu-compile-grad.sh where MLIR is)"
  exit 1
fi
tolerance() {
  case $1 in
    tf32|persistent-tf32|persistent-split) echo 1e-2 ;;
    bf16|persistent-bf16) echo 5e-2 ;;
    *) echo 1e-5 ;;
  esac
}
export -f tolerance
rm -rf "$LOGDIR"
mkdir -p "$LOGDIR"
status=0

# compute-sanitizer first, in the background (it is the slowest part): over
# check_gradients_gpu.py at one small size, the float64 reference on the CPU
# so that what the tool instruments is mostly the library's work. Each run's
# timeout stops the tool and the program it runs (its own process group).
sanitizer_runs=()
if [ "${SANITIZER:-1}" != 0 ] && command -v compute-sanitizer > /dev/null 2>&1; then
  for v in fp32 plain persistent; do
    for cell in lstm gru peephole; do
      [ -f "gpu-build/grad-$v/$cell.so" ] && sanitizer_runs+=("memcheck $v $cell")
    done
  done
  for run in "racecheck fp32 lstm" "racecheck plain gru" "synccheck fp32 peephole" "synccheck plain lstm" \
             "racecheck persistent lstm" "racecheck persistent cho_gru" \
             "synccheck persistent lstm" "synccheck persistent cho_gru" \
             "memcheck persistent stack3" "racecheck persistent stack3" \
             "synccheck persistent stack3" "memcheck fp32 stack3" \
             "racecheck persistent-split stack3" "synccheck persistent-split stack3"; do
    set -- $run
    [ -f "gpu-build/grad-$2/$3.so" ] && sanitizer_runs+=("$run")
  done
  for run in "${sanitizer_runs[@]}"; do
    set -- $run
    # The split kernels run on tensor cores from 16 rows.
    sizes=3:5
    [ "$2" = persistent-split ] && sizes=3:20
    ( OMP_NUM_THREADS=2 timeout "$SANITIZER_TIMEOUT" compute-sanitizer --tool "$1" --error-exitcode 9 \
        "$PYTHON" test/GPU/check_gradients_gpu.py "gpu-build/grad-$2/$3.so" --cell "$3" \
        --sizes $sizes --tol "$(tolerance "$2")" --ref-device cpu \
        > "$LOGDIR/sanitizer-$1-$2-$3.log" 2>&1
      echo $? > "$LOGDIR/sanitizer-$1-$2-$3.rc" ) &
  done
elif [ "${SANITIZER:-1}" != 0 ]; then
  echo "compute-sanitizer not found: skipped"
fi

# The gradient checks, JOBS at once (each loads PyTorch and one library).
check_one() {
  local variant=$1 lib=$2 cell log rc sizes=$SIZES
  cell=$(basename "$lib" .so)
  # The split kernels run on tensor cores from 16 rows.
  [ "$variant" = persistent-split ] && sizes=$SIZES,20:37,33:129
  log="$LOGDIR/$variant-$cell.log"
  # --foreground: in this script's process group, so that a timeout around
  # the whole script stops these too.
  OMP_NUM_THREADS=2 timeout --foreground "$CHECK_TIMEOUT" "$PYTHON" test/GPU/check_gradients_gpu.py "$lib" \
    --cell "$cell" --tol "$(tolerance "$variant")" --sizes "$sizes" > "$log" 2>&1
  rc=$?
  [ $rc = 124 ] && echo "FAILED: $cell (timed out after $CHECK_TIMEOUT s)" >> "$log"
  echo $rc > "$LOGDIR/$variant-$cell.rc"
}
export -f check_one
for variant in $variants; do
  for lib in gpu-build/grad-$variant/*.so; do
    [ -f "$lib" ] && echo "$variant $lib"
  done
done | xargs -P "$JOBS" -L 1 bash -c 'check_one "$0" "$1"'
wait

echo
echo "== gradient checks (sizes $SIZES; logs in $LOGDIR)"
printf '%-8s %-9s %-8s %-12s %-16s %s\n' variant tolerance passed "max rel err" "worst example" failed
for variant in $variants; do
  n=0; ok=0; worst=0; worst_cell=-; failed=""
  for rcfile in "$LOGDIR/$variant"-*.rc; do
    [ -f "$rcfile" ] || continue
    cell=$(basename "$rcfile" .rc); cell=${cell#"$variant"-}
    n=$((n + 1))
    if [ "$(cat "$rcfile")" = 0 ]; then ok=$((ok + 1)); else failed="$failed $cell"; status=1; fi
    err=$(sed -nE 's/.*max rel err ([0-9.e+-]+|nan).*/\1/p' "$LOGDIR/$variant-$cell.log" | tail -n 1)
    if [ -n "$err" ] && [ "$err" != nan ] && awk "BEGIN {exit !($err > $worst)}"; then
      worst=$err; worst_cell=$cell
    fi
  done
  printf '%-8s %-9s %-8s %-12s %-16s %s\n' "$variant" "$(tolerance "$variant")" "$ok/$n" \
    "$(printf '%.2e' "$worst")" "$worst_cell" "${failed:-none}"
done
if [ ${#sanitizer_runs[@]} -gt 0 ]; then
  echo
  echo "== compute-sanitizer (size 3:5)"
  printf '%-10s %-8s %-10s %-6s %s\n' tool variant example rc result
  for run in "${sanitizer_runs[@]}"; do
    set -- $run
    base="$LOGDIR/sanitizer-$1-$2-$3"
    rc=$(cat "$base.rc" 2>/dev/null || echo '?')
    summary=$(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$base.log" | tail -n 1)
    check=$(grep -E '^(PASSED|FAILED):' "$base.log" | tail -n 1 | cut -d' ' -f1)
    [ "$rc" = 124 ] && summary="timed out after $SANITIZER_TIMEOUT s"
    printf '%-10s %-8s %-10s %-6s %s %s\n' "$1" "$2" "$3" "$rc" "${check:-no result}" "${summary:-no summary}"
    [ "$rc" != 0 ] && status=1
  done
fi

# The failures last: the first lines of up to 12 failed checks' logs and
# of every failed sanitizer run.
shown=0; more=0
for variant in $variants; do
  for rcfile in "$LOGDIR/$variant"-*.rc; do
    [ -f "$rcfile" ] && [ "$(cat "$rcfile")" != 0 ] || continue
    if [ $shown = 0 ]; then echo; echo "== details of the failures"; fi
    if [ $shown -lt 12 ]; then
      echo "-- ${rcfile%.rc}.log"
      grep -v ' OK$' "${rcfile%.rc}.log" | head -n 8
      shown=$((shown + 1))
    else
      more=$((more + 1))
    fi
  done
done
[ $more -gt 0 ] && echo "... and $more more failed checks (logs in $LOGDIR)"
if [ ${#sanitizer_runs[@]} -gt 0 ]; then
  for run in "${sanitizer_runs[@]}"; do
    set -- $run
    base="$LOGDIR/sanitizer-$1-$2-$3"
    [ "$(cat "$base.rc" 2>/dev/null)" = 0 ] && continue
    echo "-- $base.log"
    grep -E '=========|error|FAILED' "$base.log" | head -n 20
  done
fi
echo
echo "gpu-check-grad.sh: $(($(date +%s) - start)) s, $([ $status = 0 ] && echo PASSED || echo FAILED)"
exit $status
