#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Writes the benchmark networks of shared/docs/BENCHMARKS.md (bench/make_network.py)
# and compiles them with their gradient functions for the training benchmark
# (bench/train_gpu.py):
#   lstm-compile NET.mlir --target=cuda --gradients --pre-passes=lstm-optimize --compute-type=PREC
# into gpu-build/train/CONFIG_CELL_PREC.so, with CONFIG_CELL_PREC.sig.json beside
# each (test/GPU/signature.py: the saved activations of @forward_train), the
# compile times in gpu-build/train/compile_times.txt, and everything packed
# into gpu-build/train.tar.xz for the GPU machine (bench/train_gpu.py unpacks it).
#   bench/compile_train.sh [CONFIG...]     (default: the five configurations)
# Environment: TRAIN_CELLS (lstm peephole cho_gru), TRAIN_PRECISIONS (fp32 tf32),
# JOBS (compilations at once, default: the number of cores), TARGET=cpu
# (compile for the CPU into gpu-build/train-cpu, to check bench/train_gpu.py
# --device cpu where there is no GPU; the extra configuration `tiny` is meant
# for that), NO_PACK=1 (no archive), TOOLS (default build/bin: where lstm-compile
# and lstm-opt are, e.g. a copy of them while build/ is being rebuilt),
# PERSISTENT=1 (into gpu-build/train-persistent, the libraries compiled as
# lstmc's persistent=True compiles them:
# --pre-passes=lstm-optimize{wavefront=false} --persistent, the kernels
# computing in fp32, their operands rounded to bf16 under bf16; for
# bench/train_gpu.py --lib-dir gpu-build/train-persistent); with STACKS=0 too,
# into gpu-build/train-persistent-nostack, each layer of a stack its own
# kernel (lstm-to-persistent{stacks=false}), for comparison. The CUDA
# libraries' lstm-optimize takes lstm-wavefront's product-links (the stacks'
# backward as a reverse wavefront too; docs/benchmarks.md, "Split
# reductions"); PRODUCT_LINKS=0 leaves them out.
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
cd "$(dirname "$0")/.."
target=${TARGET:-cuda}
out=gpu-build/train
[ "$target" = cpu ] && out=gpu-build/train-cpu
persistent=${PERSISTENT:-}
[ -n "$persistent" ] && out=$out-persistent
stacks=${STACKS:-1}
[ -n "$persistent" ] && [ "$stacks" = 0 ] && out=$out-nostack
jobs=${JOBS:-$(nproc)}
PYTHON=${PYTHON:-python3}
TOOLS=$(cd "${TOOLS:-build/bin}" && pwd)
links=" product-links=true"
[ "${PRODUCT_LINKS:-1}" = 0 ] && links=
export PYTHON TOOLS target out persistent stacks links
start=$(date +%s)
# name L H I (the batch and the number of steps are run-time sizes)
configs="charrnn 2 128 65
appleyard 4 512 512
latency 2 512 512
deepbench 1 1024 1024
large 2 2048 2048
tiny 2 16 5"
only=" ${*:-charrnn appleyard latency deepbench large} "
for name in $only; do
  grep -q "^$name " <<< "$configs" || { echo "unknown configuration $name" >&2; exit 2; }
