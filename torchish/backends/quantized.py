"""``torch.backends.quantized``: the quantized engine's name (``engine``, settable among ``supported_engines``).

torchish computes its quantized kernels as PyTorch's x86 engine (fbgemm) does whatever the name says: 'qnnpack'
and 'onednn' are accepted, as PyTorch accepts them, but do not change the numbers.
"""
from __future__ import annotations

import sys
import types

_ENGINES = ("qnnpack", "onednn", "x86", "fbgemm")
_NAMES = {"none": "NoQEngine", "fbgemm": "FBGEMM", "qnnpack": "QNNPACK", "onednn": "ONEDNN", "x86": "X86"}


class _QuantizedEngine(types.ModuleType):
    """The module object: ``engine`` validates what it is set to, as PyTorch's ``QuantizedEngine`` does."""

    def __init__(self, name, doc):
        super().__init__(name, doc)
        self.__dict__["_engine"] = "x86"
        self.__dict__["supported_engines"] = list(_ENGINES)

    @property
    def engine(self):
        return self._engine

    @engine.setter
    def engine(self, value):
        if value not in _NAMES:
            raise RuntimeError(f"{value} is not a valid value for quantized engine")
        if value not in _ENGINES:
            raise RuntimeError(f"quantized engine {_NAMES[value]} is not supported")
        self.__dict__["_engine"] = value


_module = _QuantizedEngine(__name__, __doc__)
_module.__file__ = __file__
sys.modules[__name__] = _module
