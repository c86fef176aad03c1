# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""lstmc: define LSTM-family cells in Python, compile them with the lstm
compiler, run them on numpy arrays (CPU) and PyTorch/CuPy tensors (GPU).

    import lstmc as lc
    net = lc.Network(lc.cells.lstm, input_size=64, hidden=128)
    f = net.compile(target="cpu").bind(net.init_params())
    y, hT, cT = f(x)                       # x: float32 [T, B, 64]

Imports: lc.from_torch(nn.LSTM / nn.GRU / nn.RNN / their cells),
lc.from_state_dict(checkpoint, prefix="lstm."), lc.from_onnx("model.onnx")
(the onnx package is imported on first use).

As a PyTorch module (autograd through the compiled backward pass):

    m = lc.torch_module(net, target="cpu")  # torch.nn.Module, nn.Parameter weights
    y, hT, cT = m(torch_x)

See docs/python.md and docs/tutorial.md.
"""
from . import cells
from .dsl import (CellBuilder, CellError, exp, gate, layer_norm, linear, one_minus, relu,
                  sigmoid, tanh)
from .network import Network
from .interop import TorchLike, from_state_dict, from_torch
from .runtime import CallError, CompiledNetwork, NoGPUError, gpu_available, load


def compile(network, **options):
    """Compiles a Network; see lstmc.compiler.compile."""
    from . import compiler
    return compiler.compile(network, **options)


__all__ = ["CellBuilder", "CellError", "CallError", "CompiledNetwork", "Network",
           "NoGPUError", "OnnxLike", "TorchLike", "cells", "compile", "from_onnx",
           "from_state_dict", "from_torch", "exp", "gate", "gpu_available", "layer_norm",
           "linear", "load", "one_minus", "relu", "sigmoid", "tanh"]


def __getattr__(name):
    # lstmc.torch_module (which imports torch) is loaded on first use; the
    # module is callable: lstmc.torch_module(network, params=None, target=...).
    if name == "torch_module":
        import importlib
        return importlib.import_module(".torch_module", __name__)
    # The ONNX importer too (loaded on first use, so that `python -m
    # lstmc.onnx_import` runs it once; onnx itself is imported when called).
    if name in ("from_onnx", "OnnxLike"):
        from . import onnx_import
        return getattr(onnx_import, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
