"""What the fuzzers share: running a tool under a time and memory limit and
telling a clean error from a crash.

A run is one of
  ok        exit 0
  error     exit 1 with a diagnostic and nothing below
  crash     a signal (the tool's own, not a child's it reports), a non-0/1
            exit, or a sign of one on stderr: LLVM ERROR, an assertion, a
            stack dump, "PLEASE submit a bug report", a sanitizer report
  hang      still running at the time limit (killed)
  silent    exit 1 without any message (a pass that failed quietly)
"""
import concurrent.futures
import os
import re
import resource
import signal
import subprocess
import time

# What a clean error never prints.
CRASH_SIGNS = [
    'PLEASE submit a bug report',
    'Stack dump:',
    'LLVM ERROR',
    'Assertion `',
    'Assertion failed',
    'UNREACHABLE executed',
    'terminate called',
    'Segmentation fault',
    'ERROR: AddressSanitizer',
    'ERROR: LeakSanitizer',
    'runtime error:',  # UndefinedBehaviorSanitizer
    'std::length_error',
    'std::bad_alloc',
]


def sanitized():
    """Whether the tools were built with sanitizers: ASan reserves terabytes of
    address space, so an address-space limit cannot be used."""
    return os.environ.get('LSTM_FUZZ_SANITIZED') == '1'


def limits(mem_mb):
    """A preexec_fn that caps the child's address space (and core dumps)."""
    def apply():
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if mem_mb and not sanitized():
            cap = mem_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        # Its own process group, so that a hang is killed with its children.
        os.setpgrp()
    return apply


class Result:
    def __init__(self, kind, rc, stderr, seconds):
        self.kind, self.rc, self.stderr, self.seconds = kind, rc, stderr, seconds

    def first_error(self):
        """The first `error:` line, normalised (numbers and SSA names out) for
        counting kinds of errors."""
        for line in self.stderr.splitlines():
            if 'error:' in line:
                msg = line.split('error:', 1)[1].strip()
                msg = re.sub(r"%[\w.#-]+", '%v', msg)
                msg = re.sub(r'\d+', 'N', msg)
                return msg[:160]
        return self.stderr.strip().splitlines()[-1][:160] if self.stderr.strip() else ''


def run(cmd, timeout, mem_mb, extra_crash_signs=()):
    """Runs `cmd` under the limits and classifies the outcome."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=limits(mem_mb))
    try:
        _, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return Result('hang', None, err.decode('utf-8', 'replace'),
                      time.monotonic() - start)
    err = err.decode('utf-8', 'replace')
    seconds = time.monotonic() - start
    rc = proc.returncode
    if rc < 0 or rc not in (0, 1) or any(s in err for s in CRASH_SIGNS) or \
            any(s in err for s in extra_crash_signs):
        return Result('crash', rc, err, seconds)
    if rc == 1 and not err.strip():
        return Result('silent', rc, err, seconds)
    return Result('ok' if rc == 0 else 'error', rc, err, seconds)


def describe_rc(rc):
    if rc is None:
        return 'killed at the time limit'
    if rc < 0:
        try:
            return f'signal {signal.Signals(-rc).name}'
        except ValueError:
            return f'signal {-rc}'
    return f'exit {rc}'


def run_cases(one, indices, jobs, budget):
    """Runs `one(index)` for each of `indices` on `jobs` threads and yields
    what each returns as it finishes; no case starts after `budget` seconds
    (the ones running then are waited for)."""
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        pending, it, done = set(), iter(indices), False
        while pending or not done:
            while not done and len(pending) < 2 * jobs:
                if time.monotonic() - start > budget:
                    done = True
                    break
                try:
                    pending.add(pool.submit(one, next(it)))
                except StopIteration:
                    done = True
            if not pending:
                break
            finished, pending = concurrent.futures.wait(
                pending, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in finished:
                yield fut.result()


class CaseRunner:
    """What both fuzzers do with their cases: `run()` calls `self.one(i)`
    (which returns stats, clean errors and failures, each counted here) for
    the cases of `self.args` (`only`, `count`, `jobs`, `budget`) and
    `self.report`s each failure. Returns the seconds it took."""

    def run(self):
        start = time.monotonic()
        indices = [self.args.only] if self.args.only is not None else range(self.args.count)
        for stats, errors, failures in run_cases(self.one, indices, self.args.jobs,
                                                 self.args.budget):
            self.stats.update(stats)
            self.errors.update(errors)
            for f in failures:
                self.report(f)
            self.failures += failures
        return time.monotonic() - start
