# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The tutorial's cell (python/examples/peephole_gru.py, docs/tutorial.md)
runs and matches its numpy reference."""
import os
import subprocess
import sys

from conftest import ROOT


def test_tutorial_example():
    path = os.path.join(ROOT, "python", "examples", "peephole_gru.py")
    out = subprocess.run([sys.executable, path], capture_output=True, text=True, cwd="/")
    assert out.returncode == 0, out.stderr
    assert "CPU: relative error" in out.stdout
