# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The console scripts lstm-run and lstm-compile of the wheel: they run the
tools that the package carries in lstmc/bin (linked like liblstmc.so, see
python/CMakeLists.txt), which find the runtimes in lstmc/lib."""
import os
import sys

BIN_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def _run(tool):
    path = os.path.join(BIN_DIR, tool)
    if not os.access(path, os.X_OK):
        sys.exit(f"{tool}: not part of this installation of lstmc (no {path})")
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(path, [path] + sys.argv[1:])


def lstm_run():
    _run("lstm-run")


def lstm_compile():
    _run("lstm-compile")
