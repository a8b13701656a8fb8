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
from .._tensor import Tensor
from ..autograd.grad_mode import STATE
from .elementwise import (_COMPLEX, INTS_NO_BOOL, INTS_ONLY, _out, binary_op, not_implemented, out_exact,
                          parser_worded, require_number, require_tensor)
from .float8 import refuse as refuse_float8
from .inplace import make_inplace
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
_NO_COMPLEX = {"isposinf": (RuntimeError, "isposinf does not support complex inputs."),
               "isneginf": (RuntimeError, "isneginf does not support complex inputs."),
               "signbit": (NotImplementedError, "signbit is not implemented for complex tensors.")}


def _predicate(op):
    if op.name in _NO_OUT:
        def pred(input):
            require_tensor(input, op.name)
            return apply(op, (input,))
        return pred

    def pred_out(input, *, out=None):
        require_tensor(input, op.name)
        if op.name in _NO_COMPLEX and input.dtype.category == _dtype._COMPLEX:
            cls, msg = _NO_COMPLEX[op.name]
            raise cls(msg)
        if op.name in _NO_COMPLEX and isinstance(out, Tensor) and out.dtype is not _dtype.bool:
            raise RuntimeError(f"{op.name} does not support non-boolean outputs.")
        return _out(apply(op, (input,)), out, op.name)
    return pred_out


for _n, _f in _PREDICATES.items():
    _public(_n, _predicate(defop(_n, _f, differentiable=False)), inplace=_n == "logical_not")

_BITWISE_NOT = defop("bitwise_not", jnp.invert, differentiable=False)


def bitwise_not(input, *, out=None):
    require_tensor(input, "bitwise_not")
    if input.dtype.category in INTS_ONLY:
        raise not_implemented("bitwise_not_cpu", input.dtype)
    return out_exact(apply(_BITWISE_NOT, (input,)), out, "bitwise_not")


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


def _zero_grads(g, *vals, out, dt):
    return tuple(jnp.zeros_like(v) for v in vals[:-1]) + (None,)


def _inplace_comparison(name):
    """``x.lt_(y)`` and its kin: PyTorch differentiates them, with zero gradients (``self: zeros_like(self)``), so
    a tensor that requires grad keeps requiring it (grad_fn ``LtBackward0`` for a number, ``LtBackward1`` for a
    Tensor) and ``other`` requiring grad makes the result require it. The value is written in ``x``'s dtype."""
    compare = globals()[name]
    title = name.capitalize()
    by_number = defop(name + "_.Scalar", lambda x, r, *, dt: r.astype(dt), vjp=_zero_grads, linear=True,
                      grad_name=title + "Backward0")
    by_tensor = defop(name + "_.Tensor", lambda x, y, r, *, dt: r.astype(dt), vjp=_zero_grads, linear=True,
                      grad_name=title + "Backward1", promote="same", promote_args=(0, 1))  # both listed

    def f(input, other):
        r = compare(input, other)
        if not (STATE.grad_enabled and (input._rg or isinstance(other, Tensor) and other._rg)):
            return r
        if isinstance(other, Tensor):
            return apply(by_tensor, (input, other, r), dt=input._v.dtype)
        return apply(by_number, (input, r), dt=input._v.dtype)
    return f


for _n in ("eq", "ne", "lt", "le", "gt", "ge"):
    _f = _inplace_comparison(_n)
    METHODS[_n + "_"] = make_inplace(_f, _n + "_")
for _a, _n in {"greater": "gt", "greater_equal": "ge", "less": "lt", "less_equal": "le", "not_equal": "ne"}.items():
    METHODS[_a + "_"] = make_inplace(_inplace_comparison(_n), _a + "_")


def equal(input, other) -> bool:
    """True if both have the same shape and all elements are equal."""
    require_tensor(input, "equal")
    require_tensor(other, "equal", 2, "other")
    if input.dtype is not other.dtype:
        _dtype.promote_types(input.dtype, other.dtype)  # (float8 with another dtype: PyTorch's promotion error)
    refuse_float8(input, "equal_notnan_cpu")
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(jnp.all(input._concrete() == other._concrete()))


def _isclose_fwd(a, b, rtol, atol, *, equal_nan, exact, fdt):
    close = a == b
    if equal_nan and jnp.issubdtype(a.dtype, jnp.inexact):
        close = close | (jnp.isnan(a) & jnp.isnan(b))
    if exact:
        return close
    if not jnp.issubdtype(a.dtype, jnp.inexact):  # PyTorch measures integer errors in the default float dtype
        a, b = a.astype(fdt), b.astype(fdt)  # (no wrap-around: 2**62 and -2**62 are not close)
    allowed = atol + jnp.abs(rtol * b)
    actual = jnp.abs(a - b)
    return close | (jnp.isfinite(actual) & (actual <= allowed))


_ISCLOSE = defop("isclose", _isclose_fwd, differentiable=False)


@parser_worded
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|input - other| <= atol + rtol * |other|`` elementwise (equal infinities are close; NaNs when equal_nan)."""
    require_tensor(input, "isclose")
    require_tensor(other, "isclose", 2, "other")
    require_number(rtol, "isclose", 3, "rtol")
    require_number(atol, "isclose", 4, "atol")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_dtype.scalar_type_name(input.dtype)} did not match "
                           f"{_dtype.scalar_type_name(other.dtype)}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    return apply(_ISCLOSE, (input, other, float(rtol), float(atol)), equal_nan=bool(equal_nan),
                 exact=rtol == 0 and atol == 0, fdt=_dtype.DEFAULTS.float.np)


@parser_worded
def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False) -> bool:
    """True when every element of ``input`` is close to ``other`` (see :func:`isclose`)."""
    r = isclose(input, other, rtol, atol, equal_nan)
    return bool(jnp.all(r._concrete()))


_public("equal", equal)
_public("isclose", isclose)
_public("allclose", allclose)
