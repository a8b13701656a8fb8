"""Ops whose output *shape* depends on the values: unique/unique_consecutive, bincount, histc/histogram. They read
the values on the host, so they cannot run on traced tensors inside ``torchish.compile``.

Example::

    >>> import torchish as torch
    >>> torch.unique(torch.tensor([3, 1, 3]), return_counts=True)
    (tensor([1, 3]), tensor([1, 2]))
"""
from __future__ import annotations

import builtins

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype, _precision
from .._runtime import get_num_threads
from .._tensor import Tensor, wrap, wrap_dim
from ..autograd.grad_mode import STATE
from . import tracing
from .casting import check_scalar_fits
from .elementwise import (_out, no_derivative, not_implemented, out_exact, parser_worded, require_int, require_number,
                          require_tensor)
from .float8 import refuse as refuse_float8
from .inplace import contiguous_strides
from .reduce import _return_type
from .registry import NotDifferentiable, apply, defop, overload
from .registry import Family as _Family

_public = _Family(globals()).public
_INT, _FLOAT = _dtype._INT, _dtype._FLOAT


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
    refuse_float8(input, "unique")
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


def _moved_back(values, d):
    """PyTorch's strides for unique along ``dim``: it stacks the kept slices as the rows of a contiguous tensor and
    moves that dimension back to ``dim`` (``unique(x, dim=1)`` of a 2-d ``x`` has strides ``(1, rows)``)."""
    shape = tuple(values.shape)
    row = contiguous_strides((shape[d],) + shape[:d] + shape[d + 1:])
    strides = row[1:d + 1] + row[:1] + row[d + 1:]
    if strides != contiguous_strides(shape):
        values._layout = (shape, strides, 0)


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
    if dim is not None:
        _moved_back(values, d)
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
    if dim is not None:
        _moved_back(values, d)
    return _unique_result(input, values, inv, counts, return_inverse, return_counts)


def _bincount_fwd(x, w, *, length, dtype):
    ones = jnp.ones(x.shape, dtype) if w is None else w.astype(dtype)
    return jnp.zeros(length, dtype).at[x].add(ones)


_BINCOUNT = defop("bincount", _bincount_fwd, differentiable=False)
# weights that require grad: PyTorch records a node without a formula, whose backward raises
_BINCOUNT_WEIGHTED = overload(_BINCOUNT, "NotImplemented", differentiable=True, save_out=True,
                             vjp=no_derivative("bincount"))


def bincount(input, weights=None, minlength=0):
    """Counts (or summed weights) of each non-negative integer value of a 1-d tensor."""
    require_tensor(input, "bincount")
    if weights is not None:
        require_tensor(weights, "bincount", 2, "weights")
    require_int(minlength, "bincount", 3, "minlength")
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
    op = _BINCOUNT if weights is None or dt == np.int64 else _BINCOUNT_WEIGHTED
    return apply(op, (input, weights), length=length, dtype=dt)


