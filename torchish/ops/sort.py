"""Sorting and order statistics: sort/argsort/msort, topk, kthvalue, median/nanmedian, mode, quantile/nanquantile,
unique/unique_consecutive, bincount, histc, searchsorted/bucketize and isin.

Sorting is stable and puts NaN last (first when descending), as PyTorch does. Values selected by index (sort, topk,
kthvalue, median with a dim, mode) send their gradient back to the selected positions; median over everything
splits it between the tied medians. Ops whose output *shape* depends on the values (unique, bincount) read the
values on the host, so they cannot run on traced tensors inside ``torchish.compile``.

Example::

    >>> import torchish as torch
    >>> torch.tensor([3., 1., 2.]).sort()
    torch.return_types.sort(
    values=tensor([1., 2., 3.]),
    indices=tensor([1, 2, 0]))
"""
from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap, wrap_dim
from ..autograd.grad_mode import STATE
from . import tracing
from .casting import cast
from .elementwise import (_out, common_dtype, not_implemented, out_exact, require_int, require_tensor,
                          scalar_or_tensor, structured_out)
from .reduce import _return_type, numpy_kwargs, one_dim, scatter_add_along, values_indices
from . import registry as _registry
from .registry import NotDifferentiable, apply, defop, overload
from .registry import Family as _Family

_public = _Family(globals()).public
_INT, _FLOAT, _COMPLEX = _dtype._INT, _dtype._FLOAT, _dtype._COMPLEX


def _no_complex(input, name):
    if input.is_complex():
        raise RuntimeError(f" {name.capitalize()} does not support complex dtypes on CPU")


def _check_dim_nonempty(input, name, d):
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")


def _selected_vjp(g, x, out, axis, keepdims=True, **static):
    """Gradient of values picked by index along ``axis``: scattered back to the picked positions."""
    gv, idx = g[0], out[1]
    if axis is None:
        return gv.reshape(x.shape)
    if not keepdims:
        gv, idx = jnp.expand_dims(gv, axis), jnp.expand_dims(idx, axis)
    return scatter_add_along(x.shape, x.dtype, idx, gv, axis)


# ----------------------------------------------------------------------------------------------------------------
# sort / argsort / msort / topk


def _sort_fwd(x, *, axis, descending, k=None):
    if axis is None:
        return x, jnp.zeros((), jnp.int64)
    idx = jnp.argsort(x, axis=axis, stable=True, descending=descending)
    if k is not None:
        idx = jax.lax.slice_in_dim(idx, 0, k, axis=axis)
    return jnp.take_along_axis(x, idx, axis=axis), idx.astype(jnp.int64)


_SORT = defop("sort", _sort_fwd, vjp=_selected_vjp, grad_name="SortBackward0")
_TOPK = defop("topk", _sort_fwd, vjp=_selected_vjp, grad_name="TopkBackward0")


def _sort_args(name, args, dim, descending, stable):
    """PyTorch's two overloads: ``(input, dim=-1, descending=False)`` positionally, or keyword-only ``stable``
    with keyword ``dim``/``descending``; mixing them is a TypeError."""
    if len(args) > 2 or args and stable is not None:
        got = ", ".join(["Tensor"] + [type(a).__name__ for a in args] + (["stable=bool"] if stable is not None else []))
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of: "
                        "(Tensor input, *, bool stable, int dim = -1, bool descending = False), (Tensor input, int "
                        "dim = -1, bool descending = False)")
    return (args + (dim, descending)[len(args):])[:2]


def sort(input, *args, dim=-1, descending=False, stable=None, out=None):
    """Stable sort along ``dim``; returns ``(values, indices)``."""
    require_tensor(input, "sort")
    dim, descending = _sort_args("sort", args, dim, descending, stable)
    _no_complex(input, "sort")
    v, i = apply(_SORT, (input,), axis=one_dim(dim, input.ndim), descending=bool(descending))
    return values_indices("sort", v, i, out)


