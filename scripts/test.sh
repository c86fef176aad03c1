#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sets up and builds the project (scripts/setup.sh), then runs the whole lit
# suite and ends with the line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh || exit 1

LIT=/usr/lib/llvm-22/bin/lit
log=$(mktemp)
"$LIT" -v build/test 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}

# lit prints "  Passed: N (...)" and "  Failed: N (...)"; unsupported tests
# (GPU tests without a GPU) are reported as skipped.
# (some lit versions pad the name: "  Passed     : N").
count() { sed -nE "s/^ *$1 *: *([0-9]+).*/\1/p" "$log" | tail -n 1; }
passed=$(count Passed); failed=$(count Failed); unsupported=$(count Unsupported)
echo "${passed:-0} passed, ${failed:-0} failed, ${unsupported:-0} skipped"
rm -f "$log"
exit "$rc"
