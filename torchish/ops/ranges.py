"""Ranges: arange, the deprecated range, linspace and logspace, with the values PyTorch's CPU kernels compute."""
from __future__ import annotations

import builtins
import math
import warnings

import jax.numpy as jnp
import numpy as np

from .. import _dtype
from .._tensor import Tensor
from .casting import ACC, check_scalar_fits
from .elementwise import factory_out, range_out, require_number
from .from_data import _check_grad_dtype, _scalar, place
from .registry import Family as _Family

_public = _Family(globals()).public
_FLOAT = _dtype._FLOAT


def _numbers(name, **values):
    """PyTorch's parser for the Number bounds of ``name``: Python and numpy numbers, and Tensors without dims
    (linspace/logspace also have Tensor overloads, whose kernels refuse a Tensor with dims: a RuntimeError); None
    or anything else is a TypeError (``arange`` words it from its table: ``factory_out``)."""
    for key, v in values.items():
        if isinstance(v, Tensor):
            if v.ndim and name != "arange":
                raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {key} with "
                                   f"{v.ndim} dimension(s).")
            if v.ndim:
                raise TypeError(f"{name}(): argument '{key}' must be Number, not Tensor")
        elif not isinstance(v, (builtins.int, builtins.float, builtins.complex, np.number, np.bool_)):
            raise TypeError(f"{name}() received an invalid combination of arguments - got {key} of type "
                            f"{type(v).__name__}, but expected Number {key}")


def _range_dtype(dtype, *values):
    if dtype is not None:
        return _dtype.as_dtype(dtype)
    if any(isinstance(v, builtins.complex) for v in values):
        return _dtype.DEFAULTS.complex
    if all(isinstance(v, int) for v in values):
        return _dtype.int64
    return _dtype.DEFAULTS.float


_UNSET = object()  # (an argument of arange not given: PyTorch has no None overload, ``arange(0, None)`` is its
                   # TypeError)


