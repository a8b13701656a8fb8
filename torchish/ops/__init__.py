"""The op layer: one registry (``registry.py``) and the op families built on it. Importing this package installs
every op's Tensor method onto :class:`torchish.Tensor`."""
from __future__ import annotations

import functools
import inspect
import re

from .._tensor import Tensor
from . import registry, inplace, convert, elementwise, parser_errors
from . import unary, arith, power, compare, ternary, copying, operators
from . import reduce, extrema, stats, softmax, scan
from . import shape, broadcast, reorder, slicing, diag, join
from . import index, setitem, gather, scatter
from . import from_data, filled, ranges, creation, random, linalg, linalg_add, einsum, sort, unique, spectral, numeric
from . import gradient, viewcopy
from . import strided, resize, geqrf, fake_quant, tensor_api, storage, out_layout

FAMILIES = (convert, unary, arith, power, compare, ternary, copying, operators, reduce, extrema, stats, softmax, scan,
            shape, broadcast, reorder, slicing, diag, join, index, setitem, gather, scatter, from_data, filled, ranges,
            creation, random, linalg, linalg_add, einsum, sort, unique, spectral, numeric, gradient, viewcopy, strided,
            resize, geqrf, fake_quant, tensor_api, storage)


def _method_form(name, fn, shared, takes_out):
    """``fn`` as a Tensor method. PyTorch's methods take no ``out=`` (only the functions do), and their argument
    parser counts positions after ``self``: where ``fn`` is also the ``torchish.<name>`` function (``shared``), its
    TypeErrors are worded for the method (see :func:`_method_message`)."""
    @functools.wraps(fn)
    def method(*args, **kwargs):
        if takes_out and "out" in kwargs:  # (in the parser's words where it lists the method's overloads)
            raise TypeError(parser_errors.message(name, args[1:], kwargs, method=True) or
                            f"{name}() got an unexpected keyword argument 'out'")
        if not shared:
            return fn(*args, **kwargs)
        try:
            return fn(*args, **kwargs)
        except TypeError as e:
            msg = _method_message(name, fn, e, args, kwargs)
            if msg is not None:
                e.args = (msg,)
            raise
    return method


_POSITION = re.compile(r"^(\w+)\(\): argument '(\w+)' \(position (\d+)\)")
_DIM_TYPE = re.compile(r"^(?:argument 'dim' must be int, not (\w+)|dim must be an int, got (\w+))$")


def _method_message(name, fn, e, args, kwargs):
    """PyTorch's wording of the TypeError ``e`` that ``fn`` (a function, or the in-place method made from one)
    raised for the method call ``self.<name>(*args[1:], **kwargs)``, or None to keep it: an argument's position
    counts from the first argument after ``self`` (``x.add("a")``: position 1, ``torch.add(x, "a")``: 2), an in-place
    method names itself (``add_()``), an argument given by keyword has no position, and a dim that is no int
    (``wrap_dim``'s message, which has no op to name) is named with its op, argument and position as PyTorch's
    parser names it (a keyword argument has none). A call PyTorch's parser refuses (an op of
    ``parser_errors.SIGNATURES``) has its message (``x.sum(True)`` lists sum's overloads)."""
    if len(e.args) != 1 or not isinstance(e.args[0], str):
        return None
    parsed = parser_errors.message(name, args[1:], kwargs, method=True)
    if parsed is not None:
        return parsed
    msg = e.args[0]
    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    m = _POSITION.match(msg)
    if m is not None:
        if m.group(1) not in (name, base) or int(m.group(3)) < 2:
            return None
        if m.group(2) in kwargs:  # (given by keyword: PyTorch's message has no position)
            return f"{name}(): argument '{m.group(2)}'" + msg[m.end():]
        return f"{name}(): argument '{m.group(2)}' (position {int(m.group(3)) - 1})" + msg[m.end():]
    m = _DIM_TYPE.match(msg)
    if m is None:
        return None
    got = m.group(1) or m.group(2)
    try:
        bound = inspect.signature(getattr(fn, "__wrapped__", fn)).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    params = list(bound.signature.parameters)
    for key, value in bound.arguments.items():
        if "dim" in key and type(value).__name__ == got and not isinstance(value, (tuple, list)):
            where = "" if key in kwargs else f" (position {params.index(key)})"
            return f"{name}(): argument '{key}'{where} must be int, not {got}"
    return None


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


def as_method(name, fn, shared=True):
    """The Tensor method ``name`` made from ``fn`` (``shared``: ``fn`` is also a ``torchish`` function)."""
    takes_out = _takes_out(fn)
    return _method_form(name, fn, shared, takes_out) if shared or takes_out else fn


def _shared(mod, name, fn):
    """Whether the method ``name`` is the function ``mod.<name>`` (or the in-place form of ``mod.<name[:-1]>``)."""
    base = name[:-1] if name.endswith("_") else name
    return base in getattr(mod, "__all__", ()) and getattr(mod, base, None) in (fn, getattr(fn, "__wrapped__", None))


def _install():
    for mod in FAMILIES:
        for name, fn in getattr(mod, "METHODS", {}).items():
            if callable(fn) and not isinstance(fn, type):
                fn = as_method(name, fn, _shared(mod, name, fn))
            setattr(Tensor, name, fn)
    for name, method in operators.SAME_AS_METHOD.items():
        setattr(Tensor, name, getattr(Tensor, method))


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