done
mkdir -p "$out"
rm -f "$out"/*.so "$out"/*.sig.json "$out"/*.mlir
jobs_list=$(mktemp)
while read -r name L H I; do
  [[ "$only" == *" $name "* ]] || continue
  for cell in ${TRAIN_CELLS:-lstm peephole cho_gru}; do
    "$PYTHON" bench/make_network.py --cell "$cell" --layers "$L" --hidden "$H" --input "$I" \
      -o "$out/${name}_${cell}.mlir"
    "$PYTHON" test/GPU/signature.py --tools "$TOOLS" --gradients --pre-passes=lstm-optimize \
      "$out/${name}_${cell}.mlir" -o "$out/${name}_${cell}.sig.json"
    for prec in ${TRAIN_PRECISIONS:-fp32 tf32}; do
      echo "${name}_${cell} $prec" >> "$jobs_list"
    done
  done
done <<< "$configs"
# The libraries and their signatures must come from one build: a rebuild
# under way while this runs is reported.
# (A copy of the tools has no lib/ beside it: stat then fails on the
# missing archives, which must not stop the script under set -e.)
build_stamp() { stat -c '%n %Y %s' "$TOOLS/lstm-compile" "$TOOLS/lstm-opt" "$TOOLS"/../lib/*.a 2>/dev/null || true; }
stamp=$(build_stamp)

compile_one() {
  local net=$1 prec=$2 t0 err flags
  # Stacks' training forwards as a wavefront where their products are small
  # (lstm-wavefront's side-output-max-product; off by default, slower on
  # the CPU).
  flags=("--pre-passes=lstm-optimize{side-output-max-product=268435456${links}}" --compute-type="$prec")
  [ "$target" = cpu ] && flags=(--pre-passes=lstm-optimize --compute-type="$prec")
  if [ -n "$persistent" ]; then
    flags=("--pre-passes=lstm-optimize{wavefront=false}" --persistent --compute-type="$prec")
    # Each layer its own kernel, as before lstm-to-persistent{stacks=true}
    # (sm_90's shared memory, as --persistent gives it there).
    [ "$stacks" = 0 ] && flags=("--pre-passes=lstm-optimize{wavefront=false},lstm-to-persistent{stacks=false shared-memory=229376}" --compute-type="$prec")
  fi
  t0=$(date +%s.%N)
  if ! err=$(timeout 1200 "$TOOLS/lstm-compile" "$out/$net.mlir" --target="$target" --gradients \
               "${flags[@]}" -o "$out/${net}_$prec.so" 2>&1); then
    printf 'FAILED %s_%s: lstm-compile %s --target=%s --gradients %s\n%s\n' \
      "$net" "$prec" "$out/$net.mlir" "$target" "${flags[*]}" "$err"
    return 1
  fi
  cp "$out/$net.sig.json" "$out/${net}_$prec.sig.json"
  printf '%s_%s %.1f\n' "$net" "$prec" "$(echo "$(date +%s.%N) - $t0" | bc)"
}
export -f compile_one
status=0
xargs -P "$jobs" -L 1 bash -c 'compile_one "$0" "$1"' < "$jobs_list" > "$out/compile.log" 2>&1 || status=1
rm -f "$jobs_list"
grep -v '^FAILED' "$out/compile.log" | grep -E '^[a-z_0-9]+ [0-9.]+$' | sort > "$out/compile_times.txt" || true
cat "$out/compile_times.txt"
if grep -q '^FAILED' "$out/compile.log"; then
  awk '/^FAILED/ {p = 1} /^[a-z_0-9]+ [0-9.]+$/ {p = 0} p' "$out/compile.log"
  status=1
fi
awk '{s += $2} END {printf "%d libraries, %.0f s of compilation\n", NR, s}' "$out/compile_times.txt"
rm -f "$out"/*_lstm.sig.json "$out"/*_peephole.sig.json "$out"/*_cho_gru.sig.json
if [ "$(build_stamp)" != "$stamp" ]; then
  echo "ERROR: build/ changed while compiling (a rebuild under way?): run this again"
  status=1
fi
if [ -z "${NO_PACK:-}" ] && [ "$target" = cuda ]; then
  name=$(basename "$out")
  (cd gpu-build && XZ_OPT="-6 -T0" tar -cJf "$name.tar.xz" "$name"/*.so "$name"/*.sig.json "$name"/compile_times.txt)
  echo "packed gpu-build/$name into gpu-build/$name.tar.xz ($(du -h "gpu-build/$name.tar.xz" | cut -f1))"
fi
echo "compile_train.sh: $(($(date +%s) - start)) s wall"
exit $status