def argsort(input, *args, dim=-1, descending=False, stable=None):
    dim, descending = _sort_args("argsort", args, dim, descending, stable)
    return sort(input, dim=dim, descending=descending)[1]


@structured_out
def msort(input):
    return sort(input, 0)[0]


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) elements along ``dim``, always in sorted order."""
    require_tensor(input, "topk")
    require_int(k, "topk", 2, "k")
    if input.dtype is _dtype.bool or input.is_complex():
        raise RuntimeError(f"{'' if input.dtype is _dtype.bool else ' '}topk does not support "
                           f"{'bool' if input.dtype is _dtype.bool else 'complex'} dtypes on CPU")
    d = one_dim(dim, input.ndim)
    size = input.shape[d] if input.ndim else 1
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    if d is None:
        v, i = apply(_TOPK, (input,), axis=None, descending=bool(largest))
    else:
        v, i = apply(_TOPK, (input,), axis=d, descending=bool(largest), k=int(k))
    return values_indices("topk", v, i, out)


for _n in ("sort", "argsort", "msort", "topk"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# kthvalue / median / nanmedian / mode


def _pick_fwd(x, *, axis, keepdims, mode, k=0):
    """The value at a sorted position along ``axis`` (moved last) and its original index.

    mode: "kth" (position k), "median" (lower median; the first NaN if any), "nanmedian" (lower median of the
    non-NaN values; the first NaN when all are NaN).
    """
    if axis is None:
        return x, jnp.zeros((), jnp.int64)
    idx = jnp.argsort(x, axis=axis, stable=True)
    s = jnp.take_along_axis(x, idx, axis=axis)
    n = x.shape[axis]
    if mode == "kth":
        pos = jnp.full((1,) * x.ndim, k)
    else:
        nans = jnp.sum(jnp.isnan(s), axis=axis, keepdims=True) if jnp.issubdtype(x.dtype, jnp.inexact) else 0
        if mode == "median":
            pos = jnp.where(nans > 0, n - nans, (n - 1) // 2) * jnp.ones((1,) * x.ndim, jnp.int32)
        else:
            pos = jnp.maximum((n - nans - 1) // 2, 0) * jnp.ones((1,) * x.ndim, jnp.int32)
    shape = list(x.shape)
    shape[axis] = 1
    pos = jnp.broadcast_to(pos, shape)
    v = jnp.take_along_axis(s, pos, axis=axis)
    i = jnp.take_along_axis(idx, pos, axis=axis)
    if not keepdims:
        v, i = jnp.squeeze(v, axis), jnp.squeeze(i, axis)
    return v, i.astype(jnp.int64)


_KTHVALUE = defop("kthvalue", _pick_fwd, vjp=_selected_vjp, grad_name="KthvalueBackward0")
_MEDIAN_DIM = defop("median_dim", _pick_fwd, vjp=_selected_vjp, grad_name="MedianBackward1")
_NANMEDIAN_DIM = defop("nanmedian_dim", _pick_fwd, vjp=_selected_vjp, grad_name="NanmedianBackward1")


def _median_all_fwd(x, *, nan_ignore):
    flat = x.reshape(-1)
    if flat.size == 0:  # NaN, cast as PyTorch casts it (an integer dtype's minimum)
        return cast(jnp.asarray(jnp.nan), x.dtype) if not jnp.issubdtype(x.dtype, jnp.inexact) \
            else jnp.asarray(jnp.nan, x.dtype)
    v, _ = _pick_fwd(flat, axis=0, keepdims=False, mode="nanmedian" if nan_ignore else "median")
    return v


def _median_all_vjp(g, x, out, nan_ignore):
    """PyTorch's evenly_distribute_backward: split between all elements equal to the median (NaNs if NaN)."""
    if jnp.issubdtype(x.dtype, jnp.inexact):
        mask = jnp.where(jnp.isnan(out), jnp.isnan(x), x == out)
    else:
        mask = x == out
    mask = mask.astype(g.dtype)
    return g * mask / jnp.sum(mask)


