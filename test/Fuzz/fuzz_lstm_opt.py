#!/usr/bin/env python3
"""A seeded mutation fuzzer of lstm-opt over the examples.

  fuzz_lstm_opt.py --lstm-opt PATH --examples DIR [--seed N] [--count N]
                   [--budget SECONDS] [--jobs N] [--nvvm-every K] [--out DIR]

Each module is an example with one to three mutations: a line deleted,
duplicated or swapped with another, an extent changed (in one type, or the
same extent in every type), an element type changed, an activation or op
name replaced, an operand replaced by another value, a slice offset or size
changed, the direction flipped, a constant changed. Module i is drawn from
random.Random(f'{seed}:{i}'), so a run is reproducible and any one module can
be drawn again (--only I).

Every module goes through `lstm-opt` (parse and verify); one that verifies
goes on through `--lstm-to-cpu` and `--lstm-optimize --lstm-to-cpu`, and
every K-th of those through `--lstm-optimize --lstm-to-nvvm`. Each run has a
time and a memory limit. A crash (a signal, LLVM ERROR, an assertion, a
stack dump, a sanitizer report) or a hang fails the run. So does an internal
error: a module that verified, then an error reported by an upstream op's
verifier on IR that one of our passes made (the user never wrote it), or a
lowering that fails on one of the user's ops with "failed to legalize"; and
so does a silent failure (exit 1 with no error message).

Prints one line per failure (with the module saved under --out) and a
summary: modules tried, how many verified, how far they got, crashes,
hangs, internal errors, and the kinds of clean errors seen.
"""
import argparse
import collections
import os
import random
import re
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fuzz_common as fc  # noqa: E402

EXTENTS = ['0', '1', '2', '3', '?', '?', '5', '64', '127', '128', '129', '256', '512',
           '65536', '2147483648', '4611686018427387904', '9223372036854775807']
ELEMENT_TYPES = ['f32', 'f64', 'f16', 'bf16', 'i32', 'i64', 'i1', 'index', 'i8',
                 'f8E4M3FN', 'complex<f32>', 'vector<4xf32>']
ACTIVATIONS = ['sigmoid', 'tanh', 'relu', 'identity', 'softplus']
OPS = ['arith.addf', 'arith.subf', 'arith.mulf', 'arith.divf', 'arith.maximumf',
       'arith.minimumf', 'arith.remf', 'math.tanh', 'math.exp', 'math.rsqrt', 'math.sqrt',
       'math.absf', 'math.log', 'arith.negf', 'lstm.one_minus', 'arith.addi', 'arith.cmpf',
       'tensor.cast', 'linalg.copy']
NUMBERS = ['0', '1', '-1', '2', '63', '64', '127', '128', '129', '255', '256', '384', '511',
           '512', '1000', '9223372036854775807', '-9223372036854775808']

TENSOR_RE = re.compile(r'tensor<([^<>]*(?:<[^<>]*>[^<>]*)*)>')
SSA_USE_RE = re.compile(r'%[A-Za-z_][\w$.]*|%\d+')
BRACKET_RE = re.compile(r'\[([^\[\]]*)\]')


def split_shape(body):
    """'?x64xf32' -> (['?', '64'], 'f32')."""
    parts = body.split('x')
    dims = []
    while len(parts) > 1 and (parts[0] == '?' or parts[0].isdigit()):
        dims.append(parts.pop(0))
    return dims, 'x'.join(parts)


def join_shape(dims, elt):
    return 'x'.join(dims + [elt])


def mut_delete(lines, rng):
    del lines[rng.randrange(len(lines))]


def mut_duplicate(lines, rng):
    i = rng.randrange(len(lines))
    lines.insert(rng.randrange(len(lines) + 1), lines[i])


def mut_swap(lines, rng):
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    lines[i], lines[j] = lines[j], lines[i]


def _type_sites(lines):
    return [(i, m) for i, line in enumerate(lines) for m in TENSOR_RE.finditer(line)]


def mut_one_extent(lines, rng):
    """One extent of one tensor type: changed, dropped or added."""
    sites = _type_sites(lines)
    if not sites:
        return
    i, m = rng.choice(sites)
    dims, elt = split_shape(m.group(1))
    r = rng.random()
    if r < 0.7 and dims:
        dims[rng.randrange(len(dims))] = rng.choice(EXTENTS)
    elif r < 0.85 and dims:
        del dims[rng.randrange(len(dims))]
    else:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice(EXTENTS))
    line = lines[i]
    lines[i] = line[:m.start()] + f'tensor<{join_shape(dims, elt)}>' + line[m.end():]


