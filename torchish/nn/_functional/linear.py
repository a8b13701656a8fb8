"""torchish.nn.functional: ``linear`` and ``bilinear``.

``linear`` is ONE registry op (``x @ W.T + b``), so a Linear layer runs as one kernel forward and one backward.
"""
from __future__ import annotations

import jax.numpy as jnp

from ... import _dtype, _precision
from ..._tensor import Tensor
from ...ops import registry as _registry
from ...ops.casting import rounded
from ...ops.elementwise import not_implemented, out_structured
from ...ops.linalg import _c as _c_type_name
from ...ops.opnode import SHOWN_KIND
from ...ops.registry import apply, defop, overload
from ._args import need_tensor

__all__ = ["linear", "bilinear"]


def _linear_fwd(x, w, b, *, split=False):
    if x.dtype in _precision.LOW:  # float16/bfloat16 (autocast): float32 sums, bias included, rounded once
        y = jnp.matmul(x, w.T, precision=_precision.matmul(), preferred_element_type=jnp.float32)
        if split:  # PyTorch's matmul, then ``add_(bias)``: the product rounded before the bias is added
            y = rounded(y, x.dtype)
        return (y if b is None else y + b.astype(jnp.float32)).astype(x.dtype)
    y = _precision.mm(x, w.T)
    return y if b is None else y + b


_LINEAR = defop("linear", _linear_fwd, grad_name="AddmmBackward0")
_LINEAR_NOBIAS = defop("linear_nobias", _linear_fwd, grad_name="MmBackward0")
# the node PyTorch's at::linear shows on top, by the path it takes (torchish.ops.shown_graph): addmm/mm for a 2-d
# input; a view of a contiguous 1-d or N-d input with a bias; else matmul (whose result is squeezed or unsafe-viewed)
# and an in-place add of the bias
_BY_KIND = {"addmm": _LINEAR, "mm": _LINEAR_NOBIAS, "view": overload(_LINEAR, "ViewBackward0"),
            "add1": overload(_LINEAR, "AddBackward0"), "add_nc": overload(_LINEAR, "AddBackward0"),
            "squeeze": overload(_LINEAR_NOBIAS, "SqueezeBackward4"),
            "unsafe_view": overload(_LINEAR_NOBIAS, "UnsafeViewBackward0"),
            "unsafe_view_nc": overload(_LINEAR_NOBIAS, "UnsafeViewBackward0")}
SHOWN_KIND.update((op, kind) for kind, op in _BY_KIND.items())


def _kind(input, bias):
    """The path at::linear takes for ``input`` (see :data:`_BY_KIND`)."""
    nd = input.ndim
    if nd == 2:
        return "mm" if bias is None else "addmm"
    if nd == 1 and bias is None:
        return "squeeze"
    contiguous = input.is_contiguous()
    if bias is None:
        return "unsafe_view" if contiguous else "unsafe_view_nc"
    return "view" if contiguous else "add1" if nd == 1 else "add_nc"


def _type_name(t):
    """The C++ type name PyTorch's matmul errors print (``float``, ``double``, ``c10::Half``, ``signed char``...)."""
    return _c_type_name(t.dtype)


_CHECKED: set = set()  # (input, weight, bias) shapes and dtypes that passed _check_linear


def _check_linear(input, weight, bias):
    key = (input._v.shape, input._v.dtype, weight._v.shape, weight._v.dtype,
           None if bias is None else (bias._v.shape, bias._v.dtype))
    if key in _CHECKED:
        return
    _check_linear_once(input, weight, bias)
    _CHECKED.add(key)