_MEDIAN = defop("median", _median_all_fwd, vjp=_median_all_vjp, grad_name="MedianBackward0")
_NANMEDIAN = defop("nanmedian", _median_all_fwd, vjp=_median_all_vjp, grad_name="NanmedianBackward0")


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The ``k``-th smallest element (1-based) along ``dim`` and its index."""
    require_tensor(input, "kthvalue")
    require_int(k, "kthvalue", 2, "k")
    d = one_dim(dim, input.ndim)
    _check_dim_nonempty(input, "kthvalue", d)
    if input.ndim and (input.dtype is _dtype.bool or input.is_complex()):  # a 0-d input is its own result
        raise not_implemented("kthvalue_cpu", input.dtype)
    size = input.shape[d] if input.ndim else 1
    if k < 1 or k > size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {wrap_dim(dim, input.ndim)}")
    v, i = apply(_KTHVALUE, (input,), axis=d, keepdims=bool(keepdim), mode="kth", k=int(k) - 1)
    return values_indices("kthvalue", v, i, out)


def _median(nan_ignore):
    name = "nanmedian" if nan_ignore else "median"

    @numpy_kwargs
    def f(input, dim=None, keepdim=False, *, out=None):
        require_tensor(input, name)
        unsupported = input.dtype is _dtype.bool or input.is_complex()
        if dim is None:  # an empty input never reaches the kernel: NaN cast to the dtype (True for bool)
            if unsupported and input.numel():
                raise not_implemented(f"{name}_cpu", input.dtype)
            return _out(apply(_NANMEDIAN if nan_ignore else _MEDIAN, (input,), nan_ignore=nan_ignore), out, name)
        d = one_dim(dim, input.ndim)
        _check_dim_nonempty(input, name, d)
        if unsupported:
            raise not_implemented(f"{name}_out", input.dtype)
        v, i = apply(_NANMEDIAN_DIM if nan_ignore else _MEDIAN_DIM, (input,), axis=d, keepdims=bool(keepdim),
                     mode=name)
        return values_indices(name, v, i, out)
    f.__name__ = f.__qualname__ = name
    return f


median = _median(False)
nanmedian = _median(True)


def _mode_fwd(x, *, axis, keepdims):
    """Most frequent value (the smallest among equally frequent ones) and the last index where it occurs."""
    if axis is None:
        return x, jnp.zeros((), jnp.int64)
    xm = jnp.moveaxis(x, axis, -1)
    idx = jnp.argsort(xm, axis=-1, stable=True)
    s = jnp.take_along_axis(xm, idx, axis=-1)
    pos = jnp.arange(s.shape[-1])
    differ = s[..., 1:] != s[..., :-1]
    if jnp.issubdtype(s.dtype, jnp.inexact):  # NaNs (sorted last) count as one value, as in PyTorch
        differ = differ & ~(jnp.isnan(s[..., 1:]) & jnp.isnan(s[..., :-1]))
    new_run = jnp.concatenate([jnp.ones(s.shape[:-1] + (1,), bool), differ], axis=-1)
    start = jax.lax.cummax(jnp.where(new_run, pos, 0), axis=s.ndim - 1)
    best = jnp.argmax(pos - start, axis=-1, keepdims=True)  # the end of the first longest run
    v = jnp.moveaxis(jnp.take_along_axis(s, best, axis=-1), -1, axis)
    i = jnp.moveaxis(jnp.take_along_axis(idx, best, axis=-1), -1, axis)
    if not keepdims:
        v, i = jnp.squeeze(v, axis), jnp.squeeze(i, axis)
    return v, i.astype(jnp.int64)


_MODE = defop("mode", _mode_fwd, vjp=_selected_vjp, grad_name="ModeBackward0")


def mode(input, dim=-1, keepdim=False, *, out=None):
    require_tensor(input, "mode")
    d = one_dim(dim, input.ndim)
    _check_dim_nonempty(input, "mode", d if d is not None else 0)
    if input.is_complex() and input.ndim > 0:  # (PyTorch returns a 0-d input without reaching its kernel)
        raise not_implemented("mode_cpu", input.dtype)
    v, i = apply(_MODE, (input,), axis=d, keepdims=bool(keepdim))
    return values_indices("mode", v, i, out)


for _n in ("kthvalue", "median", "nanmedian", "mode"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# quantile / nanquantile


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _lerp(a, b, w):
    d = b - a
    return jnp.where(jnp.abs(w) < 0.5, a + w * d, b - d * (1 - w))


def _quantile_fwd(x, q, *, axis, keepdims, interpolation, ignore_nan, scalar_q):
    """PyTorch's quantile_compute: ranks into the sorted values, then the chosen interpolation."""
    nd = x.ndim
    s = jnp.sort(x.reshape(-1) if axis is None else jnp.moveaxis(x, axis, -1), axis=-1)
    n = s.shape[-1]
    q1 = q.reshape(-1)
    nan = jnp.isnan(s)
    if ignore_nan:
        cnt = jnp.sum(~nan, axis=-1, keepdims=True).astype(q.dtype)
        ranks = q1 * (cnt - 1)
        ranks = jnp.where(ranks < 0, jnp.zeros((), q.dtype), ranks)
    else:
        ranks = jnp.where(jnp.any(nan, axis=-1, keepdims=True), jnp.asarray(n - 1, q.dtype), q1 * (n - 1))
    ranks = jnp.broadcast_to(ranks, s.shape[:-1] + q1.shape)
    if interpolation == "lower":
        ranks = jnp.floor(ranks)
    elif interpolation == "higher":
        ranks = jnp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = jnp.round(ranks)
    below = ranks.astype(jnp.int64)
    res = jnp.take_along_axis(s, below, axis=-1)
    if interpolation in ("linear", "midpoint"):
        w = jnp.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below.astype(ranks.dtype)
        above = jnp.take_along_axis(s, jnp.ceil(ranks).astype(jnp.int64), axis=-1)
        res = _lerp(res, above, w)
    res = jnp.moveaxis(res, -1, 0)  # (Q, reduced...)
    if keepdims:
        res = res.reshape((q1.shape[0],) + (1,) * nd) if axis is None else jnp.expand_dims(res, axis + 1)
    return res[0] if scalar_q else res


