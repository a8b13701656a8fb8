"""Comparisons, predicates, logical and bitwise ops (none differentiable): eq/ne/lt/le/gt/ge and their aliases,
isnan/isinf/isfinite/signbit/..., logical_and/or/xor/not, bitwise_and/or/xor/not and shifts, and the
tolerance checks equal/isclose/allclose.

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([1.0, float("nan"), 3.0])
    >>> (x > 2, x.isnan(), torch.isclose(x, x, equal_nan=True))
    (tensor([False, False,  True]), tensor([False,  True, False]), tensor([True, True, True]))
"""
from __future__ import annotations

from functools import partial

import jax.numpy as jnp

from .. import _dtype
from .elementwise import _COMPLEX, INTS_NO_BOOL, INTS_ONLY, _out, binary_op, not_implemented, require_tensor
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public
_binary = partial(binary_op, _public)


# predicates

_PREDICATES = {
    "isnan": jnp.isnan, "isinf": jnp.isinf, "isfinite": jnp.isfinite, "isposinf": jnp.isposinf,
    "isneginf": jnp.isneginf, "isreal": jnp.isreal, "signbit": jnp.signbit, "logical_not": jnp.logical_not,
}
_NO_OUT = ("isnan", "isinf", "isfinite", "isreal")


def _predicate(op):
    if op.name in _NO_OUT:
        return lambda input: apply(op, (input,))
    return lambda input, *, out=None: _out(apply(op, (input,)), out, op.name)


for _n, _f in _PREDICATES.items():
    _public(_n, _predicate(defop(_n, _f, differentiable=False)), inplace=_n == "logical_not")

_BITWISE_NOT = defop("bitwise_not", jnp.invert, differentiable=False)


def bitwise_not(input, *, out=None):
    require_tensor(input, "bitwise_not")
    if input.dtype.category in INTS_ONLY:
        raise not_implemented("bitwise_not_cpu", input.dtype)
    return _out(apply(_BITWISE_NOT, (input,)), out, "bitwise_not")


_public("bitwise_not", bitwise_not, inplace=True)


# comparisons, logical and bitwise binary ops

for _n, _f in {"eq": jnp.equal, "ne": jnp.not_equal}.items():
    _binary(_n, _f, differentiable=False)
for _n, _f in {"lt": jnp.less, "le": jnp.less_equal, "gt": jnp.greater, "ge": jnp.greater_equal}.items():
    _binary(_n, _f, differentiable=False, reject=frozenset({_COMPLEX}))  # complex numbers have no order
for _n, _f in {"logical_and": jnp.logical_and, "logical_or": jnp.logical_or,
               "logical_xor": jnp.logical_xor}.items():
    _binary(_n, _f, promote=None, differentiable=False, numbers="none")
for _n, _f in {"bitwise_and": jnp.bitwise_and, "bitwise_or": jnp.bitwise_or, "bitwise_xor": jnp.bitwise_xor}.items():
    _binary(_n, _f, reject=INTS_ONLY, differentiable=False, numbers="both")
_binary("bitwise_left_shift", jnp.left_shift, reject=INTS_NO_BOOL, kernel="lshift_cpu", differentiable=False,
        numbers="both")
_binary("bitwise_right_shift", jnp.right_shift, reject=INTS_NO_BOOL, kernel="rshift_cpu", differentiable=False,
        numbers="both")
for _a, _n in {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne"}.items():
    _public(_a, globals()[_n], inplace=True)


def equal(input, other) -> bool:
    """True if both have the same shape and all elements are equal."""
    require_tensor(input, "equal")
    require_tensor(other, "equal", 2, "other")
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(jnp.all(input._concrete() == other._concrete()))


def _isclose_fwd(a, b, rtol, atol, *, equal_nan, exact, fdt):
    close = a == b
    if equal_nan and jnp.issubdtype(a.dtype, jnp.inexact):
        close = close | (jnp.isnan(a) & jnp.isnan(b))
    if exact:
        return close
    if a.dtype == jnp.bool_:
        a, b = a.astype(fdt), b.astype(fdt)
    allowed = atol + jnp.abs(rtol * b.astype(fdt) if not jnp.issubdtype(b.dtype, jnp.inexact) else rtol * b)
    actual = jnp.abs(a - b)
    return close | (jnp.isfinite(actual) & (actual <= allowed))


_ISCLOSE = defop("isclose", _isclose_fwd, differentiable=False)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities are close; NaNs when equal_nan)."""
    require_tensor(input, "isclose")
    require_tensor(other, "isclose", 2, "other")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_dtype.scalar_type_name(input.dtype)} did not match "
                           f"{_dtype.scalar_type_name(other.dtype)}")
    if input.is_complex() and equal_nan:
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return apply(_ISCLOSE, (input, other, float(rtol), float(atol)), equal_nan=bool(equal_nan),
                 exact=rtol == 0 and atol == 0, fdt=_dtype.DEFAULTS.float.np)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True when every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    r = isclose(input, other, rtol, atol, equal_nan)
    return bool(jnp.all(r._concrete()))


_public("equal", equal)
_public("isclose", isclose)
_public("allclose", allclose)
