#!/usr/bin/env python3
"""A seeded fuzzer of lstm-run's inputs: malformed .npy files and bad sizes.

  fuzz_lstm_run.py --lstm-run PATH --module FILE.mlir [--seed N] [--count N]
                   [--budget SECONDS] [--jobs N] [--out DIR]

The module is a small cell (test/Runner/Inputs/rnn.mlir: x [T, B, 4], h0
[B, 8], W [8, 4], R [8, 8], b [8]). Case i is drawn from
random.Random(f'{seed}:{i}') and is one of

  npy     one input .npy file malformed: its magic, version, header length,
          dtype, order or shape changed (huge, negative, overflowing,
          non-numeric extents), its data truncated or extended, random bytes
          of its header flipped;
  shapes  --random-inputs with --shapes of random extents (0, huge, negative,
          products that overflow 64 bits, malformed entries);
  dynamic --random-inputs with a random --dynamic-size.

Each lstm-run runs under a time and an address-space limit. The outcome
must be exit 0 or one `lstm-run: error:` (or an MLIR diagnostic) and exit
1; a signal, an abort, LLVM ERROR, an uncaught C++ exception, a sanitizer
report, a hang, or the compiled code killed by a signal (a fault where a
check belonged) fails the run. A run-time check that stops the compiled code
is a clean error.
"""
import argparse
import collections
import os
import random
import shutil
import struct
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_common as fc  # noqa: E402

# The module's arguments: name, shape with 'T'/'B', dtype.
ARGS = [('x', ('T', 'B', 4)), ('h0', ('B', 8)), ('W', (8, 4)), ('R', (8, 8)), ('b', (8,))]

EXTENTS = [0, 1, 2, 3, 5, 8, 1000, 65536, 2**31 - 1, 2**31, 2**32, 15625000, 50000000,
           2**40, 2**56, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -1, -2**63]

# The compiled code being killed by a signal other than the abort of a
# run-time check: a fault where a check belonged.
CHILD_CRASH = 'the compiled function was killed by signal'


def npy_bytes(shape, dtype='<f4', fortran=False, version=1, data=None):
    """A .npy file with an arbitrary (possibly lying) header."""
    shape_text = '(' + ', '.join(str(d) for d in shape) + (',)' if len(shape) == 1 else ')')
    header = f"{{'descr': '{dtype}', 'fortran_order': {fortran}, 'shape': {shape_text}, }}"
    return header_bytes(header, version) + (data if data is not None else b'')


def header_bytes(header, version=1, length=None):
    pre = 10 if version == 1 else 12
    total = pre + len(header) + 1
    header = header + ' ' * ((64 - total % 64) % 64) + '\n'
    n = len(header) if length is None else length
    size = struct.pack('<H', n & 0xffff) if version == 1 else struct.pack('<I', n & 0xffffffff)
    return b'\x93NUMPY' + bytes([version, 0]) + size + header.encode('latin1')


def good_arrays(rng):
    T, B = rng.choice([1, 2, 5]), rng.choice([1, 3])
    out = []
    for _, shape in ARGS:
        s = tuple(T if d == 'T' else B if d == 'B' else d for d in shape)
        out.append(np.random.default_rng(rng.randrange(1 << 30)).uniform(-1, 1, s)
                   .astype(np.float32))
    return out


def data_of(shape, rng, elt=4):
    """Data for `shape` if it is small, else a few bytes (the header lies)."""
    n = 1
    for d in shape:
        n *= d
    if 0 <= n * elt <= 1 << 16:
        return bytes(rng.randrange(256) for _ in range(n * elt))
    return bytes(rng.randrange(256) for _ in range(rng.choice([0, 4, 64, 256])))