def mut_all_extents(lines, rng):
    """One extent value replaced in every type, consistently (and in slice
    sizes where it is a number there): such modules often still verify and
    reach the passes."""
    sites = _type_sites(lines)
    values = sorted({d for _, m in sites for d in split_shape(m.group(1))[0]})
    if not values:
        return
    # Extents of 0 and 1 and dynamic ones are the edges the passes meet.
    old, new = rng.choice(values), rng.choice(EXTENTS + ['0', '0', '1', '?'])
    position = rng.choice([None, 0, 1, 2])  # only the extent at this position

    def fix(m):
        dims, elt = split_shape(m.group(1))
        for k, d in enumerate(dims):
            if d == old and (position is None or position == k):
                dims[k] = new
        return f'tensor<{join_shape(dims, elt)}>'

    for i, line in enumerate(lines):
        lines[i] = TENSOR_RE.sub(fix, line)
        if new != '?' and old != '?' and rng.random() < 0.5:
            lines[i] = BRACKET_RE.sub(
                lambda b: '[' + ', '.join(new if v.strip() == old else v
                                          for v in b.group(1).split(',')) + ']',
                lines[i])


def mut_element_type(lines, rng):
    sites = _type_sites(lines)
    if not sites:
        return
    new = rng.choice(ELEMENT_TYPES)
    everywhere = rng.random() < 0.4

    def fix(m):
        dims, _ = split_shape(m.group(1))
        return f'tensor<{join_shape(dims, new)}>'

    if everywhere:
        for i, line in enumerate(lines):
            lines[i] = TENSOR_RE.sub(fix, line)
    else:
        i, m = rng.choice(sites)
        lines[i] = lines[i][:m.start()] + fix(m) + lines[i][m.end():]


def _replace_word(lines, rng, words, choices):
    sites = [(i, m) for i, line in enumerate(lines)
             for m in re.finditer(r'\b(' + '|'.join(map(re.escape, words)) + r')\b', line)]
    if not sites:
        return
    i, m = rng.choice(sites)
    lines[i] = lines[i][:m.start()] + rng.choice(choices) + lines[i][m.end():]


def mut_activation(lines, rng):
    _replace_word(lines, rng, ['sigmoid', 'tanh', 'relu', 'identity'], ACTIVATIONS)


def mut_op(lines, rng):
    _replace_word(lines, rng, [o for o in OPS if '.' in o], OPS)


def mut_direction(lines, rng):
    _replace_word(lines, rng, ['forward', 'reverse'], ['forward', 'reverse'])


def mut_operand(lines, rng):
    """A use of a value replaced by another value of the module."""
    names = sorted({m.group(0) for line in lines for m in SSA_USE_RE.finditer(line)})
    sites = []
    for i, line in enumerate(lines):
        lhs = line.split('=', 1)[0] if '=' in line and '==' not in line else ''
        start = len(lhs) + 1 if lhs else 0
        sites += [(i, m) for m in SSA_USE_RE.finditer(line) if m.start() >= start]
    if not sites or len(names) < 2:
        return
    i, m = rng.choice(sites)
    lines[i] = lines[i][:m.start()] + rng.choice(names) + lines[i][m.end():]


def mut_number(lines, rng):
    """A number in a [...] list (slice offsets, sizes, strides) changed."""
    sites = [(i, m) for i, line in enumerate(lines) for m in re.finditer(r'(?<=[\[ ,])-?\d+(?=[\],])', line)]
    if not sites:
        return
    i, m = rng.choice(sites)
    lines[i] = lines[i][:m.start()] + rng.choice(NUMBERS) + lines[i][m.end():]


def mut_constant(lines, rng):
    """A constant's value or type changed."""
    sites = [(i, m) for i, line in enumerate(lines)
             for m in re.finditer(r'dense<[^>]*>|arith\.constant -?\d+(\.\d+)?', line)]
    if not sites:
        return
    i, m = rng.choice(sites)
    text = m.group(0)
    if text.startswith('dense'):
        new = rng.choice(['dense<0.0>', 'dense<1.0e+38>', 'dense<0x7FC00000>', 'dense<[1.0, 2.0]>',
                          'dense<-1>', 'dense<>', 'dense<true>'])
    else:
        new = 'arith.constant ' + rng.choice(NUMBERS)
    lines[i] = lines[i][:m.start()] + new + lines[i][m.end():]


