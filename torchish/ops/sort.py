"""Sorting and order statistics: sort/argsort/msort, topk, kthvalue, median/nanmedian, mode, quantile/nanquantile,
searchsorted/bucketize and isin (unique, bincount and the histograms: ``unique.py``).

Sorting puts NaN last (first when descending), as PyTorch does; equal values keep their order where PyTorch's CPU
sort does (``stable=True``, rows of at most 16) and come in its ``std::sort`` order elsewhere (``cpu_order.py``;
up to 4,096 elements: beyond, ties keep the stable order).
Values selected by index (sort, topk, kthvalue, median with a dim, mode) send their gradient back to the selected
positions; median over everything splits it between the tied medians.

Example::

    >>> import torchish as torch
    >>> torch.tensor([3., 1., 2.]).sort()
    torch.return_types.sort(
    values=tensor([1., 2., 3.]),
    indices=tensor([1, 2, 0]))
"""
from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor, wrap_dim
from . import cpu_order, saved as _saved, tracing
from .casting import cast
from .elementwise import (_out, common_dtype, need_bool, not_implemented, parser_worded, require_int, require_tensor,
                          scalar_or_tensor, structured_out)
from .reduce import numpy_kwargs, one_dim, scatter_add_along, values_indices
from . import registry as _registry
from .registry import apply, defop, overload
from .registry import Family as _Family

_public = _Family(globals()).public


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
# ``stable=`` given: PyTorch's sort.stable overload (its node too, whatever the flag: the sort is stable either way
# here). An explicit ``stable=None`` selects it in PyTorch as well, which a None default cannot tell apart
_SORT_STABLE = overload(_SORT, "SortBackward1")
_TOPK = defop("topk", _sort_fwd, vjp=_selected_vjp, grad_name="TopkBackward0")


# ----------------------------------------------------------------------------------------------------------------
# PyTorch's CPU order among ties (and of an unsorted topk): indices replayed on the host (cpu_order.py), then the
# values gathered at them by these ops (same gradients and saved tensors as the kernels they stand for)


def _at_fwd(x, idx, *, axis, keepdims=True):
    v = jnp.take_along_axis(x, idx, axis=axis)
    if not keepdims:
        v, idx = jnp.squeeze(v, axis), jnp.squeeze(idx, axis)
    return v, idx


_AT = {name: defop(f"{name}_at", _at_fwd, grad_name=grad, saved=_saved.SAVED[name])
       for name, grad in (("topk", "TopkBackward0"), ("kthvalue", "KthvalueBackward0"), ("mode", "ModeBackward0"),
                          ("sort", "SortBackward0"))}
_AT_SORT_STABLE = overload(_AT["sort"], "SortBackward1")


def _host_rows(input, d):
    """The input's values with ``d`` last, as ``(rows, n)`` numpy, when PyTorch's CPU order applies and can be
    replayed here (a concrete CPU tensor, outside a trace, within the replay budget); else None."""
    if d is None or tracing.active() or input.is_meta or input.device.type != "cpu" \
            or input.numel() > cpu_order.MAX_ELEMENTS:
        return None
    x = input._d
    if isinstance(x, jax.core.Tracer):
        return None
    a = np.moveaxis(np.asarray(x), d, -1)
    if a.dtype.kind not in "iub" and a.dtype.itemsize < 4:  # float16/bfloat16: exact in float32
        a = a.astype(np.float32)
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1]) if a.ndim else a.reshape(1, 1)  # (-1: ambiguous if empty)


def _replayed(input, d, rows, row_fn, width):
    """Indices (``width`` per row, shaped as the op's keepdim result) from ``row_fn(row)`` for every row."""
    idx = np.array([row_fn(r) for r in rows], np.int64)
    shape = [n for i, n in enumerate(input.shape) if i != d] + [width]
    return Tensor._make(jnp.asarray(np.moveaxis(idx.reshape(shape), -1, d)))


def _cpu_topk(input, d, k, largest, sorted_):
    rows = _host_rows(input, d)
    if rows is None or k == 0:
        return None
    n = rows.shape[1]
    if sorted_ or k * 64 <= n or k == 1:  # sorted: unique unless values tie in the first k (+ the next)
        s = np.sort(rows, axis=-1)
        if not cpu_order.ties(s[:, ::-1] if largest else s, min(k + 1, n)).any():
            return None
    return _replayed(input, d, rows, lambda r: cpu_order.topk_row(r, k, largest, sorted_), k)