def malformed_npy(rng, good):
    """(argument index, file bytes, what) of one malformed input."""
    k = rng.randrange(len(good))
    a = good[k]
    shape = list(a.shape)
    kind = rng.choice(['shape', 'shape', 'shape', 'overflow', 'dtype', 'order', 'version',
                       'length', 'truncate', 'extend', 'magic', 'flip', 'text'])
    if kind == 'shape':
        for _ in range(rng.choice([1, 1, 2])):
            if shape and rng.random() < 0.8:
                shape[rng.randrange(len(shape))] = rng.choice(EXTENTS)
            else:
                shape.insert(rng.randrange(len(shape) + 1), rng.choice(EXTENTS))
        body = npy_bytes(shape, data=data_of(shape, rng))
    elif kind == 'overflow':
        # Extents whose product wraps 64 bits (to 0 or to the file's size).
        big = rng.choice([2**56, 2**60, 2**62, 2**63 - 1, 2**32])
        shape = [big] + shape[1:] if shape else [big]
        if len(shape) < 3:
            shape = shape + [big]
        body = npy_bytes(shape, data=a.tobytes() if rng.random() < 0.5 else b'')
    elif kind == 'dtype':
        dt = rng.choice(['<f8', '>f4', '<f2', '|b1', '<c8', '<i4', '<u4', 'O', '<f4 ', "x'",
                         '', '<V4', '<U3'])
        body = npy_bytes(shape, dtype=dt, data=a.tobytes())
    elif kind == 'order':
        body = npy_bytes(shape, fortran=rng.choice(['True', '1', 'None', 'x']), data=a.tobytes())
    elif kind == 'version':
        body = npy_bytes(shape, version=1, data=a.tobytes())
        body = body[:6] + bytes([rng.choice([0, 2, 3, 4, 255])]) + body[7:]
    elif kind == 'length':
        header = npy_bytes(shape)[10:].decode('latin1')
        n = rng.choice([0, 1, 9, len(header) - 1, len(header) + 1, 0xffff])
        body = header_bytes(header[:-1].rstrip(), length=n) + a.tobytes()
        if rng.random() < 0.5:  # version 2: a 4-byte length
            body = header_bytes(header[:-1].rstrip(), version=2,
                                length=rng.choice([0, 2**31, 2**32 - 1, 100])) + a.tobytes()
    elif kind == 'truncate':
        full = npy_bytes(shape, data=a.tobytes())
        body = full[:rng.randrange(len(full))]
    elif kind == 'extend':
        body = npy_bytes(shape, data=a.tobytes()) + b'\0' * rng.choice([1, 3, 4, 1000])
    elif kind == 'magic':
        full = npy_bytes(shape, data=a.tobytes())
        body = rng.choice([b'', b'\x93NUMP', b'\x93NUMPY', full[1:], b'PK\x03\x04' + full])
    elif kind == 'flip':
        full = bytearray(npy_bytes(shape, data=a.tobytes()))
        hdr_end = full.index(b'\n') + 1
        for _ in range(rng.choice([1, 2, 4])):
            full[rng.randrange(hdr_end)] = rng.randrange(256)
        body = bytes(full)
    else:  # 'text': the dictionary itself mangled
        texts = ["{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4}",
                 "{'descr': '<f4', 'fortran_order': False, 'shape': 3}",
                 "{'descr': '<f4', 'fortran_order': False}",
                 "{'shape': (), 'descr': '<f4', 'fortran_order': False, }",
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (,), }",
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (1e3, 2), }",
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (0x10, 2), }",
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999999, 2), }",
                 "{'descr': '<f4', 'fortran_order': False, 'shape': (-0, 2), }",
                 "{}", "", "'descr'"]
        body = header_bytes(rng.choice(texts)) + a.tobytes()
    return k, body, f'{ARGS[k][0]}: {kind}'


def shapes_option(rng):
    """--shapes=... with random extents, or a malformed entry."""
    entries = []
    for _, shape in ARGS:
        if rng.random() < 0.3:
            entries.append('')
            continue
        dims = [str(rng.choice([1, 2, 3, 4, 8] + EXTENTS)) for _ in shape]
        if rng.random() < 0.1:
            dims.append(str(rng.choice(EXTENTS)))
        entries.append('x'.join(dims))
    if rng.random() < 0.15:
        entries[rng.randrange(len(entries))] = rng.choice(['x', '3x', 'x3', '3xx4', '1e9', '-', ' ', '3x4x'])
    return '--shapes=' + ','.join(entries)