# PyTorch computes quantiles from sort, gather and lerp, then squeezes a kept dim away (``squeeze.dims``), even
# where it kept none: every form's grad_fn is that SqueezeBackward4
_QUANTILE = defop("quantile", _quantile_fwd, grad_name="SqueezeBackward4")
_NANQUANTILE = defop("nanquantile", _quantile_fwd, grad_name="SqueezeBackward4")


def _quantile(ignore_nan):
    name = "nanquantile" if ignore_nan else "quantile"

    def f(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
        require_tensor(input, name)
        if _registry.autocast_hook is not None and out is None:  # float32 under CPU autocast, before the dtype checks
            input, q = _registry.autocast_hook(name, (input, q))
        if input.dtype not in (_dtype.float32, _dtype.float64):
            raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
        scalar_q = not isinstance(q, Tensor)
        if scalar_q:
            if not 0 <= q <= 1:
                raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q}")
            from .creation import tensor
            q = tensor(float(q), dtype=input.dtype)
        else:
            if q.ndim > 1:
                raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
            if q.dtype is not input.dtype:
                raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
            if not tracing.active() and not isinstance(q._d, jax.core.Tracer):
                qa = np.asarray(q._d)
                if qa.size and (qa.min() < 0 or qa.max() > 1):
                    raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
            scalar_q = q.ndim == 0
        if interpolation not in _INTERPOLATIONS:
            raise RuntimeError(f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, "
                               f"but got {interpolation}")
        if input.numel() == 0:
            raise RuntimeError(f"{name}() input tensor must be non-empty")
        ax = None if dim is None else one_dim(dim, input.ndim)
        if ax is None and dim is not None:  # 0-dim input reduced over dim 0
            ax, keepdim = None, keepdim
        r = apply(_NANQUANTILE if ignore_nan else _QUANTILE, (input, q), axis=ax, keepdims=bool(keepdim),
                  interpolation=interpolation, ignore_nan=ignore_nan, scalar_q=scalar_q)
        return _out(r, out, name)
    f.__name__ = f.__qualname__ = name
    return f


