"""Runs a command under an address-space limit: limit.py MEGABYTES CMD ARGS...

(lit's shell has no ulimit.) Used by tests of what happens when memory runs
out; tests that use it do not run in the sanitizer build, whose shadow
memory needs terabytes of address space.
"""
import os
import resource
import sys

cap = int(sys.argv[1]) * 1024 * 1024
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
os.execvp(sys.argv[2], sys.argv[2:])
