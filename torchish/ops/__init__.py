"""The op layer: one registry (``registry.py``) and the op families built on it. Importing this package installs
every op's Tensor method onto :class:`torchish.Tensor`."""
from __future__ import annotations

from .._tensor import Tensor
from . import registry, inplace, convert, elementwise, reduce, shape, index, creation, random, linalg
from . import sort

FAMILIES = (convert, elementwise, reduce, shape, index, creation, random, linalg, sort)


def _install():
    for mod in FAMILIES:
        for name, fn in getattr(mod, "METHODS", {}).items():
            setattr(Tensor, name, fn)


_install()