@factory_out
def arange(first=_UNSET, /, end=_UNSET, step=_UNSET, *, start=_UNSET, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values ``start, start + step, ...`` below ``end``; int64 when all bounds are ints, else the default float.

    The length is ``ceil((end - start) / step)`` and each value ``start + i * step`` is computed in float64 and
    then cast, as PyTorch does on CPU. A lone number is ``end`` (``arange(3)``, ``arange(end=3)``); ``start`` by
    keyword belongs to the two- and three-number overloads only (``arange(start=3)`` is PyTorch's TypeError).
    """
    _dtype.user_dtype(dtype, "arange")
    if start is not _UNSET:  # start= by keyword: the overloads that also want an end
        if first is not _UNSET:
            raise TypeError("arange() got multiple values for argument 'start'")  # (factory_out words these)
        if end is _UNSET:
            raise TypeError("arange() missing required argument 'end'")
    else:
        start = first
    if end is _UNSET:  # arange(end): PyTorch's one-number overload takes no step
        if start is _UNSET or step is not _UNSET:
            raise TypeError("arange() missing required argument 'end'")  # (factory_out words it from the table)
        start, end = 0, start
    elif start is _UNSET:  # arange(end=n) alone
        if step is not _UNSET:
            raise TypeError("arange() missing required argument 'start'")
        start = 0
    step = 1 if step is _UNSET else step
    _numbers("arange", start=start, end=end, step=step)
    start, end, step = _scalar(start), _scalar(end), _scalar(step)
    dt = _range_dtype(dtype, start, end, step)
    if dt in _dtype.FLOAT8 or dt in _dtype._BAREBONES_UNSIGNED:
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{_dtype.scalar_type_name(dt)}'")
    if step == 0 or step != step:
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(start) and math.isfinite(end)):
        raise RuntimeError(f"unsupported range: {start} -> {end}")
    if (step > 0 and end < start) or (step < 0 and end > start):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    acc = ACC.get(jnp.dtype(dt.np), jnp.dtype(jnp.int64) if dt.category <= _dtype._INT else dt)
    for v in (start, step) + ((end,) if dt is _dtype.int64 else ()):  # converted to the kernel's accumulate type,
        check_scalar_fits(v, acc)  # checked (``end`` too only where int64 sizes the range from it)
    if dt.category <= _dtype._INT:
        istart, istep = int(start), int(step)
        if dt is _dtype.int64:  # PyTorch sizes int64 ranges from the truncated bounds
            if istep == 0:
                raise ValueError("step must be nonzero")
            n = math.ceil((int(end) - istart) / istep)
        else:
            n = math.ceil((end - start) / step)
        vals = istart + istep * np.arange(max(n, 0), dtype=np.int64)
    else:
        n = math.ceil((end - start) / step)
        vals = start + step * np.arange(max(n, 0), dtype=np.float64)
    _check_grad_dtype(dt, requires_grad, "arange")
    return place(vals, dt, device, requires_grad)


def range_(start=0, end=None, step=1, *, out=None, dtype=None, device=None, requires_grad=False):
    """Deprecated ``torch.range``: includes ``end``."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because its behavior is "
                  "inconsistent with Python's range builtin. Instead, use torch.arange, which produces values in "
                  "[start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    n = int(math.floor((end - start) / step)) + 1
    if dtype is None and isinstance(out, Tensor):
        dtype = out.dtype
    dt = _dtype.as_dtype(dtype) if dtype is not None else _dtype.DEFAULTS.float
    result = place(start + step * np.arange(n, dtype=np.float64), dt, device, requires_grad)
    return result if out is None else range_out(result, out, "range")


def _linspace_values(start, end, steps, dt):
    """PyTorch's CPU linspace: the first half counts up from ``start``, the second half down from ``end``."""
    if dt.category <= _dtype._INT:
        start, end = int(start.real), int(end.real)
    base = np.complex128 if isinstance(start, builtins.complex) or isinstance(end, builtins.complex) else np.float64
    if steps == 1:
        return np.array([start], dtype=base)
    step = (end - start) / (steps - 1)
    idx = np.arange(steps, dtype=np.float64)
    return np.where(idx < steps // 2, start + step * idx, end - step * (steps - idx - 1)).astype(base)


def _linspace_real(start, end, steps, dt):
    """A real linspace as PyTorch's CPU kernel computes it, ``step = (end - start) / (steps - 1)``, the first half
    ``start + step * i``, the second ``end - step * (steps - 1 - i)``: float32/float64 in the dtype itself with ONE
    rounding per value (the compiler fuses the multiply-add, so ``linspace(-2, 2, 7)[3]`` is -5.96e-08 in float32,
    not 0); integers with a float64 step, fused, truncated; float16/bfloat16 rounding after every operation."""
    idx = np.arange(steps, dtype=np.float64)
    first = idx < steps // 2
    k = np.where(first, idx, steps - 1 - idx)
    with np.errstate(all="ignore"):
        if dt.category <= _dtype._INT:  # checked as c10 converts; a negative int wraps into an unsigned type
            start, end = (float(np.array(int(check_scalar_fits(v, dt))).astype(dt.np)) for v in (start, end))
            step = (end - start) / (steps - 1)
            return _fma64(np.where(first, step, -step), k, np.where(first, start, end))
        h = dt.np.type
        s, e = h(start), h(end)
        step = h((e - s) / h(steps - 1))
        add = np.where(first, np.float64(s), np.float64(e))
        if dt == _dtype.float64:
            return _fma64(np.where(first, step, -step), k, add)
        if dt == _dtype.float32:  # a float32 product is exact in float64, and so (almost always) is the sum
            return (np.where(first, step, -step) * k + add).astype(np.float32)
        prod = (np.float32(step) * k.astype(dt.np).astype(np.float32)).astype(dt.np).astype(np.float64)
        return (add + np.where(first, prod, -prod)).astype(dt.np)


def _fma64(a, b, c):
    """``a * b + c`` rounded once, for float64 arrays (Dekker's exact product and Knuth's two-sum)."""
    p = a * b
    ah, bh = _split(a), _split(b)
    al, bl = a - ah, b - bh
    err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    bb = s - p
    t = (p - (s - bb)) + (c - bb)
    out = s + (t + err)
    return np.where(np.isfinite(out), out, p + c)


def _split(x):
    t = 134217729.0 * x  # 2**27 + 1: Veltkamp's split into two 26-bit halves
    return t - (t - x)


def _check_steps(steps, name):
    """``steps`` as an int: PyTorch's parser takes numpy integers too (``torch.linspace(0, 1, np.int64(5))``)."""
    if not isinstance(steps, (int, np.integer)) or isinstance(steps, bool):
        raise TypeError(f"{name}() received an invalid combination of arguments - got steps of type "
                        f"{type(steps).__name__}, but expected int steps")
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    return int(steps)


@factory_out
def linspace(start, end, steps, *, dtype=None, layout=None, device=None, requires_grad=False):
    _dtype.user_dtype(dtype, "linspace")
    _numbers("linspace", start=start, end=end)
    start, end = _scalar(start), _scalar(end)
    steps = _check_steps(steps, "linspace")
    dt = _dtype.as_dtype(dtype) if dtype is not None else (
        _dtype.DEFAULTS.complex if isinstance(start, builtins.complex) or isinstance(end, builtins.complex) else _dtype.DEFAULTS.float)
    if (dt is _dtype.bool and steps > 1) or dt in _dtype.FLOAT8 or dt in _dtype._BAREBONES_UNSIGNED:
        raise NotImplementedError(f"\"linspace_cpu\" not implemented for '{_dtype.scalar_type_name(dt)}'")
    complex_ = isinstance(start, builtins.complex) or isinstance(end, builtins.complex) or dt.category > _FLOAT
    vals = _linspace_values(start, end, steps, dt) if complex_ or steps <= 1 else _linspace_real(start, end, steps, dt)
    _check_grad_dtype(dt, requires_grad, "linspace")
    return place(np.trunc(vals) if dt.category <= _dtype._INT else vals, dt, device, requires_grad)


@factory_out
def logspace(start, end, steps, base=10.0, *, dtype=None, layout=None, device=None, requires_grad=False):
    _numbers("logspace", start=start, end=end)
    require_number(base, "logspace", 4, "base")
    start, end = _scalar(start), _scalar(end)
    steps = _check_steps(steps, "logspace")
    if dtype is not None and ((_dtype.as_dtype(dtype) is _dtype.bool and steps > 1) or dtype in _dtype.FLOAT8
                              or dtype in _dtype._BAREBONES_UNSIGNED):
        raise NotImplementedError(f"\"logspace_cpu\" not implemented for '{_dtype.scalar_type_name(dtype)}'")
    dt = _dtype.as_dtype(dtype) if dtype is not None else (
        _dtype.DEFAULTS.complex if isinstance(start, builtins.complex) or isinstance(end, builtins.complex) else _dtype.DEFAULTS.float)
    exps = _linspace_values(start, end, steps, _dtype.float64 if dt.category <= _FLOAT else dt)
    with np.errstate(all="ignore"):
        vals = np.power(builtins.complex(base) if exps.dtype.kind == "c" else float(base), exps)
    _check_grad_dtype(dt, requires_grad, "logspace")
    return place(vals, dt, device, requires_grad)



for _n in ("arange", "linspace", "logspace"):
    _public(_n, globals()[_n], method=False)
globals()["range"] = range_
__all__.append("range")
