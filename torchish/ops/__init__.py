"""The op layer: one registry (``registry.py``) and the op families built on it. Importing this package installs
every op's Tensor method onto :class:`torchish.Tensor`."""
from __future__ import annotations

import functools
import inspect

from .._tensor import Tensor
from . import registry, inplace, convert, elementwise
from . import unary, arith, compare, ternary, copying, operators
from . import reduce, extrema, stats, softmax, scan
from . import shape, broadcast, reorder, slicing, diag, join
from . import index, setitem, gather, scatter
from . import from_data, filled, ranges, creation, random, linalg, einsum, sort, unique, spectral, numeric
from . import gradient, viewcopy
from . import strided, resize, geqrf, fake_quant, tensor_api, storage, out_layout

FAMILIES = (convert, unary, arith, compare, ternary, copying, operators, reduce, extrema, stats, softmax, scan, shape,
            broadcast, reorder, slicing, diag, join, index, setitem, gather, scatter, from_data, filled, ranges,
            creation, random, linalg, einsum, sort, unique, spectral, numeric, gradient, viewcopy, strided, resize,
            geqrf, fake_quant, tensor_api, storage)


def _no_out(name, fn):
    """``fn`` as a Tensor method: PyTorch's methods take no ``out=`` (only the functions do)."""
    @functools.wraps(fn)
    def method(*args, **kwargs):
        if "out" in kwargs:
            raise TypeError(f"{name}() got an unexpected keyword argument 'out'")
        return fn(*args, **kwargs)
    return method


def _takes_out(fn):
    """Whether ``fn`` has an ``out`` parameter (its own or, through ``functools.wraps``, one of the wrapped ones':
    an in-place method made from a function that an ``out=`` decorator wraps)."""
    while fn is not None:
        try:
            if "out" in inspect.signature(fn, follow_wrapped=False).parameters:
                return True
        except (TypeError, ValueError):
            return False
        fn = getattr(fn, "__wrapped__", None)
    return False


def _install():
    for mod in FAMILIES:
        for name, fn in getattr(mod, "METHODS", {}).items():
            setattr(Tensor, name, _no_out(name, fn) if _takes_out(fn) else fn)


_install()


def __getattr__(name):
    """``torchish.ops.<namespace>``: the operators defined through ``torchish.library`` (``torch.ops.mylib.foo``).
    The op families above keep their module names; a namespace named like one of them is reached through
    ``torchish.library``'s registry only."""
    if not name.startswith("_"):
        from ..library.registry import namespace
        ns = namespace(name)
        if ns is not None:
            return ns
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
