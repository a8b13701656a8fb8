"""``torch.cond`` and ``torch.while_loop``, and the ``torch.sym_*`` helpers that code written for ``torch.compile``
and ``torch.export`` calls.

Outside a trace, ``cond`` runs the branch its predicate picks and ``while_loop`` loops in Python, as PyTorch's eager
calls do. Inside ``torchish.compile``, a ``cond`` whose predicate is a traced value runs both branches (their
outputs must agree in structure, shapes and dtypes) and selects each output with ``where``: one program for both
outcomes, with gradients through the chosen branch only. A ``while_loop`` whose condition is traced is a Python
loop on a traced value: the same graph break as ``while bool(t)``.

Example:
    >>> import torchish as torch
    >>> x = torch.arange(3.0)
    >>> torch.cond(x.sum() > 1, lambda a: a * 2, lambda a: a - 1, (x,))
    tensor([0., 2., 4.])
"""
from __future__ import annotations

import builtins
import math

import jax

from ._tensor import Tensor
from .utils import _pytree

__all__ = ["cond", "while_loop", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sum",
           "sym_sqrt", "SymInt", "SymFloat", "SymBool"]


def _traced(t) -> bool:
    return isinstance(t, Tensor) and isinstance(t._d, jax.core.Tracer)


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``; ``pred`` a bool or a one-element tensor."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    elif not isinstance(pred, (builtins.bool, builtins.int)):
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got {pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise TypeError(f"'{type(true_fn if not callable(true_fn) else false_fn).__name__}' object is not callable")
    if not _traced(pred):
        return (true_fn if bool(pred) else false_fn)(*operands)
    from .ops.ternary import where
    a, b = true_fn(*operands), false_fn(*operands)
    la, sa = _pytree.tree_flatten(a)
    lb, sb = _pytree.tree_flatten(b)
    if sa != sb:
        raise RuntimeError(f"Expected branches of cond to return the same pytree structure, but got true branch "
                           f"{sa} and false branch {sb}.")
    p = pred.reshape(()).bool()
    out = []
    for x, y in zip(la, lb):
        if isinstance(x, Tensor) and isinstance(y, Tensor):
            if tuple(x.shape) != tuple(y.shape) or x.dtype != y.dtype:
                raise RuntimeError(f"Expected branches of cond to return tensors of the same shape and dtype, but "
                                   f"got {tuple(x.shape)} {x.dtype} and {tuple(y.shape)} {y.dtype}.")
            out.append(where(p, x, y))
        elif x == y:
            out.append(x)
        else:
            raise RuntimeError(f"Expected branches of cond to return the same values for non-tensor outputs, but "
                               f"got {x!r} and {y!r}.")
    return _pytree.tree_unflatten(out, sa)


def while_loop(cond_fn, body_fn, carried_inputs):
    """``carried = body_fn(*carried)`` while ``cond_fn(*carried)``; returns the final carried values."""
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got {type(carried_inputs)}")
    carried = tuple(carried_inputs)
    out = carried
    while bool(cond_fn(*carried)):
        out = body_fn(*carried)
        carried = out if isinstance(out, tuple) else (out,)
    return out


# ----------------------------------------------------------------------------------------------------------------
# sym_* (symbolic shapes in PyTorch; plain Python numbers and tensors here)


class _Symbolic:
    """PyTorch's symbolic number types, which stand for a size while ``torch.compile`` traces with dynamic shapes.
    torchish's shapes are always concrete Python ints, so nothing is an instance: code that tests
    ``isinstance(n, torch.SymInt)`` takes its concrete branch, as under PyTorch eager."""

    def __init__(self, *args, **kwargs):
        raise TypeError(f"torch.{type(self).__name__} cannot be created directly: torchish's sizes are concrete "
                        f"Python numbers")


class SymInt(_Symbolic):
    pass


class SymFloat(_Symbolic):
    pass


class SymBool(_Symbolic):
    pass


def sym_int(a):
    return a if isinstance(a, builtins.int) else math.trunc(a) if isinstance(a, builtins.float) else builtins.int(a)


def sym_float(a):
    return builtins.float(a)


def _number(x):
    import numpy as np
    kinds = (np.integer, np.floating, builtins.int, builtins.float)
    if not isinstance(x, kinds):
        raise AssertionError(f"expected {kinds}, got {type(x)}")
    return x


def sym_max(a, b):
    """The larger of two numbers; a float if either is one (PyTorch's rule for mixed symbolic numbers)."""
    r = b if _number(b) > _number(a) else a
    return builtins.float(r) if isinstance(a, builtins.float) or isinstance(b, builtins.float) else r


def sym_min(a, b):
    r = b if _number(b) < _number(a) else a
    return builtins.float(r) if isinstance(a, builtins.float) or isinstance(b, builtins.float) else r


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    return t if b else f


def sym_sum(args):
    return builtins.sum(args)


def sym_sqrt(a):
    return math.sqrt(a)