quantile = _quantile(False)
nanquantile = _quantile(True)
_public("quantile", quantile)
_public("nanquantile", nanquantile)


# ----------------------------------------------------------------------------------------------------------------
# value-dependent shapes: unique, unique_consecutive, bincount (computed from concrete values)


def _host(input, what):
    d = input._d
    if tracing.active() or isinstance(d, jax.core.Tracer):
        raise tracing.concrete_error(what)
    return np.asarray(d)


def _like(input, array, dtype=None):
    """A new Tensor holding a numpy result, on ``input``'s device."""
    arr = np.asarray(array, dtype if dtype is not None else input._v.dtype)
    return wrap(jax.device_put(arr, next(iter(input._d.devices()))))


def _first_fwd(x, first, *, axis):
    """The distinct values, gathered from ``x`` at the positions of their first occurrences along ``axis``."""
    return jnp.take(x.reshape(-1) if axis is None else x, first, axis=0 if axis is None else axis)


def _no_formula(name):
    """The VJP of a node PyTorch records without a derivative formula (``not_implemented("_unique2")``)."""
    def vjp(g, x, first, out, axis):
        return NotDifferentiable(NotImplementedError(f"the derivative for '{name}' is not implemented.")), None
    return vjp


# unique's values are computed on the host; with grad recorded they are gathered again by one of these ops, whose
# node is PyTorch's (named by the overload PyTorch dispatches to) and whose backward raises as PyTorch's
_UNIQUE = defop("unique", _first_fwd, vjp=_no_formula("_unique2"), grad_name="Unique2Backward0", saved=("", ""))
_UNIQUE_DIM = overload(_UNIQUE, "UniqueDimBackward0", vjp=_no_formula("unique_dim"))
_UNIQUE_CONSECUTIVE = overload(_UNIQUE, "UniqueConsecutiveBackward0", vjp=_no_formula("unique_consecutive"))


def _records(input):
    return input._rg and STATE.grad_enabled


def _unique_values(input, vals, op, first, axis):
    """The distinct values as a Tensor: from the host's ``vals``, or (grad recorded) ``op`` gathering ``input`` at
    the ``first`` positions (a list holding the index array, or empty)."""
    if not (first and _records(input)):
        return _like(input, vals)
    return apply(op, (input, _like(input, first[0], np.int64)), axis=axis)


def _unique_result(input, values, inv, counts, return_inverse, return_counts):
    out = [values if isinstance(values, Tensor) else _like(input, values)]
    if return_inverse:
        out.append(_like(input, inv, np.int64))
    if return_counts:
        out.append(_like(input, counts, np.int64))
    return out[0] if len(out) == 1 else tuple(out)