def _cpu_sort(input, d, descending, stable):
    """Indices of PyTorch's CPU ``sort`` where they are not the stable order: rows longer than libstdc++'s
    insertion-sort threshold that hold equal values, sorted by ``std::sort`` (``stable=False`` or not given), except
    a dim of stride 0 (an expanded tensor), whose indices PyTorch leaves as they were filled, in order. Within
    :data:`cpu_order.SORT_MAX_ELEMENTS` elements only: a larger sort keeps ties in the stable order, as PyTorch's
    radix sort of a 1-d integer tensor of 32,768 elements or more (ascending) does, and differs in the order of
    tied indices otherwise (replaying it would take seconds)."""
    if stable or d is None or not input.ndim or input.shape[d] <= cpu_order.THRESHOLD or input.stride(d) == 0 \
            or input.numel() > cpu_order.SORT_MAX_ELEMENTS:
        return None
    rows = _host_rows(input, d)
    if rows is None or input.numel() == 0 or not cpu_order.ties(np.sort(rows, axis=-1), rows.shape[1]).any():
        return None
    comp = cpu_order.greater if descending else cpu_order.less
    return _replayed(input, d, rows, lambda r: cpu_order.sort_row(r, comp), rows.shape[1])


class _Default(int):
    """A default of ``sort``/``argsort`` (``dim=-1``, ``descending=False``) that tells it was not passed: PyTorch's
    argument parser counts the arguments given to choose its error."""

    def __new__(cls, value, text):
        out = super().__new__(cls, value)
        out.text = text
        return out

    def __repr__(self):
        return self.text


_DIM, _DESCENDING = _Default(-1, "-1"), _Default(0, "False")
_SORT_SIGNATURES = {  # (name, method) -> PyTorch's two overloads: text, fewest and most arguments, most positional
    ("sort", True): (("(*, bool stable, int dim = -1, bool descending = False)", 1, 3, 0),
                     ("(int dim = -1, bool descending = False)", 0, 2, 2)),
    ("sort", False): (("(Tensor input, *, bool stable, int dim = -1, bool descending = False, tuple of Tensors out = "
                       "None)", 2, 5, 1),
                      ("(Tensor input, int dim = -1, bool descending = False, *, tuple of Tensors out = None)", 1, 4, 3)),
    ("argsort", True): (("(*, bool stable, int dim = -1, bool descending = False)", 1, 3, 0),
                        ("(int dim = -1, bool descending = False)", 0, 2, 2)),
    ("argsort", False): (("(Tensor input, *, bool stable, int dim = -1, bool descending = False, Tensor out = None)",
                          2, 5, 1),
                         ("(Tensor input, int dim = -1, bool descending = False)", 1, 3, 3)),
}


def _sort_args(name, args, dim, descending, stable, method, out=None):
    """PyTorch's two overloads: ``(input, dim=-1, descending=False)`` positionally, or keyword-only ``stable``
    with keyword ``dim``/``descending``; mixing them is a TypeError, worded as PyTorch's argument parser words it
    for the method and the function (``method``: called as ``Tensor.sort``)."""
    if len(args) > 2 or args and stable is not None:
        kw = {k: v for k, v in (("descending", descending), ("dim", dim), ("out", out), ("stable", stable))
              if not isinstance(v, _Default) and v is not None}
        pos = ([] if method else ["Tensor"]) + [type(a).__name__ for a in args]
        sigs = _SORT_SIGNATURES[name, bool(method)]
        plausible = [sig for sig in sigs if sig[1] <= len(pos) + len(kw) <= sig[2]]
        if len(plausible) == 1 and len(pos) > plausible[0][3]:
            _, lo, _, hi = plausible[0]
            raise TypeError(f"{name}() takes from {lo} to {hi} positional arguments but {len(pos)} were given")
        got = ", ".join(pos + [f"{k}={type(v).__name__}" for k, v in kw.items()])
        lines = [f" * {sigs[0][0]}", f" * {sigs[1][0]}"]
        if "stable" in kw and (name, bool(method)) != ("sort", False):  # (PyTorch's parser says so for these)
            lines.append("      didn't match because some of the keywords were incorrect: stable")
        raise TypeError(f"{name}() received an invalid combination of arguments - got ({got}), but expected one of:\n"
                        + "\n".join(lines) + "\n")
    return (args + (dim, descending)[len(args):])[:2]


