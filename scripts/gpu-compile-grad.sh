#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Compiles every example with its gradient functions for CUDA
# (lstm-compile --gradients) into gpu-build/grad-VARIANT/NAME.so, with the
# functions' signatures beside it in NAME.sig.json (test/GPU/signature.py: how
# many saved activations @forward_train returns), to be checked where the GPU
# is by scripts/gpu-check-grad.sh. The variants:
#   fp32   --pre-passes=lstm-optimize{side-output-max-product=268435456
#          product-links=true} --compute-type=fp32 (the optimised variants
#          ask for the stacks' training forwards as a wavefront; fp32 and
#          tf32 for their backward as a reverse wavefront too)
#   tf32   the same with --compute-type=tf32
#   bf16   --pre-passes=lstm-optimize{side-output-max-product=268435456}
#          --compute-type=bf16
#   plain  (no optimisation)
#   persistent  --pre-passes=lstm-optimize{persistent=true} --persistent
#          (forward and backward layers as persistent kernels where
#          lstm-to-persistent takes them)
#   persistent-tf32  the same with --compute-type=tf32 (the kernels on TF32
#          tensor cores from B = 16, fp32 below; the other GEMMs in TF32)
#   persistent-bf16  the same with --compute-type=bf16 (the kernels on bf16
#          tensor cores from B = 4; below, the kernels' and the other
#          GEMMs' operands rounded to bf16)
#   persistent-split  persistent-tf32 with --persistent-split-depth=4 (each
#          tensor-core tile's depth split among four warps; by default
#          none)
# Then packs them into gpu-build/grad.tar.xz (the libraries compress ~10x;
# scripts/gpu-check-grad.sh unpacks it when gpu-build/grad-* are missing).
#   scripts/gpu-compile-grad.sh [VARIANT...]
# JOBS (default: the number of cores) compilations run at once; NO_PACK=1
# skips the archive; TOOLS (default build/bin) is where lstm-compile and
# lstm-opt are (e.g. a copy of them while build/ is being rebuilt).
set -euo pipefail
case "${1:-}" in
  -h|--help) sed -n '2,/^set /p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
cd "$(dirname "$0")/.."
variants=${*:-fp32 tf32 bf16 plain}
jobs=${JOBS:-$(nproc)}
PYTHON=${PYTHON:-python3}
TOOLS=$(cd "${TOOLS:-build/bin}" && pwd)
export PYTHON TOOLS
start=$(date +%s)

# The stacks' training forwards as a wavefront, as on the GPU it pays
# (lstm-wavefront's side-output-max-product, off by default).
wave="side-output-max-product=268435456"
# One argument a line (an lstm-optimize option list has spaces in it).
flags_of() {
  case $1 in
    fp32) printf '%s\n' "--pre-passes=lstm-optimize{$wave product-links=true}" --compute-type=fp32 ;;
    tf32) printf '%s\n' "--pre-passes=lstm-optimize{$wave product-links=true}" --compute-type=tf32 ;;
    bf16) printf '%s\n' "--pre-passes=lstm-optimize{$wave}" --compute-type=bf16 ;;
    plain) ;;
    persistent) printf '%s\n' "--pre-passes=lstm-optimize{persistent=true $wave}" --persistent ;;
    persistent-tf32) printf '%s\n' "--pre-passes=lstm-optimize{persistent=true $wave}" --persistent --compute-type=tf32 ;;
    persistent-bf16) printf '%s\n' "--pre-passes=lstm-optimize{persistent=true $wave}" --persistent --compute-type=bf16 ;;
    persistent-split) printf '%s\n' "--pre-passes=lstm-optimize{persistent=true $wave}" --persistent --compute-type=tf32 --persistent-split-depth=4 ;;
    *) return 1 ;;
  esac
}
pre_of() {
  case $1 in
    plain) echo "" ;;
    persistent|persistent-tf32|persistent-bf16|persistent-split) echo "lstm-optimize{persistent=true}" ;;
    *) echo "lstm-optimize" ;;
  esac
}

# One library: VARIANT EXAMPLE.mlir. Prints the error verbatim on failure.
compile_one() {
  local variant=$1 f=$2 name out flags pre err t0
  name=$(basename "$f" .mlir)
  out="gpu-build/grad-$variant/$name"
  mapfile -t flags < <(flags_of "$variant")
  pre=$(pre_of "$variant")
  t0=$(date +%s.%N)
  if ! err=$(timeout 900 "$TOOLS/lstm-compile" "$f" --target=cuda --gradients "${flags[@]}" \
               -o "$out.so" 2>&1); then
    printf 'FAILED grad-%s/%s: lstm-compile %s --target=cuda --gradients %s\n%s\n' \
      "$variant" "$name" "$f" "${flags[*]}" "$err"
    return 1
  fi
  if ! err=$(timeout 300 "$PYTHON" test/GPU/signature.py --tools "$TOOLS" --gradients \
               --pre-passes="$pre" "$f" -o "$out.sig.json" 2>&1); then
    printf 'FAILED grad-%s/%s: signature.py\n%s\n' "$variant" "$name" "$err"
    return 1
  fi
  printf 'grad-%s/%s %.1f s\n' "$variant" "$name" "$(echo "$(date +%s.%N) - $t0" | bc)"
}
export -f compile_one flags_of pre_of

for variant in $variants; do
  flags_of "$variant" > /dev/null || { echo "unknown variant $variant" >&2; exit 2; }
  rm -rf "gpu-build/grad-$variant"
  mkdir -p "gpu-build/grad-$variant"
done
# The libraries and their signatures must come from one build: a rebuild
# under way while this runs is reported.
# (A copy of the tools has no lib/ beside it: stat then fails on the
# missing archives, which must not stop the script under set -e.)
build_stamp() { stat -c '%n %Y %s' "$TOOLS/lstm-compile" "$TOOLS/lstm-opt" "$TOOLS"/../lib/*.a 2>/dev/null || true; }
stamp=$(build_stamp)
status=0
for variant in $variants; do
  for f in examples/*.mlir; do
    echo "$variant $f"
  done
done | xargs -P "$jobs" -L 1 bash -c 'compile_one "$0" "$1"' \
  > gpu-build/grad-compile.log 2>&1 || status=1
sort gpu-build/grad-compile.log | grep -v '^FAILED' | awk '{s += $2} END {printf "%d libraries, %.0f s of compilation\n", NR, s}'
if grep -q '^FAILED' gpu-build/grad-compile.log; then
  # The failures, with lstm-compile's errors verbatim.
  awk '/^FAILED/ {p = 1} /^grad-/ {p = 0} p' gpu-build/grad-compile.log
  status=1
fi
if [ "$(build_stamp)" != "$stamp" ]; then
  echo "ERROR: build/ changed while compiling (a rebuild under way?): run this again"
  status=1
fi
if [ -z "${NO_PACK:-}" ]; then
  # This run's variants (grad-* of an earlier run may hold an older
  # compiler's libraries).
  dirs=$(for v in $variants; do printf 'grad-%s ' "$v"; done)
  # shellcheck disable=SC2086
  (cd gpu-build && XZ_OPT="-6 -T0" tar -cJf grad.tar.xz $dirs)
  echo "packed $dirs into gpu-build/grad.tar.xz ($(du -h gpu-build/grad.tar.xz | cut -f1))"
fi
echo "gpu-compile-grad.sh: $(($(date +%s) - start)) s wall"
exit $status
