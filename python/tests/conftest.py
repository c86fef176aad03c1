# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# cases.py / irnorm.py here, the float64 reference of the lit suite there.
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "test", "Integration"))


def pytest_collection_modifyitems(config, items):
    import lstmc
    try:
        import torch  # noqa: F401
        have_torch = True
    except ImportError:
        have_torch = False
    for item in items:
        if "torch" in item.keywords and not have_torch:
            item.add_marker(pytest.mark.skip(
                reason="PyTorch is not installed (pip install torch); the interop tests need it"))
        if "gpu" in item.keywords and not lstmc.gpu_available() and not _fill_gpu_cache(items):
            item.add_marker(pytest.mark.skip(
                reason="no CUDA GPU usable from PyTorch or CuPy on this machine"))


# The GPU machine has no compiler (no MLIR): its GPU tests run networks that
# were compiled here ahead of time. LSTMC_GPU_CACHE=DIR keys every CUDA
# compilation by its IR and options in DIR; with LSTMC_GPU_CACHE_FILL=1 (on a
# machine with the compiler, GPU or not) the GPU tests compile into DIR and
# skip, and where the compiler is missing they load from DIR.
_GPU_CACHE = os.environ.get("LSTMC_GPU_CACHE")
_GPU_CACHE_FILL = os.environ.get("LSTMC_GPU_CACHE_FILL") == "1"


def pytest_configure(config):
    if not _GPU_CACHE:
        return
    import hashlib
    import json

    import lstmc
    from lstmc import compiler

    real_compile = compiler.compile

    def entry_of(network, options):
        key = hashlib.sha256(json.dumps(
            [network.ir, network.compute_type, sorted(options.items())],
            default=str).encode()).hexdigest()[:24]
        return os.path.join(_GPU_CACHE, key)

    def cached_compile(network, path=None, target="cpu", **options):
        if target != "cuda":
            return real_compile(network, path=path, target=target, **options)
        # A persistent network compiled without the per-step fallback
        # (lstmc.compile's default): the complete library that a call may
        # ask for is compiled into the cache beside it.
        on_demand = (options.get("persistent")
                     and options.get("per_step_fallback", "on-demand") == "on-demand")
        complete = dict(options, per_step_fallback=True)
        entry = entry_of(network, options)
        if _GPU_CACHE_FILL:
            for entry_options in [options] + ([complete] if on_demand else []):
                try:
                    real_compile(network, path=entry_of(network, entry_options),
                                 target=target, **entry_options)
                except lstmc.runtime.NoGPUError:
                    pass  # written; loading it needs the GPU
            pytest.skip(f"compiled into the GPU cache ({entry})")
        if not os.path.isdir(entry):
            raise RuntimeError(f"network not in the GPU cache {_GPU_CACHE} "
                               "(fill it with LSTMC_GPU_CACHE_FILL=1)")
        loaded = lstmc.load(entry)
        if on_demand:
            loaded._attach_per_step_fallback(lstmc.runtime.PerStepFallback(
                lambda: cached_compile(network, target=target, **complete)))
        return loaded

    compiler.compile = cached_compile


def _fill_gpu_cache(items):
    """With LSTMC_GPU_CACHE_FILL, the GPU tests run (to compile) without a GPU."""
    return _GPU_CACHE and _GPU_CACHE_FILL