def _check_linear_once(input, weight, bias):
    if input.ndim == 0 or weight.ndim == 0:  # (at::linear's own checks come before addmm's)
        raise RuntimeError(f"both arguments to linear need to be at least 1D, but they are {input.ndim}D and "
                           f"{weight.ndim}D")
    if weight.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {weight.ndim}D")
    if bias is not None:  # PyTorch runs addmm(bias, input, weight.t()): its dtype checks, bias first
        name = _dtype.scalar_type_name
        if bias.dtype != weight.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got {name(bias.dtype)} and "
                               f"{name(weight.dtype)}")
        if input.dtype != weight.dtype:
            raise RuntimeError(f"mat1 and mat2 must have the same dtype, but got {name(input.dtype)} and "
                               f"{name(weight.dtype)}")
        if weight.ndim == 1:  # (without a bias, a vector weight is matmul's matrix-vector product)
            raise RuntimeError("mat2 must be a matrix, got 1-D tensor")
    k = input.shape[-1] if input.ndim else 1
    kw = weight.shape[-1] if weight.ndim else 1
    if input.ndim == 0 or weight.ndim == 0 or weight.ndim > 2 or k != kw:
        rows = input.numel() // max(k, 1) if input.ndim else 1
        wt = tuple(reversed(weight.shape)) if weight.ndim == 2 else (kw, 1)
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{k} and {wt[0]}x{wt[1]})")
    if input.dtype != weight.dtype:  # (without a bias: matmul's mm, which checks the shapes first)
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: {_type_name(input)} != "
                           f"{_type_name(weight)}")
    if bias is not None:
        out_shape = tuple(input.shape[:-1]) + tuple(weight.shape[:-1])
        target = out_shape if out_shape else ()
        try:
            ok = tuple(jnp.broadcast_shapes(tuple(bias.shape), target)) == target
        except ValueError:
            ok = False
        if not ok:
            nb = bias.shape[-1] if bias.ndim else 1
            no = target[-1] if target else 1
            raise RuntimeError(f"The expanded size of the tensor ({no}) must match the existing size ({nb}) at "
                               f"non-singleton dimension {max(len(target) - 1, 0)}.  Target sizes: {list(target)}.  "
                               f"Tensor sizes: {list(bias.shape)}")
    if input.dtype is _dtype.bool and input.numel():  # PyTorch's matmul kernels have no Bool version
        raise not_implemented("dot" if weight.ndim == 1 else "addmm_impl_cpu_", input.dtype)


def linear(input, weight, bias=None, *, out=None):
    """``input @ weight.T + bias`` as one kernel.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)``.
        bias: optional ``(out_features,)``.

    Example::

        >>> y = F.linear(torchish.ones(2, 3), torchish.ones(4, 3))   # shape (2, 4)
    """
    need_tensor("linear", input)
    need_tensor("linear", weight, "weight", 2)
    need_tensor("linear", bias, "bias", 3, optional=True)
    if _registry.autocast_hook is not None:  # autocast casts before the dtype checks
        input, weight, bias = _registry.autocast_hook("linear", (input, weight, bias))
    _check_linear(input, weight, bias)
    # PyTorch adds the bias in one addmm for a 2-D or contiguous input, else after the product (at::linear): two
    # roundings of a float16/bfloat16 result (the transposed activations of batch_first MultiheadAttention)
    kind = _kind(input, bias)
    split = kind in ("add1", "add_nc") and input.dtype in (_dtype.float16, _dtype.bfloat16)
    y = apply(_BY_KIND[kind], (input, weight, bias), **({"split": True} if split else {}))
    return out_structured(y, out, "linear")


def _bilinear_fwd(x1, x2, w, b):
    y = jnp.einsum("...i,oij,...j->...o", x1, w, x2, precision=_precision.matmul())
    return y if b is None else y + b


_BILINEAR = defop("bilinear", _bilinear_fwd, grad_name="AddBackward0")
_BILINEAR_NOBIAS = defop("bilinear_nobias", _bilinear_fwd, grad_name="ViewBackward0")


def bilinear(input1, input2, weight, bias=None):
    """``y[..., o] = sum_ij input1[..., i] * weight[o, i, j] * input2[..., j] + bias[o]``."""
    need_tensor("bilinear", input1, "input1", 1)
    need_tensor("bilinear", input2, "input2", 2)
    need_tensor("bilinear", weight, "weight", 3)
    need_tensor("bilinear", bias, "bias", 4, optional=True)
    named = [("input1", input1), ("input2", input2), ("weight", weight)] + ([("bias", bias)] if bias is not None else [])
    if len({t.dtype for _, t in named}) > 1:  # PyTorch checks the dtypes before any shape
        got = ", ".join(f"{n}: {_type_name(t)}" for n, t in named)
        raise RuntimeError(f"All tensors must have the same dtype, got {got}")
    if not isinstance(weight, Tensor) or weight.ndim != 3:
        raise RuntimeError(f"bilinear(): weight must be three-dimensional, but got {weight.ndim}")
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} and {input2.ndim}")
    if tuple(input1.shape[:-1]) != tuple(input2.shape[:-1]):
        for i in range(input1.ndim - 1):
            if input1.shape[i] != input2.shape[i]:
                raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: got "
                                   f"{input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got {input1.shape[-1]} but "
                           f"expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got {input2.shape[-1]} but "
                           f"expected {weight.shape[2]}")
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != weight.shape[0]):
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got {bias.shape[-1] if bias.ndim else 1}"
                           f" but expected {weight.shape[0]}")
    if input1.dtype is _dtype.bool and input1.numel():
        raise not_implemented("bmm", input1.dtype)
    return apply(_BILINEAR if bias is not None else _BILINEAR_NOBIAS, (input1, input2, weight, bias))
