#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
# Sets up and builds the project (scripts/setup.sh), then trains char-rnn on
# Shakespeare (python/examples/charrnn.py, docs/charrnn.md) with the compiled
# LSTM beside PyTorch's nn.LSTM on the same batches from the same weights, and
# prints the losses, their agreement and a sample of generated text.
# The seeds' model (2x128, B=T=50), 300 iterations, on the GPU when PyTorch
# sees one, else on the CPU (about 30 s for both models on 2 cores).
#   scripts/train-charrnn.sh [charrnn.py options...]   e.g. --cell peephole
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
PYTHON=$(grep '^config.python_executable' build/test/lit.site.cfg.py | cut -d'"' -f2)

if "$PYTHON" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
  echo "== char-rnn on the GPU: 2x128, B=50, T=50, 300 iterations"
  size=(--device cuda)
else
  echo "== no GPU with PyTorch here: char-rnn on the CPU, 2x128, B=50, T=50, 300 iterations"
  size=(--device cpu)
fi
mkdir -p build/charrnn
exec "$PYTHON" python/examples/charrnn.py "${size[@]}" --iterations 300 --show-every 10 \
  --sample-length 300 --plot build/charrnn/loss.png --log build/charrnn/log.json "$@"
