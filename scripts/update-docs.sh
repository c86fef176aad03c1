#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Regenerates the op and pass reference in docs/generated/ from the ODS
# definitions. test/docs/up-to-date.test fails while they differ.
set -euo pipefail
cd "$(dirname "$0")/.."
ninja -C build mlir-doc
cp build/docs/Dialects/LSTMDialect.md docs/generated/LSTMDialect.md
cp build/docs/LSTMConversionPasses.md docs/generated/LSTMConversionPasses.md
cp build/docs/LSTMTransformsPasses.md docs/generated/LSTMTransformsPasses.md
cp build/docs/LSTMAdjointOpInterface.md docs/generated/LSTMAdjointOpInterface.md
