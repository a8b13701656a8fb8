"""Padding modules: ``ZeroPad``/``ConstantPad``/``ReflectionPad``/``ReplicationPad``/``CircularPad`` in 1, 2 and 3
dimensions, wrappers over :func:`torchish.nn.functional.pad` with PyTorch's argument expansion and ``extra_repr``.

Example:
    >>> import torchish as torch
    >>> torch.nn.ReflectionPad1d(2)
    ReflectionPad1d((2, 2))
"""
from __future__ import annotations

from .. import functional as F
from ..module import Module

__all__ = ["CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
           "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d", "ReplicationPad1d", "ReplicationPad2d",
           "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d", "ZeroPad3d"]


def _ntuple(padding, n):
    """An int becomes (p,) * n; a sequence is kept as a tuple (its length is checked by F.pad)."""
    if isinstance(padding, (tuple, list)):
        return tuple(padding)
    return (padding,) * n


class _PadNd(Module):
    """Pads the last ``_dims`` dimensions with ``F.pad(mode=_mode)``."""

    _mode = "constant"
    _dims = 1

    def __init__(self, padding):
        super().__init__()
        self.padding = _ntuple(padding, 2 * self._dims)

    def _check_input_dim(self, input):
        lo, hi = self._dims + 1, self._dims + 2
        if input.ndim not in (lo, hi):
            raise ValueError(f"expected {lo}D or {hi}D input (got {input.ndim}D input)")

    def forward(self, input):
        return F.pad(input, self.padding, self._mode)

    def extra_repr(self):
        return f"{self.padding}"


class _CircularPadNd(_PadNd):
    _mode = "circular"

    def forward(self, input):
        self._check_input_dim(input)
        return F.pad(input, self.padding, "circular")


class _ConstantPadNd(_PadNd):
    def __init__(self, padding, value: float):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return F.pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class _ZeroPadNd(_ConstantPadNd):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class _ReflectionPadNd(_PadNd):
    _mode = "reflect"


class _ReplicationPadNd(_PadNd):
    _mode = "replicate"


def _family(base, prefix, doc):
    out = []
    for d in (1, 2, 3):
        cls = type(f"{prefix}{d}d", (base,), {"_dims": d, "__doc__": f"{doc} the last {d} dimension(s).",
                                               "__module__": __name__})
        out.append(cls)
    return out


CircularPad1d, CircularPad2d, CircularPad3d = _family(_CircularPadNd, "CircularPad", "Circular (wrap-around) pad of")
ConstantPad1d, ConstantPad2d, ConstantPad3d = _family(_ConstantPadNd, "ConstantPad", "Constant-value pad of")
ZeroPad1d, ZeroPad2d, ZeroPad3d = _family(_ZeroPadNd, "ZeroPad", "Zero pad of")
ReflectionPad1d, ReflectionPad2d, ReflectionPad3d = _family(_ReflectionPadNd, "ReflectionPad", "Reflection pad of")
ReplicationPad1d, ReplicationPad2d, ReplicationPad3d = _family(_ReplicationPadNd, "ReplicationPad",
                                                               "Edge-replicating pad of")