def sort(input, *args, dim=_DIM, descending=_DESCENDING, stable=None, out=None):
    """Sort along ``dim``; returns ``(values, indices)``. Equal values keep their order (``stable=True``, short
    rows) or come in the order PyTorch's CPU ``std::sort`` leaves them."""
    require_tensor(input, "sort")
    dim, descending = _sort_args("sort", args, dim, descending, stable, False, out)
    if not isinstance(descending, _Default):
        need_bool("sort", descending, "descending")
    _no_complex(input, "sort")
    d = one_dim(dim, input.ndim)
    if (idx := _cpu_sort(input, d, bool(descending), bool(stable))) is not None:
        v, i = apply(_AT["sort"] if stable is None else _AT_SORT_STABLE, (input, idx), axis=d)
    else:
        v, i = apply(_SORT if stable is None else _SORT_STABLE, (input,), axis=d, descending=bool(descending))
    if input._view is not None or input._layout is not None:  # (the input's strides where dense, size-1 dims' too)
        from .out_layout import keep_format
        keep_format(v, input)
        keep_format(i, input)
    return values_indices("sort", v, i, out)


def argsort(input, *args, dim=_DIM, descending=_DESCENDING, stable=None):
    dim, descending = _sort_args("argsort", args, dim, descending, stable, False)
    return sort(input, dim=dim, descending=descending, stable=stable)[1]


def _sort_method(self, *args, dim=_DIM, descending=_DESCENDING, stable=None):
    _sort_args("sort", args, dim, descending, stable, True)
    return sort(self, *args, dim=dim, descending=descending, stable=stable)


def _argsort_method(self, *args, dim=_DIM, descending=_DESCENDING, stable=None):
    _sort_args("argsort", args, dim, descending, stable, True)
    return argsort(self, *args, dim=dim, descending=descending, stable=stable)


@structured_out
def msort(input):
    return sort(input, 0)[0]


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The ``k`` largest (or smallest) elements along ``dim``; among ties (and unsorted) in PyTorch's CPU order."""
    require_tensor(input, "topk")
    require_int(k, "topk", 2, "k", symint=True)
    need_bool("topk", largest, "largest")
    need_bool("topk", sorted, "sorted")
    d = one_dim(dim, input.ndim)  # (PyTorch's order: the dim, k, then the dtype)
    size = input.shape[d] if input.ndim else 1
    if k < 0 or k > size:
        raise RuntimeError("selected index k out of range")
    if input.dtype is _dtype.bool or input.is_complex():
        raise RuntimeError(f"{'' if input.dtype is _dtype.bool else ' '}topk does not support "
                           f"{'bool' if input.dtype is _dtype.bool else 'complex'} dtypes on CPU")
    if d is None:
        v, i = apply(_TOPK, (input,), axis=None, descending=bool(largest))
    elif (idx := _cpu_topk(input, d, int(k), bool(largest), bool(sorted))) is not None:
        v, i = apply(_AT["topk"], (input, idx), axis=d)
    else:
        v, i = apply(_TOPK, (input,), axis=d, descending=bool(largest), k=int(k))
    return values_indices("topk", v, i, out)


for _n in ("sort", "argsort", "msort", "topk"):
    _public(_n, globals()[_n])
_sort_method.__name__, _argsort_method.__name__ = "sort", "argsort"
METHODS.update(sort=_sort_method, argsort=_argsort_method)


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
    need_bool("kthvalue", keepdim)
    require_int(k, "kthvalue", 2, "k", symint=True)
    d = one_dim(dim, input.ndim)
    _check_dim_nonempty(input, "kthvalue", d)
    if input.ndim and (input.dtype is _dtype.bool or input.is_complex()):  # a 0-d input is its own result
        raise not_implemented("kthvalue_cpu", input.dtype)
    size = input.shape[d] if input.ndim else 1
    if k < 1 or k > size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {wrap_dim(dim, input.ndim)}")
    rows = _host_rows(input, d)
    if rows is not None and _value_ties(rows, int(k) - 1):
        idx = _replayed(input, d, rows, lambda r: cpu_order.kthvalue_row(r, int(k)), 1)
        v, i = apply(_AT["kthvalue"], (input, idx), axis=d, keepdims=bool(keepdim))
        return values_indices("kthvalue", v, i, out)
    v, i = apply(_KTHVALUE, (input,), axis=d, keepdims=bool(keepdim), mode="kth", k=int(k) - 1)
    return values_indices("kthvalue", v, i, out)


