"""The ``Tensor op Scalar`` steps of PyTorch's C++ composites (``loss + eps``, ``cos - margin``, ``x * 0.5``).

ATen's composite functions (``margin_ranking_loss``, ``poisson_nll_loss``, ``rms_norm``, ...) call the Scalar
overloads ``add.Scalar``/``sub.Scalar``/``mul.Scalar``/``div.Scalar``: their autograd nodes are ``AddBackward1``,
``SubBackward1``, ``MulBackward1``, ``DivBackward1``, and list the tensor operand only (``x + 1`` from Python is
``add.Tensor`` with a wrapped number: ``AddBackward0`` with a ``None`` edge). These ops are the registry's add, sub,
mul and div under those names, with the number omitted from ``next_functions``.
"""
from __future__ import annotations

from ...ops.registry import OPS, OpDef, apply


def _scalar_op(base, grad_name):
    op = OPS[base]
    return OpDef(base + "_scalar_overload", op.fwd, grad_name=grad_name, vjp=op.vjp, promote=op.promote,
                 promote_args=op.promote_args, linear=op.linear, save_out=op.save_out, saved=op.saved,
                 vjp_uncast=op.vjp_uncast, eager=op.eager)


_ADD, _SUB = _scalar_op("add", "AddBackward1"), _scalar_op("sub", "SubBackward1")
_MUL, _DIV = _scalar_op("mul", "MulBackward1"), _scalar_op("div", "DivBackward1")


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
