#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# The sanitizer build (docs/testing.md): configures build-asan/ with
# -DLSTM_ENABLE_SANITIZERS=ON (AddressSanitizer and UndefinedBehaviorSanitizer
# on the tools, the libraries and the CUDA runtime), builds what the tests
# need and runs the whole lit suite over it. Every sanitizer report is also
# written under build-asan/sanitizer-logs/, so that one from a RUN line that
# expects a failure (`not lstm-run ...`) is not lost: the script fails if
# there is any. Prints how long the build and the run took.
#   scripts/sanitize.sh [-jN]   (default -j2)
set -uo pipefail
cd "$(dirname "$0")/.."
JOBS=${1:--j2}
LLVM_PREFIX=/usr/lib/llvm-22
PYTHON=${PYTHON:-$(command -v python3)}
if [ ! -f build-asan/build.ninja ]; then
  cmake -G Ninja -S . -B build-asan -DCMAKE_BUILD_TYPE=Release \
    -DLSTM_ENABLE_SANITIZERS=ON -DMLIR_DIR="$LLVM_PREFIX/lib/cmake/mlir" \
    -DPython3_EXECUTABLE="$PYTHON" || exit 1
fi
start=$(date +%s)
ninja -C build-asan "$JOBS" lstm-opt lstm-run lstm-compile mlir-doc LSTMPlugin \
  lstm-capi-test lstm-capi-compiler-test || exit 1
built=$(date +%s)
echo "== sanitizer build finished in $((built - start)) s"
logs=build-asan/sanitizer-logs
rm -rf "$logs" && mkdir -p "$logs"
LSTM_SANITIZER_LOG="$PWD/$logs/report" "$LLVM_PREFIX/bin/lit" "$JOBS" build-asan/test
rc=$?
echo "== lit over the sanitizer build finished in $(( $(date +%s) - built )) s (exit $rc)"
# With allocator_may_return_null=1, an allocation too large for the process
# returns null after a WARNING (test/Runner/sizes.test asks for 400 TB on
# purpose): only errors count.
reports=$(grep -l -E "ERROR: |runtime error:" "$logs"/report* 2>/dev/null)
if [ -n "$reports" ]; then
  echo "== sanitizer reports:"
  for f in $reports; do echo "--- $f"; head -40 "$f"; done
  exit 1
fi
warnings=$(ls "$logs"/report* 2>/dev/null | wc -l)
[ "$warnings" != 0 ] && echo "== $warnings sanitizer warnings (no error): $(cat "$logs"/report* | sort | uniq -c | sort -rn | head -3)"
echo "== no sanitizer report"
exit $rc
