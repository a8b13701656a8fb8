"""Extremes: max/min (over everything, along a dim with indices, or elementwise against a tensor), amax/amin,
aminmax and argmax/argmin, with PyTorch's NaN propagation, errors for empty dims, and gradients split evenly among
tied extremes.

Example::

    >>> import torchish as torch
    >>> x = torch.tensor([[1., 5., 5.], [2., 0., 3.]])
    >>> x.max(dim=1)
    torch.return_types.max(
    values=tensor([5., 3.]),
    indices=tensor([1, 2]))
"""
from __future__ import annotations

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from .elementwise import _out, need_bool, not_implemented, out_structured, require_tensor, structured_out
from .reduce import RETURN_TYPES, dims, numpy_kwargs, one_dim, reduction_out, values_indices
from .registry import apply, defop
from .registry import Family as _Family

_public = _Family(globals()).public


def _check_nonempty(input, name, dim=None, label=None):
    """``label``: the op as its message names it (``name + "()"`` unless given: aminmax's says ``aminmax:``)."""
    label = label or f"{name}():"
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(f"{label} Expected reduction dim to be specified for input.numel() == 0. Specify "
                               "the reduction dim with the 'dim' argument.")
    elif input.ndim and input.shape[dim] == 0:
        raise IndexError(f"{label} Expected reduction dim {dim} to have non-zero size.")


# ----------------------------------------------------------------------------------------------------------------
# max / min / argmax / amax


def _max_dim_fwd(x, *, axis, keepdims, largest):
    if axis is None:  # 0-dim input
        return x, jnp.zeros((), jnp.int64)
    f = jnp.argmax if largest else jnp.argmin
    idx = f(x, axis=axis, keepdims=True)
    if jnp.issubdtype(x.dtype, jnp.inexact):  # NaN propagates and wins, as in PyTorch
        nan = jnp.isnan(x)
        idx = jnp.where(jnp.any(nan, axis=axis, keepdims=True), jnp.argmax(nan, axis=axis, keepdims=True), idx)
    val = jnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        val, idx = jnp.squeeze(val, axis), jnp.squeeze(idx, axis)
    return val, idx.astype(jnp.int64)


_MAX_DIM = defop("max_dim", _max_dim_fwd, grad_name="MaxBackward0")
_MIN_DIM = defop("min_dim", _max_dim_fwd, grad_name="MinBackward0")


def _amax_fwd(x, *, axis, keepdims, largest):
    f = jnp.max if largest else jnp.min
    return f(x, axis=axis, keepdims=keepdims)


def _amax_vjp(g, x, out, axis, keepdims, largest):
    """amax/amin: the gradient is split evenly over the tied maxima (NaN results give NaN gradients)."""
    ax = axis if axis is not None else tuple(range(x.ndim))
    if not keepdims:
        g, out = jnp.expand_dims(g, ax), jnp.expand_dims(out, ax)
    mask = (x == out).astype(g.dtype)
    return g * mask / jnp.sum(mask, axis=ax, keepdims=True)


def _max_all_vjp(g, x, out, axis, keepdims, largest):
    """max()/min() over everything (PyTorch's evenly_distribute_backward): a NaN result goes to the NaNs."""
    mask = jnp.where(jnp.isnan(out), jnp.isnan(x), x == out).astype(g.dtype)
    return g * mask / jnp.sum(mask)


_AMAX = defop("amax", _amax_fwd, vjp=_amax_vjp, grad_name="AmaxBackward0")
_AMIN = defop("amin", _amax_fwd, vjp=_amax_vjp, grad_name="AminBackward0")
_MAX_ALL = defop("max_all", _amax_fwd, vjp=_max_all_vjp, grad_name="MaxBackward1")
_MIN_ALL = defop("min_all", _amax_fwd, vjp=_max_all_vjp, grad_name="MinBackward1")


_NO_DIM = object()  # max()/min() without dim: a full reduction; an explicit dim=None is a TypeError


def _maxmin(largest):
    name = "max" if largest else "min"

    @numpy_kwargs
    def f(input, dim=_NO_DIM, keepdim=_NO_DIM, *, other=None, out=None):
        require_tensor(input, name)
        if other is not None:  # the (Tensor other) overload by keyword: max(x, other=y)
            if dim is not _NO_DIM or keepdim is not _NO_DIM or not isinstance(other, Tensor):
                raise TypeError(f"{name}() received an invalid combination of arguments - got other= with dim or "
                                "keepdim, or a non-Tensor other, but expected one of: (), (Tensor other), (int dim, "
                                "bool keepdim = False)")
            dim = other
        if isinstance(dim, Tensor) and keepdim is not _NO_DIM:  # (the overload with other takes nothing more)
            if dim.ndim or dim.dtype.category != _dtype._INT:  # (an integer 0-d one is an int dim)
                raise TypeError(f"{name}(): argument 'dim' must be int, not Tensor")  # (numpy_kwargs words it)
            dim = int(dim)
        if isinstance(dim, Tensor):
            from .arith import maximum, minimum
            return (maximum if largest else minimum)(input, dim, out=out)
        if dim is _NO_DIM and keepdim is _NO_DIM:
            _check_nonempty(input, name)  # before the dtype check, as PyTorch's
            if input.is_complex():
                raise not_implemented(f"{name}_all", input.dtype)
            return _out(apply(_MAX_ALL if largest else _MIN_ALL, (input,), axis=None, keepdims=False,
                              largest=largest), out, name)
        keepdim = False if keepdim is _NO_DIM else keepdim
        need_bool(name, keepdim)
        if dim is None or dim is _NO_DIM or isinstance(dim, (tuple, list)):
            got = "keepdim=bool" if dim is _NO_DIM else f"dim={type(dim).__name__}"
            raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one "
                            "of: (), (Tensor other), (int dim, bool keepdim = False)")
        d = wrap_dim(dim, input.ndim)
        _check_nonempty(input, name, d)
        if input.is_complex():
            raise RuntimeError(f"{name}(): does not support complex input")
        v, i = apply(_MAX_DIM if largest else _MIN_DIM, (input,), axis=d if input.ndim else None,
                     keepdims=bool(keepdim), largest=largest)
        return values_indices(name, v, i, out)
    f.__name__ = f.__qualname__ = name
    return f


