"""PyTorch's errors for a non-Tensor passed where a functional op takes a Tensor.

PyTorch's argument parser rejects it with a TypeError naming the op, the argument and its position in the op's
schema (``linear(): argument 'input' (position 1) must be Tensor, not list``); where PyTorch's Python wrapper
touches the argument first (``F.softmax`` calls ``input.softmax``), the error is that AttributeError instead.
Checked up front, so that a list, a numpy array or ``None`` never reaches a JAX kernel.
"""
from __future__ import annotations

import numbers

from ... import _dtype
from ..._tensor import Tensor
from ...ops.elementwise import need_bool as need_bool  # noqa: F401  (one check for ops and nn)
from ...ops.elementwise import type_name


def need_tensor(fname, x, arg="input", pos=1, optional=False):
    """PyTorch's TypeError unless ``x`` is a Tensor (or ``None`` for an ``optional`` argument).

    Example::

        >>> need_tensor("linear", [1.0], "input", 1)
        Traceback (most recent call last):
        TypeError: linear(): argument 'input' (position 1) must be Tensor, not list
    """
    if isinstance(x, Tensor) or (optional and x is None):
        return
    where = f" (position {pos})" if pos else ""
    raise TypeError(f"{fname}(): argument '{arg}'{where} must be Tensor, not {type_name(x)}")


def need_number(fname, x, arg, pos, kind="Number"):
    """PyTorch's TypeError unless ``x`` is what its parser takes for a Scalar (``kind='Number'``: a Python or numpy
    number, or a 0-dim Tensor) or a double (``kind='float'``: a real one).

    Example::

        >>> need_number("elu", "a", "alpha", 2)
        Traceback (most recent call last):
        TypeError: elu(): argument 'alpha' (position 2) must be Number, not str
    """
    number = numbers.Number if kind == "Number" else numbers.Real
    if isinstance(x, number) or (isinstance(x, Tensor) and x.ndim == 0):
        return
    where = f" (position {pos})" if pos else ""  # (None: an argument PyTorch's callers pass by keyword)
    raise TypeError(f"{fname}(): argument '{arg}'{where} must be {kind}, not {type(x).__name__}")


def need_int(fname, x, arg, pos):
    """PyTorch's TypeError unless ``x`` is an int for its parser: a Python or numpy integer (not a bool) or a
    0-dim integer Tensor."""
    if isinstance(x, numbers.Integral) and not isinstance(x, bool):
        return
    if isinstance(x, Tensor) and x.ndim == 0 and x.dtype.category == _dtype._INT:
        return
    where = f" (position {pos})" if pos else ""
    raise TypeError(f"{fname}(): argument '{arg}'{where} must be int, not {type(x).__name__}")


def need_int_list(fname, seq, arg, pos):
    """PyTorch's parser for a ``tuple of ints`` argument: a tuple or list (``F.pad(x, 1)`` is refused), whose first
    element must be an int (not a bool), the others unpack as ints (a bool passes); its three wordings. A Tensor
    element of one element is left to the caller."""
    if not isinstance(seq, (tuple, list)):
        raise TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be tuple of ints, not {type(seq).__name__}")
    for i, e in enumerate(seq):
        if isinstance(e, Tensor) and e.numel() == 1 or \
                (isinstance(e, numbers.Integral) and not (i == 0 and isinstance(e, bool))):
            continue
        raise int_list_element_error(fname, arg, pos, i, e)


def int_list_element_error(fname, arg, pos, i, e):
    """The TypeError PyTorch's parser raises for element ``i`` of a ``tuple of ints`` argument that is no int."""
    if i == 0:
        return TypeError(f"{fname}(): argument '{arg}' (position {pos}) must be tuple of ints, but found element of "
                         f"type {type(e).__name__} at pos 0")
    return TypeError(f"{fname}(): argument '{arg}' failed to unpack the object at pos {i + 1} with error \"type must "
                     f"be tuple of ints,but got {type(e).__name__}\"")


def need_tensor_attr(x, attr):
    """The AttributeError PyTorch's Python wrapper raises when it calls ``x.<attr>`` on a non-Tensor."""
    if not isinstance(x, Tensor):
        raise AttributeError(f"'{type(x).__name__}' object has no attribute '{attr}'")
