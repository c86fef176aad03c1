#!/usr/bin/env bash
# Writes and compiles the benchmark networks of shared/docs/BENCHMARKS.md for
# CUDA into gpu-build/bench/CONFIG_CELL_LEVEL.so, one library per
# optimisation level available today (none, combine), and records each
# compile time in gpu-build/bench/compile_times.txt.
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
declare -A passes=([none]="" [combine]="lstm-combine-gate-gemms")
while read -r name L H I; do
  for cell in lstm peephole cho_gru; do
    python3 bench/make_network.py --cell $cell --layers $L --hidden $H --input $I -o "$out/${name}_${cell}.mlir"
    for level in none combine; do
      start=$(date +%s.%N)
      build/bin/lstm-compile "$out/${name}_${cell}.mlir" --target=cuda \
        --pre-passes="${passes[$level]}" -o "$out/${name}_${cell}_${level}.so"
      echo "${name}_${cell}_${level} $(echo "$(date +%s.%N) - $start" | bc)" >> "$out/compile_times.txt"
    done
  done
done <<< "$configs"
rm -f "$out"/*.mlir
