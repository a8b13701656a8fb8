"""``torchish.utils.deterministic``: ``fill_uninitialized_memory``, PyTorch's switch for what memory allocated
without initialisation holds under ``torch.use_deterministic_algorithms(True)``: NaN (floating and complex
dtypes), the largest value (integers) or True (bool) when on (the default), and whatever it holds when off (zeros
here: JAX has no uninitialised memory). See :func:`torchish._runtime.uninitialized_value`.

Example::

    >>> import torchish as torch
    >>> torch.use_deterministic_algorithms(True)
    >>> torch.empty(2)
    tensor([nan, nan])
    >>> torch.utils.deterministic.fill_uninitialized_memory = False
    >>> torch.empty(2)
    tensor([0., 0.])
"""
from __future__ import annotations

import sys
import types

from .. import _runtime


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        """Whether memory allocated without initialisation is filled with a known value (NaN, the integer maximum,
        True) while deterministic algorithms are on."""
        return _runtime._SETTINGS["fill_uninitialized_memory"]

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        if type(mode) is not bool:  # (PyTorch's binding: an int, even 0 or 1, is refused)
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _runtime._SETTINGS["fill_uninitialized_memory"] = mode


sys.modules[__name__].__class__ = _Deterministic
