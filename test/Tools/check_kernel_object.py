#!/usr/bin/env python3
"""Checks the fatbin that a CUDA library of lstm-compile carries for one
kernel module: the symbols __lstm_fatbin_NAME (the bytes) and
__lstm_fatbin_size_NAME (their number, what the host code passes to
mgpuModuleLoad) that the kernels' own object defines (lib/Compiler/
KernelObject.cpp). The bytes must be one whole fatbin: its magic number,
and a header whose size plus the payload's it announces is the size the
library passes.

  check_kernel_object.py LIB.so NAME   (prints "NAME: fatbin of N bytes")
"""
import struct
import subprocess
import sys

FATBIN_MAGIC = 0xBA55ED50

lib, name = sys.argv[1], sys.argv[2]
symbols = {}
for line in subprocess.run(['nm', '-S', lib], check=True, capture_output=True,
                           text=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 4:
        symbols[parts[3]] = (int(parts[0], 16), int(parts[1], 16), parts[2])
data_sym, size_sym = f'__lstm_fatbin_{name}', f'__lstm_fatbin_size_{name}'
for sym in (data_sym, size_sym):
    if sym not in symbols:
        sys.exit(f'{sym} is not defined in {lib}')
    if symbols[sym][2] not in 'rR':
        sys.exit(f'{sym} is not read-only data: nm type {symbols[sym][2]}')

# Section headers: the file offset of each address.
sections = []
out = subprocess.run(['readelf', '-S', '-W', lib], check=True,
                     capture_output=True, text=True).stdout
for line in out.splitlines():
    line = line.replace('[ ', '[')
    parts = line.split()
    if len(parts) > 6 and parts[0].startswith('[') and parts[2] == 'PROGBITS':
        sections.append((int(parts[3], 16), int(parts[4], 16), int(parts[5], 16)))


def read(address, size):
    for start, offset, length in sections:
        if start <= address and address + size <= start + length:
            with open(lib, 'rb') as f:
                f.seek(offset + address - start)
                return f.read(size)
    sys.exit(f'address {address:#x} is in no section of {lib}')


size = struct.unpack('<Q', read(symbols[size_sym][0], 8))[0]
if size != symbols[data_sym][1]:
    sys.exit(f'{size_sym} says {size} bytes, {data_sym} has {symbols[data_sym][1]}')
blob = read(symbols[data_sym][0], size)
magic, _version, header, payload = struct.unpack('<IHHQ', blob[:16])
if magic != FATBIN_MAGIC:
    sys.exit(f'{data_sym} does not start with the fatbin magic: {magic:#x}')
if header + payload != size:
    sys.exit(f'the fatbin announces {header} + {payload} bytes, the library passes {size}')
print(f'{name}: fatbin of {size} bytes')

# With --launches HOST.ll (the host code's LLVM IR, --emit-llvm): every
# kernel the host code takes from this module (upstream's translation names
# the kernel's string @MODULE_KERNEL_name) is in its fatbin's code, by name
# in the cubin's string table.
if len(sys.argv) > 4 and sys.argv[3] == '--launches':
    import re
    launched = sorted(set(re.findall(
        rf'@{re.escape(name)}_(\w+)_name = private unnamed_addr constant \[\d+ x i8\] c"(\w+)\\00"',
        open(sys.argv[4]).read())))
    kernels = [k for suffix, k in launched if suffix == k]
    if not kernels:
        sys.exit(f'the host code launches no kernel of {name}')
    for kernel in kernels:
        if b'\0' + kernel.encode() + b'\0' not in blob:
            sys.exit(f'{name} launches {kernel}, which its fatbin does not have')
    print(f'{name}: launches {len(kernels)} kernels, all in its fatbin')
