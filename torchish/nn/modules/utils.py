"""``torch.nn.modules.utils``: the argument normalisers that layer code (and third-party layers) import."""
from __future__ import annotations

import collections.abc
from itertools import repeat


def _ntuple(n, name="parse"):
    def parse(x):
        if isinstance(x, collections.abc.Iterable):
            return tuple(x)
        return tuple(repeat(x, n))
    parse.__name__ = name
    return parse


_single = _ntuple(1, "_single")
_pair = _ntuple(2, "_pair")
_triple = _ntuple(3, "_triple")
_quadruple = _ntuple(4, "_quadruple")


def _reverse_repeat_tuple(t, n):
    """``(a, b)`` -> ``(b, b, a, a)`` for n=2: the padding order of ``F.pad`` from a per-dim padding."""
    return tuple(x for x in reversed(t) for _ in range(n))
