"""``torch.autograd.Variable``: the pre-0.4 wrapper, kept as PyTorch keeps it.

Every tensor is a Variable (``isinstance(t, Variable)`` holds for any Tensor), and ``Variable(t, requires_grad=True)``
returns a new tensor over ``t``'s data, detached from ``t``'s graph, with the requested ``requires_grad``.

Example::

    >>> v = Variable(torchish.ones(2), requires_grad=True)
    >>> (v * 3).sum().backward(); v.grad
    tensor([3., 3.])
"""
from __future__ import annotations

import warnings

from .._tensor import Tensor


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Not a real class: calling it returns a plain Tensor (see the module docstring)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
            if requires_grad:
                raise ValueError("Variable can't be volatile and require_grad at the same time!")
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            out.requires_grad_(True)
        return out