MUTATIONS = [
    (mut_delete, 3), (mut_duplicate, 1), (mut_swap, 2), (mut_one_extent, 4),
    (mut_all_extents, 8), (mut_element_type, 2), (mut_activation, 2), (mut_op, 2),
    (mut_direction, 1), (mut_operand, 3), (mut_number, 3), (mut_constant, 1),
]


def mutate(text, rng):
    """One to three mutations of `text`; returns (new text, their names)."""
    lines = [line for line in text.splitlines() if not line.lstrip().startswith('//')]
    funcs, weights = zip(*MUTATIONS)
    applied = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        f = rng.choices(funcs, weights)[0]
        f(lines, rng)
        applied.append(f.__name__[4:])
    return '\n'.join(lines) + '\n', applied


# An upstream op rejecting IR that one of our passes made from a module that
# verified. lstm-opt prints the op that a diagnostic is about ("see current
# operation: %x = "tensor.extract_slice"(...)"); the lowering keeps the
# location of the op it lowers, so an upstream op that is not on the line
# the error points to was made by a pass: the user never wrote it. (An error
# on the user's own op, a tensor.dim with an index out of range, names a
# line that holds that op.)
UPSTREAM = ('memref', 'tensor', 'linalg', 'llvm', 'gpu', 'scf', 'cf', 'arith', 'math',
            'vector', 'bufferization', 'affine', 'func', 'nvvm', 'index', 'builtin')
ERROR_RE = re.compile(r'^[^\n]*?:(\d+):\d+: error: ([^\n]*)$', re.M)
NOTE_RE = re.compile(r'note: see current operation: (?:[^=\n]*= )?"([\w.]+)"')
LEGALIZE_RE = re.compile(r"failed to legalize operation '([\w.]+)'")


def is_internal(stderr, text):
    lines = text.splitlines()
    errors = list(ERROR_RE.finditer(stderr))
    for k, m in enumerate(errors):
        line = int(m.group(1))
        end = errors[k + 1].start() if k + 1 < len(errors) else len(stderr)
        note = NOTE_RE.search(stderr, m.end(), end)
        legal = LEGALIZE_RE.search(m.group(2))
        op = legal.group(1) if legal else note.group(1) if note else None
        if not op or op.split('.')[0] not in UPSTREAM:
            continue
        if not (0 < line <= len(lines) and op in lines[line - 1]):
            return True
    return False


class Fuzzer(fc.CaseRunner):
    def __init__(self, args):
        self.args = args
        self.examples = sorted(os.path.join(args.examples, f) for f in os.listdir(args.examples)
                               if f.endswith('.mlir'))
        self.texts = {p: open(p).read() for p in self.examples}
        self.stats = collections.Counter()
        self.errors = collections.Counter()
        self.failures = []

    def module(self, index):
        rng = random.Random(f'{self.args.seed}:{index}')
        example = rng.choice(self.examples)
        text, applied = mutate(self.texts[example], rng)
        return rng, example, text, applied

    def one(self, index):
        """Fuzzes module `index`; returns (stats, errors, failures) of it."""
        rng, example, text, applied = self.module(index)
        path = os.path.join(self.args.work, f'm{index}.mlir')
        with open(path, 'w') as f:
            f.write(text)
        stats, errors, failures = collections.Counter(), collections.Counter(), []
        stats['modules'] += 1
        stages = [('verify', [])]
        verified = False
        for name, flags in stages:
            r = fc.run([self.args.lstm_opt, path, '-o', os.devnull, *flags],
                       self.args.timeout, self.args.mem_mb)
            stats[f'runs'] += 1
            stats[f'{name}:{r.kind}'] += 1
            bad = r.kind in ('crash', 'hang', 'silent')
            internal = verified and r.kind == 'error' and is_internal(r.stderr, text)
            if bad or internal:
                kind = 'internal' if internal else r.kind
                failures.append((kind, index, example, applied, name, flags, r))
                keep = os.path.join(self.args.out, f'{kind}-{index}.mlir')
                with open(keep, 'w') as f:
                    f.write(f'// {kind} in {" ".join(["lstm-opt", *flags])}: '
                            f'{fc.describe_rc(r.rc)}\n// from {os.path.basename(example)}, '
                            f'mutations {applied}, seed {self.args.seed}, module {index}\n')
                    f.write(text)
                break
            if r.kind == 'error':
                errors[f'{name}: {r.first_error()}'] += 1
                if verified and self.args.save_late:
                    with open(os.path.join(self.args.out, f'late-{index}.mlir'), 'w') as f:
                        f.write(f'// {" ".join(["lstm-opt", *flags])}: {r.first_error()}\n')
                        f.write(text)
                break
            if name == 'verify':
                verified = True
                stats['verified'] += 1
                stages.append(('to-cpu', ['--lstm-to-cpu']))
                stages.append(('optimize,to-cpu', ['--lstm-optimize', '--lstm-to-cpu']))
                if self.args.nvvm_every and (rng.randrange(self.args.nvvm_every) == 0):
                    stages.append(('optimize,to-nvvm', ['--lstm-optimize', '--lstm-to-nvvm']))
            else:
                stats[f'passed {name}'] += 1
        os.remove(path)
        return stats, errors, failures

    def report(self, failure):
        kind, index, example, applied, stage, flags, r = failure
        print(f'{kind.upper()}: module {index} ({os.path.basename(example)}, {applied}) '
              f'in lstm-opt {" ".join(flags) or "(verify)"}: {fc.describe_rc(r.rc)}, '
              f'saved as {kind}-{index}.mlir')
        tail = [line for line in r.stderr.splitlines() if line.strip()][:6]
        for line in tail:
            print('    ' + line[:200])
        sys.stdout.flush()