def _value_ties(rows, pos):
    """Whether, in some row, the value at sorted position ``pos`` occurs more than once (NaNs equal)."""
    s = np.sort(rows, axis=-1)
    return cpu_order.ties(s[:, max(pos - 1, 0):pos + 2], 3).any()


_NO_DIM = object()


def _median(nan_ignore):
    name = "nanmedian" if nan_ignore else "median"

    @numpy_kwargs
    def f(input, dim=_NO_DIM, keepdim=_NO_DIM, *, out=None):
        require_tensor(input, name)
        unsupported = input.dtype is _dtype.bool or input.is_complex()
        if dim is None:  # (PyTorch's overloads take no dim, or an int one: an explicit None is neither)
            raise TypeError(f"{name}(): argument 'dim' (position 2) must be int, not NoneType")
        if dim is _NO_DIM:  # an empty input never reaches the kernel: NaN cast to the dtype (True for bool)
            if keepdim is not _NO_DIM or out is not None:  # only PyTorch's overload with a dim takes these
                raise TypeError(f'{name}() missing 1 required positional arguments: "dim"')
            if unsupported and input.numel():
                raise not_implemented(f"{name}_cpu", input.dtype)
            return apply(_NANMEDIAN if nan_ignore else _MEDIAN, (input,), nan_ignore=nan_ignore)
        d = one_dim(dim, input.ndim)
        if keepdim is _NO_DIM:
            keepdim = False
        need_bool(name, keepdim)  # (None too: PyTorch's keepdim is a bool)
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


@parser_worded
def mode(input, dim=-1, keepdim=False, *, out=None):
    require_tensor(input, "mode")
    need_bool("mode", keepdim)
    d = one_dim(dim, input.ndim)
    _check_dim_nonempty(input, "mode", d if d is not None else 0)
    if input.is_complex() and input.ndim > 0 and input.numel():  # (a 0-d or empty input never reaches the kernel)
        raise not_implemented("mode_cpu", input.dtype)
    rows = _host_rows(input, d)
    if rows is not None and (cpu_order.ties(np.sort(rows, axis=-1), rows.shape[1]).any()
                             or (rows.dtype.kind == "f" and np.isnan(rows).any())):  # (NaN breaks its ordering)
        idx = _replayed(input, d, rows, cpu_order.mode_row, 1)
        v, i = apply(_AT["mode"], (input, idx), axis=d, keepdims=bool(keepdim))
        return values_indices("mode", v, i, out)
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


_QUANTILE_MAX_NUMEL = 2 ** 24  # PyTorch's limit on the input (the float32 sort ranks stay exact below it)


