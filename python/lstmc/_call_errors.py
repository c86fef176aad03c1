# SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
"""The errors of a call of a compiled network (lstmc.runtime's)."""


class CallError(ValueError):
    """A call with the wrong arguments: names the argument and the shapes."""


class NoGPUError(RuntimeError):
    """A GPU network called where no GPU (or no CUDA tensor library) is."""


# Raised and documented as lstmc.runtime's.
CallError.__module__ = NoGPUError.__module__ = "lstmc.runtime"