def main():
    p = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    p.add_argument('--lstm-opt', required=True)
    p.add_argument('--examples', required=True)
    p.add_argument('--seed', type=int, default=int(os.environ.get('LSTM_FUZZ_SEED', 1)))
    p.add_argument('--count', type=int, default=1000000, help='modules to try at most')
    p.add_argument('--budget', type=float,
                   default=float(os.environ.get('LSTM_FUZZ_BUDGET', 120)), help='seconds to start modules for')
    p.add_argument('--only', type=int, default=None, help='run module I alone')
    p.add_argument('--jobs', type=int, default=2)
    p.add_argument('--timeout', type=float, default=60, help='seconds per lstm-opt run')
    p.add_argument('--mem-mb', type=int, default=4096, help='address space per run')
    p.add_argument('--nvvm-every', type=int, default=10,
                   help='one verified module in K also goes through --lstm-to-nvvm (0: none)')
    p.add_argument('--out', default='fuzz-out', help='where failing modules are saved')
    p.add_argument('--print-module', action='store_true', help='with --only: print it')
    p.add_argument('--save-late', action='store_true',
                   help='also save the modules that verified and failed later')
    p.add_argument('--show-late', type=int, default=12,
                   help='kinds of errors after verification to list')
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    args.work = os.path.join(args.out, 'work')
    os.makedirs(args.work, exist_ok=True)
    fuzzer = Fuzzer(args)
    if args.print_module and args.only is not None:
        _, example, text, applied = fuzzer.module(args.only)
        print(f'// from {example}, mutations {applied}\n{text}')
        return 0
    seconds = fuzzer.run()
    s = fuzzer.stats
    kinds = collections.Counter(f[0] for f in fuzzer.failures)
    print(f'lstm-opt fuzz (seed {args.seed}): {s["modules"]} modules, {s["verified"]} verified, '
          f'{s["passed to-cpu"]} through --lstm-to-cpu, {s["passed optimize,to-cpu"]} through '
          f'--lstm-optimize --lstm-to-cpu, {s["passed optimize,to-nvvm"]} of '
          f'{sum(v for k, v in s.items() if k.startswith("optimize,to-nvvm:"))} through '
          f'--lstm-optimize --lstm-to-nvvm; {s["runs"]} lstm-opt runs in {seconds:.0f} s')
    print('clean errors by kind (most frequent):')
    for msg, n in fuzzer.errors.most_common(12):
        print(f'  {n:5d}  {msg}')
    # Errors after the module verified: clean, but worth a look (an
    # unsupported feature, or a pass rejecting what the verifier accepted).
    late = [(m, n) for m, n in fuzzer.errors.most_common() if not m.startswith('verify:')]
    print(f'errors after verification ({sum(n for _, n in late)}):')
    for msg, n in late[:args.show_late]:
        print(f'  {n:5d}  {msg}')
    print(f'crashes: {kinds["crash"]}, hangs: {kinds["hang"]}, internal errors: '
          f'{kinds["internal"]}, silent failures: {kinds["silent"]}')
    ok = not fuzzer.failures
    print('PASSED' if ok else 'FAILED')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