class Fuzzer(fc.CaseRunner):
    def __init__(self, args):
        self.args = args
        self.stats = collections.Counter()
        self.errors = collections.Counter()
        self.failures = []

    def case(self, index):
        rng = random.Random(f'{self.args.seed}:{index}')
        kind = rng.choice(['npy', 'npy', 'npy', 'shapes', 'dynamic'])
        # -O0 (lstm-run --opt-level): the check is how inputs are refused.
        cmd = [self.args.lstm_run, self.args.module, '--opt-level=0']
        files = {}
        if kind == 'npy':
            good = good_arrays(rng)
            k, body, what = malformed_npy(rng, good)
            for j, a in enumerate(good):
                files[f'in{j}.npy'] = body if j == k else None
            what = 'npy ' + what
            cmd.append('--inputs=' + ','.join(f'{{dir}}/in{j}.npy' for j in range(len(good))))
            return kind, what, cmd, files, good
        if kind == 'shapes':
            opt = shapes_option(rng)
            cmd += ['--random-inputs', opt]
            return kind, opt, cmd, files, None
        size = rng.choice(EXTENTS + [4, 7, 100000])
        cmd += ['--random-inputs', f'--dynamic-size={size}']
        return kind, f'--dynamic-size={size}', cmd, files, None

    def one(self, index):
        kind, what, cmd, files, good = self.case(index)
        d = os.path.join(self.args.work, f'c{index}')
        os.makedirs(d, exist_ok=True)
        for name, body in files.items():
            path = os.path.join(d, name)
            if body is None:
                np.save(path, good[int(name[2:-4])])
            else:
                with open(path, 'wb') as f:
                    f.write(body)
        cmd = [c.replace('{dir}', d) for c in cmd]
        r = fc.run(cmd, self.args.timeout, self.args.mem_mb, extra_crash_signs=[CHILD_CRASH])
        stats, errors, failures = collections.Counter(), collections.Counter(), []
        stats['cases'] += 1
        stats[f'{kind}'] += 1
        stats[f'{r.kind}'] += 1
        if r.kind in ('crash', 'hang', 'silent'):
            failures.append((r.kind, index, kind, what, cmd, r))
            keep = os.path.join(self.args.out, f'{r.kind}-{index}')
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(d, keep)
            with open(os.path.join(keep, 'command'), 'w') as f:
                f.write(' '.join(cmd) + '\n')
        elif r.kind == 'error':
            errors[f'{kind}: {r.first_error()}'] += 1
        shutil.rmtree(d, ignore_errors=True)
        return stats, errors, failures

    def report(self, failure):
        kind, index, case_kind, what, cmd, r = failure
        print(f'{kind.upper()}: case {index} ({what}): {fc.describe_rc(r.rc)}, '
              f'saved in {kind}-{index}/')
        for line in [l for l in r.stderr.splitlines() if l.strip()][:6]:
            print('    ' + line[:200])
        sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--lstm-run', required=True)
    p.add_argument('--module', required=True)
    p.add_argument('--seed', type=int, default=int(os.environ.get('LSTM_FUZZ_SEED', 1)))
    p.add_argument('--count', type=int, default=1000000)
    p.add_argument('--budget', type=float,
                   default=float(os.environ.get('LSTM_FUZZ_BUDGET', 60)))
    p.add_argument('--only', type=int, default=None)
    p.add_argument('--jobs', type=int, default=2)
    p.add_argument('--timeout', type=float, default=120)
    p.add_argument('--mem-mb', type=int, default=3072)
    p.add_argument('--out', default='fuzz-run-out')
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    args.work = os.path.join(args.out, 'work')
    os.makedirs(args.work, exist_ok=True)
    fuzzer = Fuzzer(args)
    seconds = fuzzer.run()
    s = fuzzer.stats
    kinds = collections.Counter(f[0] for f in fuzzer.failures)
    print(f'lstm-run fuzz (seed {args.seed}): {s["cases"]} runs ({s["npy"]} malformed .npy, '
          f'{s["shapes"]} --shapes, {s["dynamic"]} --dynamic-size): {s["ok"]} ran, '
          f'{s["error"]} clean errors, in {seconds:.0f} s')
    print('clean errors by kind (most frequent):')
    for msg, n in fuzzer.errors.most_common(12):
        print(f'  {n:5d}  {msg}')
    print(f'crashes: {kinds["crash"]}, hangs: {kinds["hang"]}, silent failures: {kinds["silent"]}')
    ok = not fuzzer.failures
    print('PASSED' if ok else 'FAILED')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