max = _maxmin(True)
min = _maxmin(False)


def _amaxmin(largest):
    name = "amax" if largest else "amin"

    @numpy_kwargs
    def f(input, dim=(), keepdim=False, *, out=None):
        require_tensor(input, name)
        need_bool(name, keepdim)
        if out is not None and out.dtype is not input.dtype:
            raise RuntimeError(f"Expected the dtype for input and out to match, but got "
                               f"{_dtype.scalar_type_name(input.dtype)} for input's dtype and "
                               f"{_dtype.scalar_type_name(out.dtype)} for out's dtype.")
        ax = dims(dim, input.ndim)
        if ax is None:
            _check_nonempty(input, name)
        else:
            for d in ax:
                _check_nonempty(input, name, d)
        if input.is_complex() and input.numel():  # an empty result never reaches the (real-only) kernel
            raise not_implemented(f"{name[1:]}_values_cpu", input.dtype)
        return reduction_out(apply(_AMAX if largest else _AMIN, (input,), axis=ax, keepdims=bool(keepdim),
                                   largest=largest), out, name)
    f.__name__ = f.__qualname__ = name
    return f


amax = _amaxmin(True)
amin = _amaxmin(False)


def _aminmax_fwd(x, *, axis, keepdims):
    return (_amax_fwd(x, axis=axis, keepdims=keepdims, largest=False),
            _amax_fwd(x, axis=axis, keepdims=keepdims, largest=True))


def _aminmax_vjp(g, x, out, axis, keepdims):
    """PyTorch's aminmax_backward: amin's gradient plus amax's (each split evenly over its ties)."""
    return (_amax_vjp(g[0], x, out[0], axis, keepdims, False) + _amax_vjp(g[1], x, out[1], axis, keepdims, True),)


# one node for both outputs, as PyTorch's
_AMINMAX = defop("aminmax", _aminmax_fwd, vjp=_aminmax_vjp, grad_name="AminmaxBackward0")


@structured_out
def aminmax(input, *, dim=None, keepdim=False):
    """``(amin, amax)`` as a ``torch.return_types.aminmax``."""
    require_tensor(input, "aminmax")
    need_bool("aminmax", keepdim)
    if dim is None and input.numel() == 0:
        raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                           "identity.")
    if dim is not None:
        _check_nonempty(input, "aminmax", wrap_dim(dim, input.ndim), label="aminmax:")
    if input.is_complex():
        raise not_implemented("aminmax_cpu", input.dtype)
    ax = None if dim is None else dims(dim, input.ndim)
    return RETURN_TYPES["aminmax"](*apply(_AMINMAX, (input,), axis=ax, keepdims=bool(keepdim)))


def _arg_fwd(x, *, axis, keepdims, largest):
    f = jnp.argmax if largest else jnp.argmin
    if jnp.issubdtype(x.dtype, jnp.inexact):  # the first NaN wins
        nan = jnp.isnan(x if axis is not None else x.reshape(-1))
        r = f(x if axis is not None else x.reshape(-1), axis=axis, keepdims=keepdims and axis is not None)
        ax = axis if axis is not None else 0
        first = jnp.argmax(nan, axis=ax, keepdims=keepdims and axis is not None)
        r = jnp.where(jnp.any(nan, axis=ax, keepdims=keepdims and axis is not None), first, r)
    else:
        r = f(x if axis is not None else x.reshape(-1), axis=axis, keepdims=keepdims and axis is not None)
    if axis is None and keepdims:
        r = r.reshape((1,) * x.ndim)
    return r.astype(jnp.int64)


_ARGMAX = defop("argmax", _arg_fwd, differentiable=False)


def _argmaxmin(largest):
    name = "argmax" if largest else "argmin"

    @numpy_kwargs
    def f(input, dim=None, keepdim=False, *, out=None):
        require_tensor(input, name)
        need_bool(name, keepdim)
        if input.dtype is _dtype.bool or input.is_complex():
            raise RuntimeError(f"{name}(): does not support {'bool' if input.dtype is _dtype.bool else 'complex'} "
                               "input")
        if dim is None:
            if input.numel() == 0:
                raise IndexError(f"{name}(): Expected reduction dim to be specified for input.numel() == 0.")
            ax = None
        else:
            ax = one_dim(dim, input.ndim)
            _check_nonempty(input, name, ax)
        return out_structured(apply(_ARGMAX, (input,), axis=ax, keepdims=bool(keepdim), largest=largest), out, name)
    f.__name__ = f.__qualname__ = name
    return f


argmax = _argmaxmin(True)
argmin = _argmaxmin(False)

for _n in ("max", "min", "amax", "amin", "aminmax", "argmax", "argmin"):
    _public(_n, globals()[_n])
