"""``torchish.testing.make_tensor``: a tensor of values drawn uniformly from ``[low, high)`` as PyTorch's test
helper draws them (``randint`` for bools and integers, ``uniform_`` for floating and complex dtypes, the complex
ones on their real view), so a seed gives PyTorch's tensor; its defaults, clamping and errors."""
from __future__ import annotations

import math
import warnings

from . import _dtype

_UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
_INTEGRAL = ("int8", "int16", "int32", "int64") + _UNSIGNED
_FLOATING = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def _bounds(dt, low, high, lowest, highest, default_low, default_high):
    """``low``/``high`` defaulted, checked and clamped into ``[lowest, highest]`` (integers: both ceiled)."""
    low = default_low if low is None else low
    high = default_high if high is None else high
    if any(isinstance(v, float) and math.isnan(v) for v in (low, high)):
        raise ValueError(f"`low` and `high` cannot be NaN, but got low={low} and high={high}")
    if low == high and dt.name in _FLOATING:
        warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating or complex types is deprecated "
                      "since 2.1 and will be removed in 2.3. Use `torch.full(...)` instead.", FutureWarning,
                      stacklevel=4)
    elif low >= high:
        raise ValueError(f"`low` must be less than `high`, but got {low} >= {high}")
    elif high < lowest or low >= highest:
        raise ValueError(f"The value interval specified by `low` and `high` is [{low}, {high}), but {dt} only "
                         f"supports [{lowest}, {highest})")
    low, high = min(max(low, lowest), highest), min(max(high, lowest), highest)
    return (math.ceil(low), math.ceil(high)) if dt.name == "bool" or dt.name in _INTEGRAL else (low, high)


def make_tensor(*shape, dtype, device, low=None, high=None, requires_grad=False, noncontiguous=False,
                exclude_zero=False, memory_format=None):
    """A ``shape`` tensor of ``dtype`` on ``device`` with values uniform in ``[low, high)`` (PyTorch's defaults:
    bool [0, 2), unsigned [0, 10), signed [-9, 10), floating and complex [-9, 9))."""
    import torchish as lib
    dt = _dtype.as_dtype(dtype)
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    shape = tuple(shape)
    if noncontiguous and memory_format is not None:
        raise ValueError(f"The parameters `noncontiguous` and `memory_format` are mutually exclusive, but got "
                         f"noncontiguous={noncontiguous} and memory_format={memory_format}")
    if requires_grad and (dt.name == "bool" or dt.name in _INTEGRAL):
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral dtypes, but got dtype={dt}")
    noncontiguous = noncontiguous and math.prod(shape) > 1
    if noncontiguous:  # twice the last dim, every second value kept (from the second: an offset too)
        shape = (*shape[:-1], 2 * shape[-1])
    if dt.name == "bool":
        low, high = _bounds(dt, low, high, 0, 2, 0, 2)
        result = lib.randint(low, high, shape, device=device, dtype=dt)
    elif dt.name in _INTEGRAL:
        info = lib.iinfo(dt)
        # (PyTorch stops int64 one short of its max: randint's bounds are int64)
        low, high = _bounds(dt, low, high, info.min, info.max + (dt.name != "int64"), -9, 10)
        result = lib.randint(low, high, shape, device=device, dtype=dt)
    elif dt.name in _FLOATING or dt in _dtype.FLOAT8:
        info = lib.finfo(dt)
        low, high = _bounds(dt, low, high, info.min, info.max, -9, 9)
        real = dt.to_real() if dt.is_complex else dt if dt not in _dtype.FLOAT8 else _dtype.float32
        result = lib.empty(shape + ((2,) if dt.is_complex else ()), device=device, dtype=real)
        if high - low >= lib.finfo(real).max:  # (uniform_ needs high - low to be finite: halve the range, double)
            result.uniform_(low / 2, high / 2).mul_(2)
        else:
            result.uniform_(low, high)
        result = lib.view_as_complex(result) if dt.is_complex else result.to(dt)
    else:
        raise TypeError(f"The requested dtype '{dt}' is not supported by torch.testing.make_tensor(). To request "
                        "support, file an issue at: https://github.com/pytorch/pytorch/issues")
    if noncontiguous:
        result = result[..., 1::2]
    elif memory_format is not None:
        result = result.clone(memory_format=memory_format)
    if exclude_zero:
        result[result == 0] = 1 if dt.name == "bool" or dt.name in _INTEGRAL else lib.finfo(dt).tiny
    if dt.name in _FLOATING:
        result.requires_grad = requires_grad
    return result
