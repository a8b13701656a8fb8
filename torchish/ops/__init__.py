"""The op layer: one registry (``registry.py``) and the op families built on it. Importing this package installs
every op's Tensor method onto :class:`torchish.Tensor`."""
from __future__ import annotations

from .._tensor import Tensor
from . import registry, inplace, convert, elementwise
from . import unary, arith, compare, ternary, copying, operators
from . import reduce, extrema, stats, softmax, scan
from . import shape, broadcast, reorder, slicing, diag, join
from . import index, setitem, gather, scatter
from . import creation, random, linalg, einsum, sort, spectral, numeric
from . import gradient, viewcopy
from . import strided, resize, geqrf, tensor_api, storage

FAMILIES = (convert, unary, arith, compare, ternary, copying, operators, reduce, extrema, stats, softmax, scan, shape,
            broadcast, reorder, slicing, diag, join, index, setitem, gather, scatter, creation, random, linalg, einsum,
            sort, spectral, numeric, gradient, viewcopy, strided, resize, geqrf, tensor_api, storage)


def _install():
    for mod in FAMILIES:
        for name, fn in getattr(mod, "METHODS", {}).items():
            setattr(Tensor, name, fn)


_install()
