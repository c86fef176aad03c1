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
        if "gpu" in item.keywords and not lstmc.gpu_available():
            item.add_marker(pytest.mark.skip(
                reason="no CUDA GPU usable from PyTorch or CuPy on this machine"))
