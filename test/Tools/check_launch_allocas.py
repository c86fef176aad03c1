#!/usr/bin/env python3
"""Counts the allocas outside the entry blocks of the functions of an LLVM IR
file (lstm-compile --emit-llvm): the stack arrays of kernel launches must not
be dynamic allocas, which grow the stack at every iteration of a loop.

  check_launch_allocas.py FILE.ll   (prints "N allocas outside entry blocks")
"""
import re
import sys

ir = open(sys.argv[1]).read()
count = 0
for m in re.finditer(r'^define [^{]*\{\n(.*?)^\}', ir, re.M | re.S):
    in_entry = True
    for line in m.group(1).split('\n'):
        if re.match(r'^[\w.$-]+:', line):
            in_entry = False
        elif not in_entry and re.search(r'= alloca ', line):
            count += 1
print(f'{count} allocas outside entry blocks')