def _unique_dim(input, a, dim):
    """PyTorch's checks of unique/unique_consecutive: no complex, a dim of a tensor with dims, and an empty input
    only when its one zero-sized dim is the one selected. -> the wrapped dim (None when ``dim`` is None)."""
    if input.is_complex():
        raise NotImplementedError(f'"unique" not implemented for \'{_dtype.scalar_type_name(input.dtype)}\'')
    if dim is None:
        return None
    if a.ndim == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    d = wrap_dim(dim, a.ndim)
    if a.size == 0:
        if sum(n == 0 for n in a.shape) > 1:
            raise RuntimeError("Number of zero sized dimensions is more than one, so unique cannot be applied ")
        if a.shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so unique cannot be applied")
    return d


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values (sorted; rows/slices along ``dim`` compared whole), optionally with the inverse indices
    and the counts."""
    require_tensor(input, "unique")
    for what, v in (("sorted", sorted), ("return_inverse", return_inverse), ("return_counts", return_counts)):
        if not isinstance(v, (bool, np.bool_)):  # (unique(x, 0) meant dim=0: PyTorch's parser refuses it)
            raise TypeError(f"{'_unique2' if dim is None else 'unique_dim'}(): argument '{what}' must be bool, not "
                            f"{type(v).__name__}")
    a = _host(input, "torch.unique")
    d = _unique_dim(input, a, dim)
    if dim is not None and a.size == 0:  # the selected dim is the empty one: nothing to compare
        return _unique_result(input, a, np.zeros(0), np.zeros(0), return_inverse, return_counts)
    rec = _records(input)
    if dim is None:
        vals, *first, inv, counts = np.unique(a.reshape(-1), return_index=rec, return_inverse=True,
                                              return_counts=True, equal_nan=False)
        inv = inv.reshape(a.shape)
    else:
        vals, *first, inv, counts = np.unique(a, axis=d, return_index=rec, return_inverse=True, return_counts=True,
                                              equal_nan=False)
        inv = inv.reshape(-1)
    values = _unique_values(input, vals, _UNIQUE if dim is None else _UNIQUE_DIM, first, d)
    return _unique_result(input, values, inv, counts, return_inverse, return_counts)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """Collapse each run of equal consecutive values (or slices along ``dim``) to one."""
    require_tensor(input, "unique_consecutive")
    a = _host(input, "torch.unique_consecutive")
    d = _unique_dim(input, a, dim)
    if dim is not None and a.size == 0:
        return _unique_result(input, a, np.zeros(0), np.zeros(0), return_inverse, return_counts)
    if dim is None:
        flat = a.reshape(-1)
        change = np.concatenate([[True], flat[1:] != flat[:-1]]) if flat.size else np.zeros(0, bool)
        vals = flat[change]
        inv = (np.cumsum(change) - 1).reshape(a.shape)
    else:
        m = np.moveaxis(a, d, 0).reshape(a.shape[d], -1)
        change = np.concatenate([[True], np.any(m[1:] != m[:-1], axis=1)]) if len(m) else np.zeros(0, bool)
        vals = np.compress(change, a, axis=d)
        inv = np.cumsum(change) - 1
    starts = np.flatnonzero(change)
    counts = np.diff(np.append(starts, change.size))
    values = _unique_values(input, vals, _UNIQUE_CONSECUTIVE, [starts], d)
    return _unique_result(input, values, inv, counts, return_inverse, return_counts)


def _bincount_fwd(x, w, *, length, dtype):
    ones = jnp.ones(x.shape, dtype) if w is None else w.astype(dtype)
    return jnp.zeros(length, dtype).at[x].add(ones)


_BINCOUNT = defop("bincount", _bincount_fwd, differentiable=False)


def bincount(input, weights=None, minlength=0):
    """Counts (or summed weights) of each non-negative integer value of a 1-d tensor."""
    require_tensor(input, "bincount")
    if input.dtype.category != _INT:
        raise not_implemented("bincount_cpu", input.dtype)
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = _host(input, "torch.bincount")
    if a.ndim != 1 or (a.size and a.min() < 0):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != a.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    length = builtins.max(int(a.max()) + 1 if a.size else 0, int(minlength))
    if weights is None or a.size == 0:  # PyTorch counts an empty input in int64 whatever the weights
        dt = np.dtype(np.int64)
    else:
        dt = np.dtype(np.float32) if weights.dtype is _dtype.float32 else np.dtype(np.float64)
    return apply(_BINCOUNT, (input, weights), length=length, dtype=dt)


def _histc_fwd(x, lo, hi, *, bins, auto):
    flat = x.reshape(-1)
    lo = jnp.asarray(lo, x.dtype)
    hi = jnp.asarray(hi, x.dtype)
    if auto:
        if flat.size:
            lo, hi = jnp.min(flat), jnp.max(flat)
        lo, hi = jnp.where(lo == hi, lo - 1, lo), jnp.where(lo == hi, hi + 1, hi)
    pos = ((flat - lo) * bins / (hi - lo)).astype(jnp.int64)
    pos = jnp.where(pos == bins, bins - 1, pos)
    inside = (flat >= lo) & (flat <= hi)
    return jnp.zeros(bins, x.dtype).at[jnp.where(inside, pos, bins)].add(jnp.ones((), x.dtype), mode="drop")


_HISTC = defop("histc", _histc_fwd, differentiable=False)
_MINMAX = jax.jit(lambda x: (jnp.min(x), jnp.max(x)))


def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram with ``bins`` equal-width bins between ``min`` and ``max`` (the data's range when they are
    equal); values outside are ignored."""
    require_tensor(input, "histc")
    require_int(bins, "histc", 2, "bins")
    if input.dtype.category != _FLOAT:
        raise not_implemented("histogram_cpu", input.dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    if min > max:
        raise RuntimeError("torch.histc: max must be larger than min")
    auto = min == max
    if auto and input.numel() and not tracing.active() and not isinstance(input._d, jax.core.Tracer):
        lo, hi = (float(v) for v in _MINMAX(input._d))
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")
    return out_exact(apply(_HISTC, (input, float(min), float(max)), bins=int(bins), auto=auto), out, "histc",
                     "torch.histogram: input tensor and hist tensor should have the same dtype, but got input "
                     "{expected} and hist {out}")


def _histogram_fwd(x, edges, weight, *, density):
    flat = x.reshape(-1)
    n = edges.shape[0] - 1
    pos = jnp.searchsorted(edges, flat, side="right") - 1
    pos = jnp.where(flat == edges[-1], n - 1, pos)
    inside = (flat >= edges[0]) & (flat <= edges[-1])
    w = jnp.ones_like(flat) if weight is None else weight.reshape(-1)
    hist = jnp.zeros(n, x.dtype).at[jnp.where(inside, pos, n)].add(w, mode="drop")
    if density:
        hist = hist / (hist.sum() * jnp.diff(edges))
    return hist


_HISTOGRAM = defop("histogram", _histogram_fwd, differentiable=False)
_HISTOGRAM_RESULT = _return_type("histogram", ("hist", "bin_edges"))


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """``torch.histogram``: ``(hist, bin_edges)`` for ``bins`` equal-width bins over ``range`` (the data's range
    by default), or for the given monotonic ``bins`` edges tensor; ``weight`` sums weights instead of counting and
    ``density`` normalises the histogram to integrate to 1."""
    require_tensor(input, "histogram")
    if input.dtype.category != _FLOAT:
        raise not_implemented("histogramdd", input.dtype)
    if weight is not None:
        if weight.dtype is not input.dtype:
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the "
                f"same dtype, but got input({_dtype.scalar_type_name(input.dtype).lower()}), and "
                f"weight({_dtype.scalar_type_name(weight.dtype).lower()})")
        if tuple(weight.shape) != tuple(input.shape):
            raise RuntimeError(
                "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
                f"excluding its innermost dimension, but got input with shape {list(input.shape)} and weight with "
                f"shape {list(weight.shape)}")
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.shape[0] < 1:
            raise RuntimeError("torch.histogramdd: bins tensor should have one dimension and at least 1 entry")
        edges = bins.to(input.dtype)
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = (float(v) for v in range)
        elif input.numel():
            lo, hi = (float(v) for v in _MINMAX(jnp.asarray(_host(input, "torch.histogram"))))
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               "dimension 0")
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo}, {hi}] is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        from .creation import linspace
        edges = linspace(lo, hi, int(bins) + 1, dtype=input.dtype)
    hist = apply(_HISTOGRAM, (input, edges, weight), density=bool(density))
    if out is not None:
        hist, edges = _out(hist, out[0], "histogram"), _out(edges, out[1], "histogram")
    return _HISTOGRAM_RESULT(hist, edges)


