"""The ``Tensor op Scalar`` steps of PyTorch's C++ composites (``loss + eps``, ``cos - margin``, ``x * 0.5``).

ATen's composite functions (``margin_ranking_loss``, ``poisson_nll_loss``, ``rms_norm``, ...) call the Scalar
overloads ``add.Scalar``/``sub.Scalar``/``mul.Scalar``/``div.Scalar``: their autograd nodes are ``AddBackward1``,
``SubBackward1``, ``MulBackward1``, ``DivBackward1``, and list the tensor operand only (``x + 1`` from Python is
``add.Tensor`` with a wrapped number: ``AddBackward0`` with a ``None`` edge). These ops are the registry's add, sub,
mul and div under those node names (``registry.overload``), with the number omitted from ``next_functions``
(``opnode.SCALAR_OVERLOADS``).
"""
from __future__ import annotations

from .opnode import SCALAR_OVERLOADS
from .registry import OPS, apply, overload

# (the registry's ops under another node name: the same name, so the same dispatch, rounding and layout rules)
_ADD, _SUB = overload(OPS["add"], "AddBackward1"), overload(OPS["sub"], "SubBackward1")
_MUL, _DIV = overload(OPS["mul"], "MulBackward1"), overload(OPS["div"], "DivBackward1")
SCALAR_OVERLOADS.update((_ADD, _SUB, _MUL, _DIV))


def add_scalar(t, s):
    """``t + s`` as ATen's ``add.Scalar`` (``AddBackward1``)."""
    return apply(_ADD, (t, s, None))


def sub_scalar(t, s):
    """``t - s`` as ATen's ``sub.Scalar`` (``SubBackward1``)."""
    return apply(_SUB, (t, s, None))


def mul_scalar(t, s):
    """``t * s`` as ATen's ``mul.Scalar`` (``MulBackward1``)."""
    return apply(_MUL, (t, s))


def div_scalar(t, s):
    """``t / s`` as ATen's ``div.Scalar`` (``DivBackward1``)."""
    return apply(_DIV, (t, s))