def _quantile(ignore_nan):
    public = "nanquantile" if ignore_nan else "quantile"
    name = "quantile"  # (every message of both functions says quantile())

    def f(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
        require_tensor(input, public)
        need_bool(public, keepdim, "keepdim", 4)
        if _registry.autocast_hook is not None and out is None:  # float32 under CPU autocast, before the dtype checks
            input, q = _registry.autocast_hook(public, (input, q))
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
        if input.numel() > _QUANTILE_MAX_NUMEL:
            raise RuntimeError(f"{name}() input tensor is too large")
        if isinstance(out, Tensor) and out.dtype is not input.dtype:
            raise RuntimeError(f"{name}() out tensor must be same dtype as the input tensor")
        ax = None if dim is None else one_dim(dim, input.ndim)
        if ax is None and dim is not None:  # 0-dim input reduced over dim 0
            ax, keepdim = None, keepdim
        r = apply(_NANQUANTILE if ignore_nan else _QUANTILE, (input, q), axis=ax, keepdims=bool(keepdim),
                  interpolation=interpolation, ignore_nan=ignore_nan, scalar_q=scalar_q)
        return _out(r, out, public)
    f.__name__ = f.__qualname__ = public
    return f


quantile = _quantile(False)
nanquantile = _quantile(True)
_public("quantile", quantile)
_public("nanquantile", nanquantile)


# ----------------------------------------------------------------------------------------------------------------
# searchsorted / bucketize / isin


def _searchsorted_fwd(seq, v, sorter, *, side, out_dtype):
    """PyTorch's binary search (cus_lower_bound / cus_upper_bound): go right while ``!(mid >= v)`` (left) or
    ``!(mid > v)`` (right). With plain IEEE comparisons a NaN value lands at the end and a NaN boundary on the
    search's path counts as smaller, where jnp.searchsorted orders NaN as the largest value."""
    if seq.size == 0:  # no boundaries (or no rows, and then no values): every value goes first
        return jnp.zeros(v.shape, out_dtype)
    if sorter is not None:
        seq = jnp.take_along_axis(seq, sorter, axis=-1)
    n = seq.shape[-1]
    s2 = seq.reshape(-1, n)
    v2 = v.reshape(s2.shape[0], -1)
    start = jnp.zeros(v2.shape, np.int32 if n < 2 ** 31 - 1 else np.int64)
    end = jnp.full(v2.shape, n, start.dtype)
    for _ in range(int(n).bit_length()):  # each step at least halves end - start
        mid = start + ((end - start) >> 1)
        mid_val = jnp.take_along_axis(s2, jnp.minimum(mid, n - 1), axis=1)
        right = ~(mid_val >= v2) if side == "left" else ~(mid_val > v2)
        live = start < end
        start = jnp.where(live & right, mid + 1, start)
        end = jnp.where(live & ~right, mid, end)
    return start.reshape(v.shape).astype(out_dtype)


_SEARCHSORTED = defop("searchsorted", _searchsorted_fwd, promote="same", promote_args=(0, 1),
                      differentiable=False)


def _check_sorter(sorter, n):
    """searchsorted's ``sorter``: int64 indices into the boundaries' last dim (checked on the host when concrete:
    an index out of range would otherwise be clamped by the gather)."""
    if sorter.dtype is not _dtype.int64:
        raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but got dtype "
                           f"{_dtype.scalar_type_name(sorter.dtype)}")
    if sorter.numel() and not tracing.active() and not isinstance(sorter._d, jax.core.Tracer):
        a = np.asarray(sorter._d)
        if a.min() < 0 or a.max() >= n:
            raise RuntimeError("torch.searchsorted(): sorter index out of range")


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
    if sorter is not None:
        _check_sorter(sorter, sorted_sequence.shape[-1] if sorted_sequence.ndim else 1)
    dt = common_dtype((sorted_sequence, v))
    if dt.category in (_dtype._BOOL, _dtype._COMPLEX):  # (PyTorch's kernel is dispatched on the common dtype)
        raise not_implemented("searchsorted_out_cpu", dt)
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
    for x in (e, t):  # PyTorch checks each operand's own type (a Python number's: Bool, Long, Double, ComplexDouble)
        xdt = x.dtype if isinstance(x, Tensor) else _dtype.as_dtype(
            "bool" if isinstance(x, (bool, np.bool_)) else "complex128" if isinstance(x, complex) else "float64")
        if xdt.category == _dtype._BOOL or xdt in (_dtype.complex64, _dtype.complex128):
            raise RuntimeError(f"Unsupported input type encountered for isin(): {_dtype.scalar_type_name(xdt)}")
    dt = common_dtype((e, t))
    from .creation import tensor
    if not isinstance(e, Tensor):
        e = tensor(e, dtype=dt)
    if not isinstance(t, Tensor):
        t = tensor(t, dtype=dt)
    elif e.numel() and t.numel() < int(10.0 * e.numel() ** 0.145) and not t.is_contiguous():
        # PyTorch's brute-force kernel (few test elements) flattens them with test_elements.to(common).view(-1):
        # its RuntimeError for a layout that cannot be viewed flat (to() keeps a permuted layout)
        t.to(dt).view(-1)
    return apply(_ISIN, (e, t), invert=bool(invert))


_public("searchsorted", searchsorted, method=False)
_public("bucketize", bucketize, method=False)
_public("isin", isin, method=False)