for _n in ("unique", "unique_consecutive", "bincount", "histc", "histogram"):
    _public(_n, globals()[_n])


# ----------------------------------------------------------------------------------------------------------------
# searchsorted / bucketize / isin


def _searchsorted_fwd(seq, v, sorter, *, side, out_dtype):
    if seq.size == 0:  # no boundaries (or no rows, and then no values): every value goes first
        return jnp.zeros(v.shape, out_dtype)
    if sorter is not None:
        seq = jnp.take_along_axis(seq, sorter, axis=-1)
    if seq.ndim == 1:
        r = jnp.searchsorted(seq, v, side=side)
    else:
        s2 = seq.reshape(-1, seq.shape[-1])
        v2 = v.reshape(s2.shape[0], -1)
        r = jax.vmap(lambda s, x: jnp.searchsorted(s, x, side=side))(s2, v2).reshape(v.shape)
    return r.astype(out_dtype)


_SEARCHSORTED = defop("searchsorted", _searchsorted_fwd, promote="same", promote_args=(0, 1),
                      differentiable=False)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None, out=None):
    """Indices where ``input`` would be inserted into the sorted innermost dim of ``sorted_sequence``."""
    require_tensor(sorted_sequence, "searchsorted", 1, "sorted_sequence")
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True")
        right = side == "right"
    v = scalar_or_tensor(input, "searchsorted", 2, "input")
    if not isinstance(v, Tensor):
        from .creation import tensor
        v = tensor(v)
    if sorted_sequence.ndim > 1 and tuple(sorted_sequence.shape[:-1]) != tuple(v.shape[:-1]):
        raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions "
                           "of boundaries tensor and input value tensor must match, but we got boundaries tensor "
                           f"{list(sorted_sequence.shape)} and input value tensor {list(v.shape)}")
    if sorter is not None and tuple(sorter.shape) != tuple(sorted_sequence.shape):
        raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, but got boundary "
                           f"tensor {list(sorted_sequence.shape)}and got sorter tensor {list(sorter.shape)}")
    r = apply(_SEARCHSORTED, (sorted_sequence, v, sorter), side="right" if right else "left",
              out_dtype=np.dtype(np.int32 if out_int32 else np.int64))
    if isinstance(out, Tensor) and out.dtype is not r.dtype:
        raise RuntimeError("torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
                           "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's dtype "
                           f"{_dtype.scalar_type_name(out.dtype)} and out_int32 flag is {bool(out_int32)}")
    return _out(r, out, "searchsorted")


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    """The bucket of each element of ``input``: ``boundaries[i-1] < x <= boundaries[i]`` (``<=, <`` if right)."""
    require_tensor(boundaries, "bucketize", 2, "boundaries")
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)


def _isin_fwd(e, t, *, invert):
    hit = jnp.any(e.reshape(-1, 1) == t.reshape(1, -1), axis=1).reshape(e.shape)
    return ~hit if invert else hit


_ISIN = defop("isin", _isin_fwd, promote="same", differentiable=False)


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` occurs in ``test_elements`` (either may be a scalar)."""
    e = scalar_or_tensor(elements, "isin", 1, "elements")
    t = scalar_or_tensor(test_elements, "isin", 2, "test_elements")
    if not isinstance(e, Tensor) and not isinstance(t, Tensor):
        raise TypeError("isin() received an invalid combination of arguments - got (two numbers)")
    dt = common_dtype((e, t))
    from .creation import tensor
    if not isinstance(e, Tensor):
        e = tensor(e, dtype=dt)
    if not isinstance(t, Tensor):
        t = tensor(t, dtype=dt)
    return apply(_ISIN, (e, t), invert=bool(invert))


_public("searchsorted", searchsorted, method=False)
_public("bucketize", bucketize, method=False)
_public("isin", isin, method=False)
