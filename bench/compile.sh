#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Writes and compiles the benchmark networks of shared/docs/BENCHMARKS.md for
# CUDA into gpu-build/bench/CONFIG_CELL_LEVEL.so, one library per level of
# bench/levels.txt, and records each compile time in
# gpu-build/bench/compile_times.txt.
#   bench/compile.sh [CONFIG...]
# BENCH_LEVELS (a regex over the level names) and BENCH_CELLS (a list) narrow
# what is compiled.
set -euo pipefail
cd "$(dirname "$0")/.."
out=gpu-build/bench
mkdir -p "$out"
: > "$out/compile_times.txt"
# name L H I
configs="charrnn 2 128 65
appleyard 4 512 512
latency 2 512 512
deepbench 1 1024 1024
large 2 2048 2048"
only=" ${*:-charrnn appleyard latency deepbench large} "
levels=$(grep -v '^#' bench/levels.txt | grep -E "^(${BENCH_LEVELS:-[^ ]+}) ")
while read -r name L H I; do
  [[ "$only" == *" $name "* ]] || continue
  for cell in ${BENCH_CELLS:-lstm peephole cho_gru}; do
    python3 bench/make_network.py --cell $cell --layers $L --hidden $H --input $I -o "$out/${name}_${cell}.mlir"
    while IFS='|' read -r level pre flags; do
      level=$(echo $level)
      start=$(date +%s.%N)
      build/bin/lstm-compile "$out/${name}_${cell}.mlir" --target=cuda \
        --pre-passes="$(echo $pre)" $flags -o "$out/${name}_${cell}_${level}.so"
      echo "${name}_${cell}_${level} $(echo "$(date +%s.%N) - $start" | bc)" >> "$out/compile_times.txt"
    done <<< "$levels"
  done
done <<< "$configs"
rm -f "$out"/*.mlir