def _histc_fwd(x, lo, hi, *, bins, auto, threads=None):
    flat = x.reshape(-1)
    lo = jnp.asarray(lo, x.dtype)
    hi = jnp.asarray(hi, x.dtype)
    if auto:
        if flat.size:
            lo, hi = jnp.min(flat), jnp.max(flat)
        lo, hi = jnp.where(lo == hi, lo - 1, lo), jnp.where(lo == hi, hi + 1, hi)
    if threads is None:
        # one IEEE division as PyTorch's kernel: XLA folds (x * bins) / d into x * (bins / d), which moves elements on a
        # bin edge (histc(tensor([1.3] * 20), 7, -2.2, 2.7) put them one bin lower)
        pos = _precision.div((flat - lo) * bins, hi - lo).astype(jnp.int64)
    else:  # PyTorch's kernel: (x - lo) * bins / (hi - lo) one operation at a time in the half type
        wide, r = _precision.stepper(x.dtype)
        pos = (r(r(r(wide(flat) - wide(lo)) * bins) / r(wide(hi) - wide(lo)))).astype(jnp.int64)
    pos = jnp.where(pos == bins, bins - 1, pos)
    inside = (flat >= lo) & (flat <= hi)
    where = jnp.where(inside, pos, bins)
    if threads is None:
        return jnp.zeros(bins, x.dtype).at[where].add(jnp.ones((), x.dtype), mode="drop")
    # float16/bfloat16: PyTorch's kernel counts each thread's share of the elements (at::parallel_for with a grain of
    # 200) one at a time in the half type, where a count stops growing at 2048 (float16) / 256 (bfloat16), and sums
    # the threads' histograms in float32, rounded once
    n = flat.shape[0]
    chunk = -(-n // builtins.min(threads, builtins.max(1, -(-n // 200)))) if n else 1
    parts = jnp.zeros((-(-n // chunk) if n else 1, bins), jnp.float32).at[jnp.arange(n) // chunk, where].add(
        1.0, mode="drop")
    stop = 2048.0 if x.dtype == jnp.float16 else 256.0
    return jnp.minimum(parts, stop).sum(0).astype(x.dtype)


_HISTC = defop("histc", _histc_fwd, differentiable=False)
_MINMAX = jax.jit(lambda x: (jnp.min(x), jnp.max(x)))


def _check_histc_range(lo, hi, nan_sign):
    """PyTorch's RuntimeError for a non-finite histc range, its bounds printed as C++ prints doubles (``%g``)."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        lo, hi = (nan_sign + "nan" if v != v else f"{v:g}" for v in (lo, hi))
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite")


def _check_integer_edges(input, lo, hi, auto):
    """PyTorch's linspace of an integer tensor's bin edges (before its missing histogram kernel): the range, the
    data's for ``auto``, widened by 1 each way when empty, must fit the input's dtype (-1 does not fit uint8)."""
    if auto and input.numel() and not tracing.active() and not isinstance(input._d, jax.core.Tracer):
        lo, hi = (float(v) for v in _MINMAX(input._d))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    check_scalar_fits(lo, input.dtype)
    check_scalar_fits(hi, input.dtype)


@parser_worded
def histc(input, bins=100, min=0, max=0, *, out=None):
    """Histogram with ``bins`` equal-width bins between ``min`` and ``max`` (the data's range when they are
    equal); values outside are ignored."""
    require_tensor(input, "histc")
    require_int(bins, "histc", 2, "bins")
    require_number(min, "histc", 3, "min", "Number")
    require_number(max, "histc", 4, "max", "Number")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    # PyTorch's steps, each with its own kernel: aminmax of the data (for min == max), the bin edges by linspace in
    # the input's dtype, then the histogram kernel, which only floating types have
    unsigned = input.dtype in (_dtype.uint16, _dtype.uint32, _dtype.uint64)
    auto = min == max
    if not auto:
        _check_histc_range(float(min), float(max), "")
        if min > max:
            raise RuntimeError("torch.histc: max must be larger than min")
    elif input.numel() and unsigned:
        raise not_implemented("aminmax_cpu", input.dtype)
    if unsigned or input.dtype is _dtype.bool:
        raise not_implemented("linspace_cpu", input.dtype)
    if input.dtype.category != _FLOAT:
        _check_integer_edges(input, float(min), float(max), auto)
        raise not_implemented("histogram_cpu", input.dtype)
    if not auto:
        check_scalar_fits(min, input.dtype)
        check_scalar_fits(max, input.dtype)
    elif input.numel() and not tracing.active() and not isinstance(input._d, jax.core.Tracer):
        lo, hi = (float(v) for v in _MINMAX(input._d))
        _check_histc_range(lo, hi, "-")  # (PyTorch's CPU min/max of NaN data prints as "-nan")
    threads = get_num_threads() if input.dtype in (_dtype.float16, _dtype.bfloat16) else None
    return out_exact(apply(_HISTC, (input, float(min), float(max)), bins=int(bins), auto=auto, threads=threads),
                     out, "histc",
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
    if density:  # (PyTorch divides by the total, then by each bin's width: two roundings, which the barrier keeps
        # from XLA's rewrite of (h / s) / w into h / (s * w))
        share = jax.lax.optimization_barrier(_precision.div(hist, hist.sum()))
        hist = _precision.div(share, jnp.diff(edges))
    return hist, edges  # (PyTorch's bin_edges is a new tensor, also when given the edges)


_HISTOGRAM = defop("histogram", _histogram_fwd, differentiable=False)
# an input, edges or weight that requires grad: PyTorch records a node without a formula (both outputs require
# grad, and backward through it raises)
_HISTOGRAM_RECORDED = overload(_HISTOGRAM, "NotImplemented", differentiable=True, save_out=True,
                               vjp=no_derivative("histogram"))
_HISTOGRAM_RESULT = _return_type("histogram", ("hist", "bin_edges"))


def _check_bin_edges(input, bins):
    """PyTorch's checks of a bin-edges tensor, in its order: the input's dtype, one dimension, not empty."""
    if bins.dtype is not input.dtype:
        raise RuntimeError(
            "torch.histogramdd: input tensor and bins tensors should have the same dtype, but got input with dtype "
            f"{_dtype.cpp_type_name(input.dtype)} and bins for dimension 0 with dtype {_dtype.cpp_type_name(bins.dtype)}")
    if bins.ndim != 1:
        raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but got {bins.ndim} dimensions "
                           "in the bins tensor for dimension 0")
    if bins.shape[0] == 0:
        raise RuntimeError("torch.histogramdd: bins tensor should have at least 1 element, but got 0 elements in the "
                           "bins tensor for dimension 0")


def _check_histogram_weight(input, weight):
    """``weight`` has the input's dtype and as many elements (PyTorch flattens both: the input to ``[numel, 1]``,
    the weight to ``[numel]``, the shapes its message prints)."""
    if weight is None:
        return
    if weight.dtype is not input.dtype:
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided, input tensor and weight tensor should have the same "
            f"dtype, but got input({_dtype.cpp_type_name(input.dtype)}), and weight({_dtype.cpp_type_name(weight.dtype)})")
    if weight.numel() != input.numel():
        raise RuntimeError(
            "torch.histogramdd: if weight tensor is provided it should have the same shape as the input tensor "
            f"excluding its innermost dimension, but got input with shape [{input.numel()}, 1] and weight with shape "
            f"[{weight.numel()}]")


def histogram(input, bins=100, *, range=None, weight=None, density=False, out=None):
    """``torch.histogram``: ``(hist, bin_edges)`` for ``bins`` equal-width bins over ``range`` (the data's range
    by default), or for the given monotonic ``bins`` edges tensor; ``weight`` sums weights instead of counting and
    ``density`` normalises the histogram to integrate to 1."""
    require_tensor(input, "histogram")
    if isinstance(bins, Tensor):
        _check_bin_edges(input, bins)
        _check_histogram_weight(input, weight)
        if bins.shape[0] < 2:
            raise RuntimeError("torch.histogram(): bins must be > 0, but got 0 for dimension 0")
        if input.dtype.category != _FLOAT:
            raise not_implemented("histogram_cpu", input.dtype)
        edges = bins
    else:  # (PyTorch's kernel for a number of bins has no half-precision instance; edges tensors do)
        if input.dtype.category != _FLOAT or input.dtype in (_dtype.float16, _dtype.bfloat16):
            raise not_implemented("histogramdd", input.dtype)
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            if len(range) != 2:
                raise RuntimeError("torch.histogramdd: for a 1-dimensional histogram range should have 2 elements, "
                                   f"but got {len(range)}")
            lo, hi = (float(v) for v in range)
        elif input.numel():
            lo, hi = (float(v) for v in _MINMAX(jnp.asarray(_host(input, "torch.histogram"))))
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min {lo:g} max {hi:g} for "
                               "dimension 0")
        if not (np.isfinite(lo) and np.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension 0's range [{lo:g}, {hi:g}] is not finite")
        _check_histogram_weight(input, weight)
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        from .creation import linspace
        edges = linspace(lo, hi, int(bins) + 1, dtype=input.dtype)
    args = (input, edges, weight)
    recorded = STATE.grad_enabled and any(t is not None and t.requires_grad for t in args)
    hist, edges = apply(_HISTOGRAM_RECORDED if recorded else _HISTOGRAM, args, density=bool(density))
    if out is not None:
        hist, edges = _out(hist, out[0], "histogram"), _out(edges, out[1], "histogram")
    return _HISTOGRAM_RESULT(hist, edges)


for _n in ("unique", "unique_consecutive", "bincount", "histc", "histogram"):
    _public(_n, globals()[_n])


